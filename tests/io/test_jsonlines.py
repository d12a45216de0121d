"""The one JSON Lines reader (io/jsonlines.py) and its one byte-order-mark rule, through every reader that uses it:
datasets' files, answer files, trace files and the importers' line files."""

from __future__ import annotations

import json

import pytest

from ragretrieval.answers.generators import GeneratorOptions, build_generator
from ragretrieval.answers.generators.base import GeneratorError
from ragretrieval.data.dataset import DatasetError, DocumentRecord, read_numbered_jsonl
from ragretrieval.data.importers.common import numbered_lines as importer_lines
from ragretrieval.data.importers.traces.files import json_documents
from ragretrieval.errors import MissingInputError
from ragretrieval.io.jsonlines import BOM, JsonLinesError, numbered_lines, numbered_records, split_lines


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_a_bom_before_the_first_line_is_dropped_and_blank_lines_keep_their_numbers(tmp_path):
    path = write(tmp_path / "a.jsonl", BOM + b'{"a": 1}\r\n\n   \n{"a": 2}\n')
    assert list(numbered_records(path)) == [(1, {"a": 1}), (4, {"a": 2})]
    assert list(numbered_lines(path)) == [(1, '{"a": 1}'), (4, '{"a": 2}')]


def test_a_bom_anywhere_else_is_part_of_its_line_and_refused_by_number(tmp_path):
    path = write(tmp_path / "a.jsonl", b'{"a": 1}\n' + BOM + b'{"a": 2}\n')
    with pytest.raises(JsonLinesError, match=r"a.jsonl:2: invalid JSON"):
        list(numbered_records(path))


def test_lines_end_at_newline_only_so_a_json_string_may_hold_u2028_and_form_feeds(tmp_path):
    record = {"text": "one\u2028two\x0cthree\x1cfour\u0085five"}
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    path = write(tmp_path / "a.jsonl", data)
    assert list(numbered_records(path)) == [(1, record)]
    assert list(numbered_records(path, data=data)) == [(1, record)]  # bytes already read: the same lines
    assert list(split_lines(b"a\nb")) == [b"a\n", b"b"] and list(split_lines(b"")) == []


@pytest.mark.parametrize("data, message", [
    (b'{"a": 1}\n\xff\xfe{"a": 2}\n', r"a.jsonl:2: not UTF-8 text \(bad byte at offset 0\)"),
    (b'{"a": 1}\n{"a": \n', r"a.jsonl:2: invalid JSON: Expecting value \(column 7\)"),
    (BOM + BOM + b'{"a": 1}\n', r"a.jsonl:1: invalid JSON"),  # one mark is dropped, not two
])
def test_bad_lines_are_named(tmp_path, data, message):
    with pytest.raises(JsonLinesError, match=message):
        list(numbered_records(write(tmp_path / "a.jsonl", data)))


def test_empty_and_missing_files(tmp_path):
    assert list(numbered_records(write(tmp_path / "a.jsonl", b""))) == []
    assert list(numbered_records(write(tmp_path / "b.jsonl", BOM))) == []
    with pytest.raises(MissingInputError, match="nope.jsonl: file not found"):
        list(numbered_records(tmp_path / "nope.jsonl"))
    with pytest.raises(MissingInputError, match="file not found"):
        list(numbered_records(tmp_path))  # a folder is not a file


def test_every_reader_follows_the_same_rule(tmp_path):
    """The dataset's files, the answer-file generator, trace files and the importers' line files read the same
    bytes the same way, and each names the line in its own error class."""
    good = BOM + b'{"id": "d1", "title": "", "text": "x\xe2\x80\xa8y"}\n'
    bad = b'{"id": "d1", "title": "", "text": "x"}\n' + BOM + b'{"id": "d2", "title": "", "text": "y"}\n'
    path = write(tmp_path / "good.jsonl", good)
    assert [(n, r.id, r.text) for n, r in read_numbered_jsonl(path, DocumentRecord)] == [(1, "d1", "x\u2028y")]
    assert [where for where, _ in json_documents(path)] == [f"{path}:1"]
    assert [n for n, _ in importer_lines(path)] == [1]
    answers = write(tmp_path / "answers.jsonl", BOM + b'{"question_id": "q1", "answer": "a\xe2\x80\xa8b"}\n')
    generator = build_generator(f"file:{answers}", GeneratorOptions())
    assert len(generator.answers) + generator.unmatched == 1  # one record, read (matched to questions later)
    worse = write(tmp_path / "bad.jsonl", bad)
    for read, error in ((lambda: read_numbered_jsonl(worse, DocumentRecord), DatasetError),
                        (lambda: list(json_documents(worse)), DatasetError),
                        (lambda: build_generator(f"file:{worse}", GeneratorOptions()), GeneratorError)):
        with pytest.raises(error, match="bad.jsonl:2: invalid JSON"):
            read()
