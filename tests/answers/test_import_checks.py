"""Imports check every value the scoring reads when they import, naming file, question and field:
the legal benchmark's values (amounts, dates, date ranges, evidence, quotes), its own folder layout (``schema.json``
beside ``questions/``), RAG-IFEval conditions of the wrong shape, and question sets of nothing. A dataset written
before these checks (0.2.0 imported such values) is refused by ``answer`` before any answer is asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.runs.history import RunHistory

TRANSCRIPT = Path(__file__).parent / "legal_fixture" / "transcript.md"
GOOD = {"id": "q1", "type": "fact_exact", "question": "一共给了多少钱？", "expected": {"amount_total": 42000},
        "required_evidence": [{"page": 2, "must_include": "42000", "is_critical": True}],
        "scoring": {"numeric_exact": True, "citation_required": True}}
SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "our own test schema", "type": "object",
          "required": ["questions"], "properties": {"questions": {"type": "array"}}}


def invoke(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def benchmark(tmp_path: Path, *questions: dict, kind: str = "fact_exact") -> Path:
    """The benchmark's own layout: ``benchmark/schema.json`` (a JSON Schema) and ``benchmark/questions/q12.json``."""
    folder = tmp_path / "benchmark"
    (folder / "questions").mkdir(parents=True, exist_ok=True)
    (folder / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    (folder / "questions" / "q12.json").write_text(json.dumps(
        {"benchmark_type": kind, "document": "transcript.md", "questions": list(questions)}, ensure_ascii=False),
        encoding="utf-8")
    return folder


def import_legal(folder: Path, out: Path, *extra):
    return invoke("dataset", "import", "--format", "legal-rag", folder, "--source", TRANSCRIPT, "--out", out, *extra)


def test_the_benchmark_folder_layout_imports_and_its_schema_is_skipped(tmp_path):
    folder = benchmark(tmp_path, GOOD)
    result = import_legal(folder, tmp_path / "ds")
    assert result.exit_code == 0, result.output
    dataset = load_dataset(tmp_path / "ds")
    assert [q.id for q in dataset.questions] == ["q1"]
    assert dataset.manifest.builder["schemas_skipped"] == ["schema.json"]
    assert "1 questions, 0 bad records skipped" in result.stderr
    (folder / "schema.json").write_text('{"title": "neither a schema nor questions"}', encoding="utf-8")
    refused = import_legal(folder, tmp_path / "ds2")
    assert refused.exit_code == 1 and "schema.json: expected an object with a 'questions' list" in refused.output
    assert not (tmp_path / "ds2").exists()


BAD_VALUES = [  # (the question's fields replacing GOOD's, the field and problem named)
    ({"expected": {"amount_total": "many"}}, 'expected.amount_total: must be a number, got "many"'),
    ({"expected": {"amount_total": None}}, "expected.amount_total: must be a number, got null"),
    ({"expected": {"amount_total": [42000]}}, "expected.amount_total: must be a number, got [42000]"),
    ({"expected": {"amount_total": True}}, "expected.amount_total: must be a number, got true"),
    ({"expected": {"amount_total": "42000"}}, 'expected.amount_total: must be a number, got "42000"'),
    ({"expected": {"amount_total": -1}}, "expected.amount_total: must be at least 0, got -1"),
    ({"expected": {"amount_total": 1e400}}, "expected.amount_total: must be a finite number, got Infinity"),
    ({"expected": {"amount_breakdown": "x"}}, 'expected.amount_breakdown: must be a list, got "x"'),
    ({"expected": {"amount_breakdown": []}}, "expected.amount_breakdown: must not be empty, got []"),
    ({"expected": {"amount_breakdown": [{"date": "2020-08-01"}]}}, "expected.amount_breakdown[0].amount: missing"),
    ({"expected": {"amount_breakdown": [30000, {"amount": "x"}]}},
     'expected.amount_breakdown[1].amount: must be a number, got "x"'),
    ({"expected": {}}, "expected: names no field to check"),
    ({"expected": None}, "expected: must be an object, got null"),
    ({"expected": {"date": "2020/08/30"}}, 'expected.date: must be a date written YYYY-MM-DD'),
    ({"expected": {"date": "2020-02-30"}}, 'expected.date: must be a date written YYYY-MM-DD'),
    ({"expected": {"date": 20200830}}, "expected.date: must be text, got 20200830"),
    ({"expected": {"date_range": {"start": "2020-08-01"}}}, "expected.date_range.end: missing"),
    ({"expected": {"date_range": {"start": "2020-08-15", "end": "2020-08-01"}}},
     "expected.date_range: start 2020-08-15 is after end 2020-08-01"),
    ({"expected": {"date_range": "2020-08"}}, 'expected.date_range: must be an object, got "2020-08"'),
    ({"expected": {"count": 2.5}}, "expected.count: must be a whole number, got 2.5"),
    ({"expected": {"count": -3}}, "expected.count: must be at least 0, got -3"),
    ({"expected": {"boolean_answer": "yes"}}, 'expected.boolean_answer: must be true or false, got "yes"'),
    ({"expected": {"entity": ""}}, "expected.entity: has no letter or digit to look for"),
    ({"expected": {"colour": "red"}}, "expected.colour: unknown field (known: amount_total, "),
    ({"required_evidence": []}, "required_evidence: empty: scoring.citation_required is true"),
    ({"required_evidence": [{"page": 2}]}, "required_evidence[0].must_include: missing"),
    ({"required_evidence": [{"must_include": "。。"}]}, "required_evidence[0].must_include: has no letter or digit"),
    ({"required_evidence": "42000元"}, 'required_evidence: must be a list, got "42000元"'),
    ({"scoring": {"citation_required": "yes"}}, 'scoring.citation_required: must be true or false, got "yes"'),
]


@pytest.mark.parametrize("change, named", BAD_VALUES, ids=[named.split(":")[0] + str(i)
                                                           for i, (_, named) in enumerate(BAD_VALUES)])
def test_each_value_the_formulas_read_is_checked_when_importing(tmp_path, change, named):
    folder = benchmark(tmp_path, GOOD, {**GOOD, "id": "q12", **change})
    result = import_legal(folder, tmp_path / "ds")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    where = f"skipped: {folder / 'questions' / 'q12.json'}: question q12: "
    assert len(skipped) == 1 and skipped[0].startswith(where + named), skipped
    assert [q.id for q in load_dataset(tmp_path / "ds").questions] == ["q1"]
    strict = import_legal(folder, tmp_path / "strict", "--strict")
    assert strict.exit_code == 1 and "question q12: " + named in strict.output and "Traceback" not in strict.output
    assert not (tmp_path / "strict").exists()


@pytest.mark.parametrize("kind, item, named", [
    ("evidence_set", {"required_evidence": []}, "required_evidence: empty: evidence_set scores recall"),
    ("evidence_set", {"required_evidence": [{"must_include": "42000"}], "scoring": {"evidence_recall_min": 1.5}},
     "scoring.evidence_recall_min: must be a count of key points (a whole number >= 1, e.g. 4) or a share (a "
     "number with a decimal point from 0 to 1, e.g. 0.8), got 1.5"),
    ("evidence_set", {"required_evidence": [{"must_include": "42000"}], "expected": {"key_points": "退钱"}},
     'expected.key_points: must be a list, got "退钱"'),
    ("conflict_gap", {"required_quote": "都忘记了"}, "should_abstain: missing"),
    ("conflict_gap", {"should_abstain": "yes", "required_quote": "都忘记了"},
     'should_abstain: must be true or false, got "yes"'),
    ("conflict_gap", {"should_abstain": True}, "required_quote: missing (and no additional_quotes)"),
    ("conflict_gap", {"should_abstain": True, "additional_quotes": [None]}, "additional_quotes[0]: must be text"),
])
def test_the_other_types_are_checked_too(tmp_path, kind, item, named):
    folder = benchmark(tmp_path, {"id": "q12", "question": "问？", **item}, kind=kind)
    result = import_legal(folder, tmp_path / "ds", "--strict")
    assert result.exit_code == 1 and f"question q12: {named}" in result.output, result.output


def test_answer_refuses_a_value_imported_before_the_checks(tmp_path):
    """A dataset 0.2.0 imported with ``"amount_total": "many"``: `answer` names question and field, asks nothing and
    stores nothing (it died with a traceback)."""
    assert import_legal(benchmark(tmp_path, GOOD), tmp_path / "ds").exit_code == 0
    questions = tmp_path / "ds" / "questions.jsonl"
    record = json.loads(questions.read_text(encoding="utf-8"))
    record["expect"]["fact_exact"]["expected"]["amount_total"] = "many"
    questions.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"question_id": "q1", "answer": "一共42000元 [0]"}) + "\n", encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    result = invoke("answer", "--dataset", tmp_path / "ds", "--contexts", "given", "--generator", f"file:{answers}",
                    "--runs-db", store, "--no-progress")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.splitlines()[-1] == ("Error: question 'q1': fact_exact: expected.amount_total: must be a "
                                              'number, got "many"')
    assert RunHistory(store).list() == []


def rag_ifeval(tmp_path: Path, samples: list) -> list[str]:
    (tmp_path / "documents.jsonl").write_text('{"id": "d1", "contents": "Rice\\nCook rice for 20 minutes."}\n',
                                              encoding="utf-8")
    (tmp_path / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    return ["dataset", "import", "--format", "rag-ifeval", "--documents", tmp_path / "documents.jsonl", "--samples",
            tmp_path / "samples.json", "--out", tmp_path / "ds"]


@pytest.mark.parametrize("expect, named", [
    ({"include": "not a list"}, 'include: expected a non-empty list of phrases (a list inside it: alternatives), '
                                'got "not a list"'),
    ({"include": [""]}, 'include[0]: has no letter or digit to look for, got ""'),
    ({"include": [["20", 20]]}, "include[0][1]: must be text, got 20"),
    ({"exclude": None}, "exclude: expected a non-empty list of phrases"),
    ({"refuse": "true"}, 'refuse: expected true or false, got "true"'),
    ({"safe": 1}, "safe: expected true or false, got 1"),
    ({"cite": []}, "cite: an empty list"),
])
def test_rag_ifeval_conditions_of_the_wrong_shape_name_the_sample(tmp_path, expect, named):
    good = {"id": "1", "question": "How long?", "context": ["d1"], "expect": {"include": ["20"]}}
    args = rag_ifeval(tmp_path, [good, {"id": "7", "question": "Rice?", "context": ["d1"], "expect": expect}])
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert f"skipped: {tmp_path / 'samples.json'}: record 1 (id '7'): field 'expect': {named}" in result.stderr
    assert [q.id for q in load_dataset(tmp_path / "ds").questions] == ["1"]


def test_answer_names_the_rag_ifeval_question_it_cannot_check(tmp_path):
    args = rag_ifeval(tmp_path, [{"id": "1", "question": "How long?", "context": ["d1"], "expect": {"include": ["20"]}}])
    assert invoke(*args).exit_code == 0
    questions = tmp_path / "ds" / "questions.jsonl"
    record = json.loads(questions.read_text(encoding="utf-8"))
    record["expect"]["include"] = "not a list"  # as 0.2.0 imported it
    questions.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = invoke("answer", "--dataset", tmp_path / "ds", "--contexts", "given", "--generator", "extractive",
                    "--no-save", "--no-progress")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == ("Error: question '1': include: expected a non-empty list of phrases (a "
                                              'list inside it: alternatives), got "not a list"')


@pytest.mark.parametrize("name, text, fmt", [
    ("header.csv", "\ufeffquestion_type,question_text,ground_truth\r\n", "aperag-csv"),
    ("blank-rows.csv", "question_type,question_text,ground_truth\n,,\n", "aperag-csv"),
    ("empty.json", "[]", "aperag-json"),
    ("wrapped.json", '{"questions": []}', "aperag-json"),
])
def test_a_question_set_of_nothing_is_not_imported(tmp_path, name, text, fmt):
    (tmp_path / name).write_text(text, encoding="utf-8")
    out = tmp_path / "questions.jsonl"
    result = invoke("questions", "import", tmp_path / name, "--format", fmt, "--out", out)
    assert result.exit_code == 1 and "nothing to import" in result.output and f"{tmp_path / name}: no question" \
        in result.output
    assert not out.exists()


def test_an_empty_agent_file_and_an_empty_sample_array_are_not_imported(tmp_path, demo_dataset):
    (tmp_path / "eval.jsonl").write_text("\n\n", encoding="utf-8")
    result = invoke("questions", "import", tmp_path / "eval.jsonl", "--dataset", demo_dataset, "--out",
                    tmp_path / "q.jsonl")
    assert result.exit_code == 1 and "no record (an empty or blank file" in result.output
    assert not (tmp_path / "q.jsonl").exists()
    refused = invoke(*rag_ifeval(tmp_path, []))
    assert refused.exit_code == 1 and "no usable question" in refused.output and not (tmp_path / "ds").exists()


def test_answer_on_no_question_exits_non_zero_and_stores_nothing(tmp_path, demo_dataset):
    empty = tmp_path / "none.jsonl"
    empty.write_text("", encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    result = invoke("answer", "--dataset", demo_dataset, "--questions", empty, "--generator", "extractive",
                    "--retriever", "bm25", "--runs-db", store, "--no-progress")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (f"Error: {empty}: no question to answer (the question set is empty); "
                                              "nothing is run or stored")
    assert RunHistory(store).list() == []
