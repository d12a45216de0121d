"""The legal benchmark's later format writes ``scoring.evidence_recall_min`` as a count of key points (JSON ``4``)
where its first version wrote a share (JSON ``0.8``): both import, the file's own number type tells them apart (``1``
is a count, ``1.0`` a share), a count scores as "at least N of the key points recall counts found", and anything
else is refused naming the question."""

from __future__ import annotations

import json

import pytest

from ragretrieval.answers.checks.legal import LegalQuestion, LegalSample, score_legal
from ragretrieval.data.dataset import load_dataset

from .test_import_checks import benchmark, import_legal

EVIDENCE = [{"page": 2, "must_include": "42000", "is_critical": True},
            {"page": 3, "must_include": "承诺把钱退回来", "is_critical": True},
            {"page": 3, "must_include": "办不了", "is_critical": False}]  # recall counts the two critical ones


def question(recall_min, qid="q12") -> dict:
    return {"id": qid, "type": "evidence_set", "question": "有哪些证据？", "required_evidence": EVIDENCE,
            "scoring": {"evidence_recall_min": recall_min, "evidence_precision_min": 0.7}}


def test_a_count_and_a_share_both_import_and_keep_their_form(tmp_path):
    folder = benchmark(tmp_path, question(2, "count2"), question(1, "count1"), question(1.0, "share1"),
                       question(0.8, "share08"), question(0.0, "share0"), kind="evidence_set")
    result = import_legal(folder, tmp_path / "ds", "--strict")
    assert result.exit_code == 0, result.output
    stored = {q.id: q.expect["evidence_set"]["scoring"]["evidence_recall_min"]
              for q in load_dataset(tmp_path / "ds").questions}
    assert stored == {"count2": 2, "count1": 1, "share1": 1.0, "share08": 0.8, "share0": 0.0}
    assert [type(stored[k]) for k in ("count2", "count1", "share1")] == [int, int, float]
    lines = (tmp_path / "ds" / "questions.jsonl").read_text(encoding="utf-8")
    assert '"evidence_recall_min":1.0' in lines.replace(" ", "") and '"evidence_recall_min":1,' in \
        lines.replace(" ", "")


@pytest.mark.parametrize("value, named", [
    (2.5, "must be a count of key points (a whole number >= 1, e.g. 4) or a share (a number with a decimal point "
          "from 0 to 1, e.g. 0.8), got 2.5"),
    (-1, "must be a count of key points"), (0, "must be a count of key points"), (True, "got true"),
    (1.5, "got 1.5"), ("0.8", 'got "0.8"'), (None, "got null"),
    (3, "scoring.evidence_recall_min: asks for 3 key points, but recall counts 2 (the critical must_include "
        "strings"),
])
def test_anything_else_is_refused_naming_the_question(tmp_path, value, named):
    folder = benchmark(tmp_path, question(value), kind="evidence_set")
    result = import_legal(folder, tmp_path / "ds", "--strict")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "question q12: scoring.evidence_recall_min: " in result.output and named in result.output, result.output


def test_a_count_above_the_points_counts_every_point_when_none_is_critical(tmp_path):
    plain = [{"must_include": "42000"}, {"must_include": "承诺把钱退回来"}, {"must_include": "办不了"}]
    ok = {**question(3), "required_evidence": plain}
    assert import_legal(benchmark(tmp_path, ok, kind="evidence_set"), tmp_path / "ds", "--strict").exit_code == 0


CONTEXTS = ("答：一共给了42000元。", "答：他说办不了，承诺把钱退回来。", "答：都忘记了。")


def scored(recall_min, cited):
    spec = question(recall_min)
    legal = LegalQuestion(type="evidence_set", required_evidence=spec["required_evidence"], scoring=spec["scoring"])
    return score_legal(legal, LegalSample(question="?", answer="见上", contexts=CONTEXTS, cited=frozenset(cited)))


def test_a_count_scores_as_at_least_n_key_points_found():
    # one of the two critical points found (context 0): recall 0.5
    assert scored(1, [0])["evidence_recall"] == 0.5
    assert scored(1, [0])["evidence_set"] == pytest.approx(0.5 + 0.3 + 0.2)  # at least 1 of 2: met
    assert scored(2, [0])["evidence_set"] == pytest.approx(0.3 + 0.2)  # at least 2: not met
    assert scored(2, [0, 1])["evidence_set"] == pytest.approx(1.0)
    assert scored(1.0, [0])["evidence_set"] == pytest.approx(0.3 + 0.2)  # the share 1.0: every point, not met


def test_answer_scores_a_count_read_back_from_the_dataset(tmp_path):
    from click.testing import CliRunner

    from ragretrieval.cli import main

    assert import_legal(benchmark(tmp_path, question(1, "q1"), kind="evidence_set"), tmp_path / "ds").exit_code == 0
    answers = tmp_path / "answers.jsonl"
    # one of the two critical points in the answer, nothing cited: recall 0.5, which a count of 1 meets
    answers.write_text(json.dumps({"question_id": "q1", "answer": "一共给了42000元"}) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["answer", "--dataset", str(tmp_path / "ds"), "--contexts", "given",
                                       "--generator", f"file:{answers}", "--no-save", "--no-progress",
                                       "--out", str(report)])
    assert result.exit_code == 0, result.output
    means = json.loads(report.read_text(encoding="utf-8"))["means"]["answer"]
    assert (means["evidence_recall"], means["evidence_set"]) == (0.5, 0.5)
