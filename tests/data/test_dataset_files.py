"""Dataset files: round trip, the errors a reader reports (file:line: field), --force, atomic writes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.corpus import Document, corpus_fingerprint
from ragretrieval.data.dataset import (
    DatasetError,
    Manifest,
    Provenance,
    QuestionRecord,
    RelevantDocument,
    load_dataset,
    write_dataset,
)
from ragretrieval.io.atomic import atomic_writer

DOCS = (
    Document("soup/紫菜蛋花汤.md", "紫菜蛋花汤的做法", "# 紫菜蛋花汤的做法\n\n紫菜泡开，淋入蛋液。\n"),
    Document("staple/蛋炒饭.md", "蛋炒饭的做法", "# 蛋炒饭的做法\n\n隔夜米饭炒散。\n"),
)
HAND = Provenance(generator="hand")


def manifest_for(documents, n_questions) -> Manifest:
    return Manifest(corpus_fingerprint=corpus_fingerprint(documents), n_documents=len(documents),
                    n_questions=n_questions, builder={"generators": ["hand"]})


def question(qid: str, doc_id: str, spans=()) -> QuestionRecord:
    return QuestionRecord(id=qid, text=f"问题 {qid}", provenance=HAND,
                          relevant=[RelevantDocument(doc_id=doc_id, grade=2, spans=list(spans))])


@pytest.fixture
def dataset(tmp_path):
    questions = [question("q1", "soup/紫菜蛋花汤.md", [(0, 11)]), question("q2", "staple/蛋炒饭.md")]
    write_dataset(tmp_path / "ds", DOCS, questions, manifest_for(DOCS, 2))
    return tmp_path / "ds"


def test_round_trip(dataset):
    loaded = load_dataset(dataset)
    assert loaded.documents == DOCS
    assert [q.model_dump() for q in loaded.questions] == [
        {"id": "q1", "text": "问题 q1", "relevant": [{"doc_id": "soup/紫菜蛋花汤.md", "grade": 2, "spans": [(0, 11)]}],
         "provenance": {"generator": "hand", "template": None}, "metadata": {}},
        {"id": "q2", "text": "问题 q2", "relevant": [{"doc_id": "staple/蛋炒饭.md", "grade": 2, "spans": []}],
         "provenance": {"generator": "hand", "template": None}, "metadata": {}},
    ]
    assert loaded.fingerprint == corpus_fingerprint(DOCS)
    assert loaded.manifest.format_version == 1
    assert sorted(p.name for p in dataset.iterdir()) == ["corpus.jsonl", "manifest.json", "questions.jsonl"]
    first_line = (dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first_line) == {"id": "soup/紫菜蛋花汤.md", "title": "紫菜蛋花汤的做法", "text": DOCS[0].text}


def test_cli_build_round_trips_the_demo_corpus(demo_dataset, demo_corpus):
    from ragretrieval.data.corpus import load_corpus

    loaded = load_dataset(demo_dataset)
    assert loaded.documents == load_corpus(demo_corpus).documents
    assert loaded.manifest.n_documents == 31 and loaded.manifest.n_questions == 30
    assert loaded.manifest.builder == {"generators": ["filename"], "template": "如何做{name}？", "strict": False}


def replace_line(path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


BAD_RECORDS = [
    ('{"id": "q2", "text": "x", "relevant": [{"doc_id": "staple/蛋炒饭.md", "grade": "high"}], '
     '"provenance": {"generator": "hand"}}',
     "field 'relevant.0.grade': Input should be a valid integer, unable to parse string as an integer"),
    ('{"id": "q2", "text": "x", "relevant": [], "provenance": {"generator": "hand"}}',
     "field 'record': a question needs relevant documents ('relevant'), checks ('expect') or a reference answer "
     "('ground_truth'): with none of them nothing can be scored"),
    ('{"id": "q2", "text": "x", "relevant": [{"doc_id": "staple/蛋炒饭.md"}]}',
     "field 'provenance': Field required"),
    ('{"id": "q2", "text": "x", "relevant": [{"doc_id": "staple/蛋炒饭.md"}], "provenance": {"generator": "hand"}, '
     '"answer": "y"}',
     "field 'answer': Extra inputs are not permitted"),
    ('{"id": "q2", "text": "x", "relevant": [{"doc_id": "staple/蛋炒饭.md", "spans": [[5, 5]]}], '
     '"provenance": {"generator": "hand"}}',
     "field 'relevant.0.spans': span [5, 5) must satisfy 0 <= start < end"),
]


@pytest.mark.parametrize("record, message", BAD_RECORDS)
def test_a_bad_record_names_file_line_and_field(dataset, record, message):
    path = dataset / "questions.jsonl"
    replace_line(path, 2, record)
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == f"{path}:2: {message}"


def test_an_invalid_json_line_names_file_and_line(dataset):
    path = dataset / "questions.jsonl"
    replace_line(path, 2, '{"id": "q2", "text": ')
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == f"{path}:2: invalid JSON: EOF while parsing a value at line 1 column 21"


def test_blank_lines_are_allowed_and_line_numbers_count_them(dataset):
    path = dataset / "questions.jsonl"
    path.write_text("\n" + path.read_text(encoding="utf-8") + "\n\n{}\n", encoding="utf-8")
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == f"{path}:6: field 'id': Field required"


def test_a_question_about_a_missing_document_names_both(dataset):
    path = dataset / "questions.jsonl"
    replace_line(path, 2, question("q2", "staple/炒面.md").model_dump_json())
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == (f"{path}: question 'q2' refers to document 'staple/炒面.md', "
                                "which is not in the corpus")


def test_a_span_past_the_end_of_its_document_is_an_error(dataset):
    path = dataset / "questions.jsonl"
    length = len(DOCS[1].text)
    replace_line(path, 2, question("q2", "staple/蛋炒饭.md", [(3, length + 1)]).model_dump_json())
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == (f"{path}: question 'q2': span [3, {length + 1}) lies past the end of "
                                f"'staple/蛋炒饭.md' ({length} characters)")


def test_a_question_id_used_twice_is_an_error(dataset):
    path = dataset / "questions.jsonl"
    replace_line(path, 2, question("q1", "staple/蛋炒饭.md").model_dump_json())
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == f"{path}: question id 'q1' is used twice"


def test_an_edited_corpus_no_longer_matches_the_manifest(dataset):
    path = dataset / "corpus.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("隔夜米饭", "新煮的米饭"), encoding="utf-8")
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == (f"{path}: contents do not match the fingerprint in manifest.json "
                                "(was corpus.jsonl edited?); rebuild the dataset with `ragretrieval dataset build`")


def test_an_unknown_format_version_is_refused(dataset):
    path = dataset / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**manifest, "format_version": 2}), encoding="utf-8")
    with pytest.raises(DatasetError) as error:
        load_dataset(dataset)
    assert str(error.value) == (f"{path}: not a dataset manifest: field 'format_version': format_version 2 is not "
                                "supported "
                                "(this ragretrieval reads 1)")


def test_a_folder_without_manifest_is_not_a_dataset(tmp_path):
    with pytest.raises(DatasetError) as error:
        load_dataset(tmp_path)
    assert str(error.value) == (f"{tmp_path}: not a dataset folder (manifest.json not found); "
                                "build one with `ragretrieval dataset build`")


def test_a_hand_written_question_set_replaces_the_built_one(dataset, tmp_path):
    hand = tmp_path / "hand.jsonl"
    hand.write_text(
        '{"id": "h1", "text": "蛋花汤怎么不散？", "relevant": [{"doc_id": "soup/紫菜蛋花汤.md", "grade": 2, '
        '"spans": [[13, 23]]}], "provenance": {"generator": "hand", "author": "test"}}\n', encoding="utf-8")
    loaded = load_dataset(dataset, questions_file=hand)
    assert [(q.id, q.relevant[0].spans, q.provenance.model_dump()) for q in loaded.questions] == [
        ("h1", [(13, 23)], {"generator": "hand", "template": None, "author": "test"}),
    ]


def test_build_refuses_to_overwrite_without_force(demo_corpus, dataset):
    before = {p.name: p.read_bytes() for p in dataset.iterdir()}
    runner = CliRunner()
    result = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(dataset)])
    assert result.exit_code == 2
    assert result.stderr.endswith(f"Error: {dataset}: already holds a dataset (corpus.jsonl, questions.jsonl, "
                                  "manifest.json); replace it with --force\n")
    assert {p.name: p.read_bytes() for p in dataset.iterdir()} == before

    result = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(dataset), "--force"])
    assert result.exit_code == 0, result.output
    assert load_dataset(dataset).manifest.n_documents == 31


def test_building_the_same_dataset_again_is_a_no_op_with_a_note(demo_corpus, tmp_path):
    """The same corpus and settings into a folder holding that build: nothing written (hand edits to its questions
    kept), exit 0, one note; other settings are refused as ever."""
    out = tmp_path / "ds"
    runner = CliRunner()
    assert runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(out)]).exit_code == 0
    questions = out / "questions.jsonl"
    questions.write_text(questions.read_text(encoding="utf-8"), encoding="utf-8")  # a hand-edited set, same content
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    again = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert f"note: {out}: already holds this build (the same corpus and settings); nothing written" in again.stderr
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()} == before
    other = runner.invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(out), "--template", "{name}?"])
    assert other.exit_code == 2 and "already holds a dataset" in other.stderr


def test_atomic_writer_keeps_the_old_file_when_interrupted(tmp_path):
    target = tmp_path / "questions.jsonl"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_writer(target) as f:
            f.write("new line 1\n")
            raise RuntimeError("disk full")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["questions.jsonl"]


class InterruptedWhileWriting(tuple):
    """Records whose writing is interrupted (Ctrl-C) at item `position`: the first pass over them (the consistency
    check) runs through, the second (the write) stops part-way."""

    def __new__(cls, items, position: int):
        self = super().__new__(cls, items)
        self.position, self.passes = position, 0
        return self

    def __iter__(self):
        self.passes += 1
        for position, item in enumerate(super().__iter__()):
            if self.passes == 2 and position == self.position:
                raise KeyboardInterrupt
            yield item


def test_an_interrupted_rebuild_keeps_old_files_and_leaves_no_temp_files(dataset):
    old_corpus = (dataset / "corpus.jsonl").read_bytes()
    documents = DOCS + (Document("staple/炒面.md", "炒面", "面条。\n"),)
    manifest = manifest_for(documents, 1)
    more = InterruptedWhileWriting(documents, position=2)
    with pytest.raises(KeyboardInterrupt):
        write_dataset(dataset, more, [question("q1", "staple/炒面.md")], manifest, force=True)
    assert more.passes == 2  # the check ran through; the write of corpus.jsonl was interrupted
    assert (dataset / "corpus.jsonl").read_bytes() == old_corpus
    # the manifest goes first, so the half-replaced folder is not mistaken for a complete dataset
    assert sorted(p.name for p in dataset.iterdir()) == ["corpus.jsonl", "questions.jsonl"]
    with pytest.raises(DatasetError, match="not a dataset folder"):
        load_dataset(dataset)


def test_an_interrupted_first_build_leaves_nothing_that_looks_like_a_dataset(tmp_path):
    target = tmp_path / "fresh"
    questions = InterruptedWhileWriting([question("q1", "soup/紫菜蛋花汤.md"), question("q2", "staple/蛋炒饭.md")],
                                        position=1)
    with pytest.raises(KeyboardInterrupt):
        write_dataset(target, DOCS, questions, manifest_for(DOCS, 2))
    assert sorted(p.name for p in target.iterdir()) == ["corpus.jsonl"]  # no questions.jsonl, no temp file
