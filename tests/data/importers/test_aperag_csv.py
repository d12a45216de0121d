"""ApeRAG CSV files keep every character through import, export and import again: a cell holding a CR, a LF, a comma
or a quote is quoted whatever the file's line ending and whatever the Python (before 3.13 the csv module left a lone
CR unquoted under a "\\n" line terminator, and the export then read back with a row cut in two)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import QuestionRecord, read_jsonl
from ragretrieval.data.importers.aperag import SPREADSHEET, render_csv

CONTROLS = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]]


def invoke(*arguments):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == 0, result.output
    return result


def import_export(tmp_path, data: bytes, name: str) -> tuple[list[QuestionRecord], bytes]:
    source, questions, out = tmp_path / f"{name}.csv", tmp_path / f"{name}.jsonl", tmp_path / f"{name}-out.csv"
    source.write_bytes(data)
    invoke("questions", "import", source, "--format", "aperag-csv", "--out", questions)
    invoke("questions", "export", "--questions", questions, "--format", "aperag-csv", "--out", out)
    return read_jsonl(questions, QuestionRecord), out.read_bytes()


def test_a_lone_cr_in_an_lf_file_is_quoted_on_export(tmp_path):
    data = b'question_type,question_text,ground_truth\nFACTUAL,"a\rb",ok\n'
    first, exported = import_export(tmp_path, data, "lf")
    assert [q.text for q in first] == ["a\rb"]
    assert exported == data
    again, _ = import_export(tmp_path, exported, "again")
    assert [q.text for q in again] == ["a\rb"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_every_control_character_round_trips(tmp_path, newline):
    """At the start, inside and at the end of a cell (a leading tab or CR is a formula start: export writes it
    neutralised, and the second export equals the first)."""
    texts = [f"a{c}b" for c in CONTROLS] + [f"{c}x" for c in CONTROLS] + [f"x{c}" for c in CONTROLS]
    rows = [["question_type", "question_text", "ground_truth"]] + [["FACTUAL", f"q{i}", t] for i, t in
                                                                    enumerate(texts)]
    data = render_csv(rows, SPREADSHEET.model_copy(update={"newline": newline, "bom": False})).encode("utf-8")
    first, exported = import_export(tmp_path, data, "first")
    assert [q.ground_truth for q in first] == texts
    again, exported_again = import_export(tmp_path, exported, "again")
    assert [q.ground_truth for q in again] == [q.ground_truth for q in first]
    assert exported_again == exported


@pytest.mark.parametrize("cell", ["a\rb", "a\nb", "a\r\nb", "a,b", 'a"b', "\r", "\n"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_cells_that_need_quotes_are_quoted_in_both_line_endings(cell, newline):
    dialect = SPREADSHEET.model_copy(update={"newline": newline})
    assert render_csv([["x", cell]], dialect) == 'x,"' + cell.replace('"', '""') + '"' + newline
    assert render_csv([["x", "plain cell"]], dialect) == "x,plain cell" + newline
