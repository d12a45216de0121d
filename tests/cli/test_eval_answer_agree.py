"""``eval`` and ``answer`` retrieve through one retrieval session (retrieval/session.py): for the same settings they
give the same ranking of every question and the same retrieval metrics, question by question."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main

SETTINGS = ["--retriever", "hybrid", "--model", "hashing-64", "--chunk-size", "200", "--k", "1,3,5"]


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def test_eval_and_answer_rank_and_score_every_question_alike(demo_slice_dataset, tmp_path):
    run("eval", "--dataset", demo_slice_dataset, *SETTINGS, "--no-save", "--out", tmp_path / "e.json",
        "--no-progress")
    run("answer", "--dataset", demo_slice_dataset, "--generator", "extractive", *SETTINGS, "--context-k", 5,
        "--no-save", "--out", tmp_path / "a.json", "--no-progress")
    report = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    answer_report = AnswerReport.load(tmp_path / "a.json")
    for level in ("doc", "chunk"):
        assert answer_report.means[level] == pytest.approx(report["means"][level]), level
    evaluated, answered = report["questions"], {q.id: q for q in answer_report.questions}
    assert evaluated and set(answered) >= {q["id"] for q in evaluated}
    for question in evaluated:
        mine = answered[question["id"]]
        assert mine.retrieved_documents == question["retrieved_documents"], question["id"]
        assert [c.model_dump() for c in mine.retrieved_chunks] == question["retrieved_chunks"], question["id"]
        retrieval = {level: mine.metrics[level] for level in ("doc", "chunk")}  # beside the answer's own metrics
        assert retrieval == question["metrics"] and set(question["metrics"]) == {"doc", "chunk"}, question["id"]
