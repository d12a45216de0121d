"""Judge noise (judge-answers --repeats; answers/judges/audit.py, analysis/noise.py): a stub judge that flips 20 % of
its verdicts reads 0.20 +/- 0.03 over 500 verdicts; the interval covers the truth as often as it says; agreement,
position and verbosity biases on judges built to have them; the noise stored with the run and used by compare's gate;
hostile options and labels."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.analysis.noise import flip_rate, minimal_detectable_difference, within_variance
from ragretrieval.answers.judges import JudgeOptions, build_judge
from ragretrieval.answers.judges.audit import audit_judge, padded, shuffled
from ragretrieval.answers.judges.base import JudgeError, record
from ragretrieval.answers.report import AnsweredQuestion, AnswerReport, ContextUsed
from ragretrieval.cli import main
from ragretrieval.testing.chat_server import JUDGE_NO, JUDGE_REPLY, ChatServer, FlippingJudge, Reply

QUESTIONS = "datasets/demo/answer_questions.jsonl"


def questions(n: int) -> list[AnsweredQuestion]:
    return [AnsweredQuestion(id=f"q{i}", text=f"How long, question {i}?", ground_truth=f"{i} minutes.",
                             answer=f"{i} minutes [0]." if i % 3 else "No idea [1].",
                             contexts=[ContextUsed(doc_id=f"d{i}", text=f"Steam {i} minutes."),
                                       ContextUsed(doc_id="x", text="Unrelated.")])
            for i in range(n)]


def judged(judge, found: list[AnsweredQuestion]) -> list[AnsweredQuestion]:
    for answered in found:
        record(judge.name, judge.metric, answered, judge.judge(answered))
    return found


def test_flip_rate_by_hand():
    # two questions, three repeats each: 2 of 3 pairs differ, then 0 of 3: d = 2/6, p = (1 - sqrt(1/3)) / 2
    found = flip_rate([[1, 1, 0], [0, 0, 0], [1]])
    assert found["disagreement"] == pytest.approx(1 / 3) and found["questions"] == 2 and found["verdicts"] == 6
    assert found["flip_rate"] == pytest.approx((1 - (1 / 3) ** 0.5) / 2)
    assert flip_rate([[1]])["flip_rate"] is None
    assert within_variance([[1, 1, 0], [0, 0, 0]]) == pytest.approx((1 / 9 + 1 / 9 + 4 / 9) / (2 + 2))
    assert minimal_detectable_difference(0.16, 0.16, 100) == pytest.approx((1.959964 + 0.841621) * 0.32 ** 0.5 / 10)


def test_the_interval_covers_the_truth_as_often_as_it_says():
    rng, covered = np.random.default_rng(3), 0
    for draw in range(200):
        truth = rng.random(100) < 0.6
        verdicts = (truth[:, None] ^ (rng.random((100, 5)) < 0.2)).astype(float)
        low, high = flip_rate(verdicts.tolist(), resamples=400, seed=draw)["ci"]
        covered += low <= 0.2 <= high
    assert 180 <= covered <= 198  # 90-99 % of 95 % intervals


def test_a_judge_flipping_a_fifth_of_its_verdicts_reads_020(llm_env):
    stub = FlippingJudge(0.20, seed=7)
    with ChatServer(stub) as server:
        judge = build_judge("correctness", JudgeOptions(model="judge", base_url=server.url))
        found = judged(judge, questions(100))
        noise = audit_judge(judge, found, repeats=5, threads=4)
        asked = server.count()
        assert stub.given == 600 and stub.flipped == 120  # exactly a fifth of every hundred verdicts
        assert asked == 100 * 5 + 100  # the repeats, and each answer padded once
        assert noise["verdicts"] == 500 and noise["failed"] == 0
        assert abs(noise["flip_rate"] - 0.20) <= 0.03, noise["flip_rate"]
        assert noise["ci"][0] <= 0.20 <= noise["ci"][1]
        assert noise["variance"]["response/llm_judged/correctness/rating"] == pytest.approx(0.16, abs=0.03)
        assert abs(noise["verbosity"]["shift"]) < 0.1  # the stub does not care about length
        assert noise["position"] == {"not_applicable": "the judge does not read the contexts together"}
        again = audit_judge(judge, found, repeats=5, threads=4)
        assert server.count() == asked and again["flip_rate"] == noise["flip_rate"]  # all from the cache


def test_position_and_verbosity_biases_are_measured(llm_env):
    def partial(request):
        prompt = request["messages"][0]["content"]
        first = prompt.split("[0] ", 1)[1][:5]
        long_answer = prompt.count("Thank you for your question") > 0
        return Reply(JUDGE_REPLY if first.startswith("Steam") or long_answer else JUDGE_NO)

    with ChatServer(partial) as server:
        judge = build_judge("groundedness", JudgeOptions(model="judge", base_url=server.url))
        noise = audit_judge(judge, judged(judge, questions(30)), repeats=2)
    assert noise["flip_rate"] == 0.0 and noise["variance"]["response/llm_judged/groundedness/rating"] == 0.0
    assert noise["position"]["shift"] == -1.0 and noise["position"]["changed"] == 1.0  # the relevant one moved
    assert noise["position"]["ci"] == [-1.0, -1.0]
    assert noise["verbosity"]["shift"] == 0.0  # always yes when the relevant context comes first


def test_shuffles_follow_citations_and_padding_doubles():
    answered = AnsweredQuestion(id="q", text="?", answer="A [0], B [1, 2] and [7].",
                                contexts=[ContextUsed(doc_id=d, text=d) for d in "abc"])
    moved = shuffled(answered, seed=0)
    assert [c.doc_id for c in moved.contexts] != ["a", "b", "c"]
    where = {c.doc_id: i for i, c in enumerate(moved.contexts)}
    assert moved.answer == f"A [{where['a']}], B [{where['b']}, {where['c']}] and [7]."
    assert shuffled(answered.model_copy(update={"contexts": answered.contexts[:1]}), 0) is None
    longer = padded(answered, "zh")
    assert longer.answer.startswith(answered.answer) and len(longer.answer) >= 2 * len(answered.answer)
    assert "感谢您的提问" in longer.answer


def test_agreement_with_the_rule_and_with_labels(tmp_path, llm_env):
    def by_number(request):  # yes exactly when the answer holds the reference's number
        prompt = request["messages"][0]["content"]
        return Reply(JUDGE_REPLY if "No idea" not in prompt else JUDGE_NO)

    found = questions(60)
    for q in found:
        q.metrics["answer"] = {"include": 1.0 if "No idea" not in q.answer else 0.0}
    labels = {q.id: float("No idea" not in q.answer) for q in found[:40]}
    labels["q0"] = 1.0  # the person disagrees once
    with ChatServer(by_number) as server:
        judge = build_judge("correctness", JudgeOptions(model="judge", base_url=server.url))
        noise = audit_judge(judge, judged(judge, found), repeats=2, labels=labels, labels_source="labels.jsonl")
        assert noise["rule"]["value"] == 1.0 and noise["rule"]["n"] == 60 and noise["rule"]["check"].startswith(
            "include")
        assert 0.8 < noise["labels"]["value"] < 1.0 and noise["labels"]["n"] == 40
        assert noise["labels"]["ci"][0] < noise["labels"]["value"] <= noise["labels"]["ci"][1]
        with pytest.raises(JudgeError, match="labels.jsonl: question 'elsewhere' is not in the run"):
            audit_judge(judge, found, repeats=2, labels={"elsewhere": 1.0}, labels_source="labels.jsonl")
        for bad in (1, 0, -3, 101, 2.5, True, "5"):
            with pytest.raises(JudgeError, match="repeats must be a whole number from 2 to 100"):
                audit_judge(judge, found, repeats=bad)


def test_the_command_stores_the_noise_and_compare_uses_it(demo_dataset, tmp_path, llm_env):
    run = ["answer", "--dataset", str(demo_dataset), "--questions", QUESTIONS, "--generator", "extractive",
           "--retriever", "bm25", "--no-progress", "--no-save"]
    assert CliRunner().invoke(main, [*run, "--out", str(tmp_path / "a.json")]).exit_code == 0
    with ChatServer(FlippingJudge(0.2, seed=1)) as server:
        audit = ["judge", "answers", str(tmp_path / "a.json"), "--judge", "correctness", "--judge-model", "judge",
                 "--judge-base-url", server.url, "--no-progress"]
        dry = CliRunner().invoke(main, [*audit, "--repeats", "4", "--dry-run"])
        assert dry.exit_code == 0 and server.count() == 0
        assert "judge correctness (audit)" in dry.output
        done = CliRunner().invoke(main, [*audit, "--repeats", "4", "--out", str(tmp_path / "audited.json")])
        assert done.exit_code == 0, done.output
    assert "judge audit: correctness, 4 repeats of 5 questions" in done.output and "flip rate" in done.output
    stored = AnswerReport.load(tmp_path / "audited.json").judge_noise["correctness"]
    assert stored["repeats"] == 4 and stored["settings"]["model"] == "judge" and stored["requests"] == 5 * 3 + 5
    for value, message in (("1", "--repeats must be a whole number from 2 to 100"), ("0", "from 2 to 100"),
                           ("101", "from 2 to 100"), ("x", "not a valid integer")):
        bad = CliRunner().invoke(main, [*audit, "--repeats", value])
        assert bad.exit_code == 2 and message in bad.output
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": "a-luyu", "value": "yes"}\n', encoding="utf-8")
    assert CliRunner().invoke(main, [*audit, "--labels", str(labels)]).exit_code == 2  # needs --repeats
    bad = CliRunner().invoke(main, [*audit, "--repeats", "2", "--labels", str(labels)])
    assert bad.exit_code != 0 and "labels.jsonl:1" in bad.output


def gate_reports(tmp_path, judge_b: list[float], include_b: list[float], variance: float | None):
    """Two answer runs of 100 questions: A's judge verdicts and include all 1, B's as given; A measured its noise."""
    paths = []
    for name, judge, include in (("a", [1.0] * 100, [1.0] * 100), ("b", judge_b, include_b)):
        report = {"kind": "answer", "ragretrieval_version": "0.2.0", "answer_labels_fingerprint": "x",
                  "config": {"generator": "file:x", "checks": {"refusal_message": "-"}},
                  "dataset": {"path": "d", "corpus_fingerprint": "c", "chunks_fingerprint": "", "n_documents": 1,
                              "n_questions": 100, "n_chunks": 0},
                  "questions": [{"id": f"q{i}", "text": "?", "metrics": {"answer": {
                      "response/llm_judged/correctness/rating": j, "include": k}}}
                      for i, (j, k) in enumerate(zip(judge, include))]}
        if name == "a" and variance is not None:
            report["judge_noise"] = {"correctness": {"variance": {"response/llm_judged/correctness/rating": variance}}}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(report), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_a_judge_only_difference_within_the_noise_does_not_fail_the_gate(tmp_path):
    ten_worse = [0.0] * 10 + [1.0] * 90  # -0.10, significant (p < 0.01), but a 0.2-flip judge's MDE is 0.158
    metric = ["-m", "response/llm_judged/correctness/rating", "--fail-on-regression"]
    a, b = gate_reports(tmp_path, ten_worse, [1.0] * 100, variance=0.16)
    passed = CliRunner().invoke(main, ["runs", "compare", a, b, *metric])
    assert passed.exit_code == 0, passed.output
    assert "* worse" in passed.output and "response/llm_judged/correctness/rating (b): 0.1585" in passed.output
    assert "not failing on response/llm_judged/correctness/rating (b): significantly worse (-0.1000), but within " \
           "the judges' measured noise (smallest detectable difference 0.1585)" in passed.stderr
    as_json = json.loads(CliRunner().invoke(main, ["runs", "compare", a, b, *metric[:2], "--json"]).output)
    assert as_json["judge_noise"][0]["mde"] == pytest.approx(0.1585, abs=1e-4)
    # the same drop on a check, or without a measured noise, or beyond the noise, fails
    a, b = gate_reports(tmp_path, [1.0] * 100, ten_worse, variance=0.16)
    assert CliRunner().invoke(main, ["runs", "compare", a, b, "-m", "include", "--fail-on-regression"]).exit_code == 1
    a, b = gate_reports(tmp_path, ten_worse, [1.0] * 100, variance=None)
    assert CliRunner().invoke(main, ["runs", "compare", a, b, *metric]).exit_code == 1
    a, b = gate_reports(tmp_path, [0.0] * 30 + [1.0] * 70, [1.0] * 100, variance=0.16)
    assert CliRunner().invoke(main, ["runs", "compare", a, b, *metric]).exit_code == 1
