"""The checks' aggregates are named apart from the judges of the same idea: ``checks_score``, ``checks_correctness``
and ``checks_safety`` (a ``correctness`` or ``safety`` judge, and score5's score, keep their own names). A run stored
before, under ``score``, ``correctness`` and ``safety``, reads under today's names: from its file, from the runs
history (the report and the index's means), and in ``runs compare`` beside a new run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from ragretrieval.answers.checks import question_values
from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.runs.history import RunHistory

OLD = {"checks_score": "score", "checks_correctness": "correctness", "checks_safety": "safety"}


def test_a_question_s_aggregates_carry_the_checks_prefix():
    values = question_values({"include": 1.0, "exclude": 0.0, "refuse": 1.0})
    assert values["checks_correctness"] == 0.5 and values["checks_safety"] == 1.0 and values["total"] == 2 / 3
    assert values["checks_score"] == 2 / 3
    assert not {"score", "correctness", "safety"} & set(values)


def _old(values: dict) -> dict:
    return {OLD.get(name, name): value for name, value in values.items()}


def as_version_1(report: dict) -> dict:
    """`report` (JSON) as ragretrieval wrote it before the aggregates were renamed."""
    old = {**report, "report_version": 1}
    for field in ("means", "intervals", "counts"):
        old[field] = {**report[field], "answer": _old(report[field]["answer"])}
    old["by_type"] = {kind: _old(means) for kind, means in report["by_type"].items()}
    old["questions"] = [{**q, "metrics": {**q["metrics"], "answer": _old(q["metrics"]["answer"])}}
                        for q in report["questions"]]
    return old


@pytest.fixture(scope="module")
def new_report(rag_ifeval_like, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("names") / "answers.json"
    result = CliRunner().invoke(main, ["answer", "--dataset", str(rag_ifeval_like), "--contexts", "given",
                                       "--generator", "extractive", "--no-save", "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert {"checks_score", "checks_correctness", "checks_safety"} <= set(report["means"]["answer"])
    assert not {"score", "correctness", "safety"} & set(report["means"]["answer"])
    return report


@pytest.fixture(scope="module")
def rag_ifeval_like(tmp_path_factory):
    """A dataset whose questions have correctness and safety conditions (include, refuse)."""
    folder = tmp_path_factory.mktemp("ds")
    (folder / "documents.jsonl").write_text("".join(
        json.dumps({"id": f"d{i}", "contents": f"Document {i}\nSteam the fish {i} minutes."}) + "\n"
        for i in range(3)), encoding="utf-8")
    samples = [{"id": f"q{i}", "question": f"How long is fish {i} steamed?", "context": ["d0", "d1", "d2"],
                "expect": {"include": [f"{i} minutes"], "refuse": False}} for i in range(4)]
    (folder / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    result = CliRunner().invoke(main, ["dataset", "import", "--format", "rag-ifeval", "--documents",
                                       str(folder / "documents.jsonl"), "--samples", str(folder / "samples.json"),
                                       "--out", str(folder / "ds")])
    assert result.exit_code == 0, result.output
    return folder / "ds"


def test_a_version_1_report_file_reads_under_today_s_names(new_report, tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(as_version_1(new_report)), encoding="utf-8")
    old = AnswerReport.load(path)
    new = AnswerReport.model_validate(new_report)
    assert old.report_version == new.report_version == 2
    assert old.means == new.means and old.counts == new.counts and old.by_type == new.by_type
    assert [q.metrics for q in old.questions] == [q.metrics for q in new.questions]


def test_a_run_stored_under_the_former_names_reads_and_compares_under_today_s(new_report, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with RunHistory(url) as history:
        old_id = history.save(AnswerReport.model_validate(new_report), name="before")
        new_id = history.save(AnswerReport.model_validate(new_report), name="after")
    old = as_version_1(new_report)
    with create_engine(url).begin() as conn:  # the run as an older ragretrieval stored it
        conn.execute(text("UPDATE rr_run_reports SET report = :r WHERE run_id = :id"),
                     {"r": json.dumps(old), "id": old_id})
        conn.execute(text("UPDATE rr_runs SET means = :m WHERE id = :id"), {"m": json.dumps(old["means"]), "id": old_id})
    with RunHistory(url) as history:
        assert history.get(old_id).report.means["answer"] == history.get(new_id).report.means["answer"]
        listed = {run.id: run.means["answer"] for run in history.list()}
        assert "checks_score" in listed[old_id] and "score" not in listed[old_id]
    result = CliRunner(env={"RAGRETRIEVAL_RUNS_URL": url}).invoke(main, ["runs", "compare", old_id, new_id])
    assert result.exit_code == 0, result.output
    assert "checks_score" in result.output and "checks_correctness" in result.output
