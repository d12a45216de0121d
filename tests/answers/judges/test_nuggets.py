"""The nuggets judge against a chat server on 127.0.0.1: nuggets batched per request, the four scores per answer, a
question without nuggets not applicable, failures never scored, samples voted per nugget; nuggets.jsonl refused
line by line when it is wrong; the answer card lists each nugget's verdict; ``answer`` and ``judge-answers`` find
the dataset's nuggets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.analysis.answer_html import _judge_cell
from ragretrieval.answers.judges import JudgeError, JudgeOptions, build_judge
from ragretrieval.answers.judges.base import record
from ragretrieval.answers.judges.nuggets import (
    ALL_PARTIAL,
    ALL_STRICT,
    NUGGET_METRICS,
    VITAL_PARTIAL,
    VITAL_STRICT,
    nugget_scores,
)
from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import DatasetError
from ragretrieval.data.nuggets import Nugget, QuestionNuggets, read_nuggets, write_nuggets
from ragretrieval.errors import MissingInputError
from ragretrieval.server.jobs.judging import verdict as web_verdict
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.judge_conformance import sample

from .conftest import BLOCK, judge_requests

QUESTIONS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_questions.jsonl"
DEMO_NUGGETS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_nuggets.jsonl"


def nuggets_file(path, facts: dict[str, list[tuple[str, str]]]) -> Path:
    write_nuggets(path, [QuestionNuggets(question_id=qid, nuggets=[Nugget(text=t, importance=i) for t, i in items])
                         for qid, items in facts.items()])
    return path


def options(server, path, **extra) -> JudgeOptions:
    return JudgeOptions(model="judge-model", base_url=server.url, max_retries=0, nuggets=path, **extra)


def test_scores_follow_the_formulas():
    verdicts = ["support", "partial_support", "not_support", "support"]
    scores = nugget_scores(verdicts, ["vital", "vital", "okay", "okay"])
    assert scores == {ALL_STRICT: 2 / 4, ALL_PARTIAL: 2.5 / 4, VITAL_STRICT: 1 / 2, VITAL_PARTIAL: 1.5 / 2}
    assert nugget_scores(["partial_support"], ["okay"]) == {ALL_STRICT: 0.0, ALL_PARTIAL: 0.5}  # no vital score


def test_nuggets_are_batched_and_each_gets_its_verdict(judge_server, llm_env, tmp_path):
    answered = sample()  # answer: "Boil them for 5 minutes [0]."
    facts = [(f"Boil them for {n + 5} minutes", "vital" if n < 3 else "okay") for n in range(12)]
    path = nuggets_file(tmp_path / "nuggets.jsonl", {answered.id: facts})
    judge = build_judge("nuggets", options(judge_server, path, nugget_batch=5))
    result = judge.judge(answered)
    assert judge_requests(judge_server, "nuggets") == 3 == result.requests  # 5 + 5 + 2
    asked = [BLOCK.findall(r["messages"][0]["content"])[2] for r in judge_server.requests]
    assert [len(block.splitlines()) for block in asked] == [5, 5, 2] and asked[1].startswith("1. Boil them for 10")
    verdicts = [d["verdict"] for d in result.details]
    assert verdicts[0] == "support" and verdicts.count("support") >= 1
    assert [d["nugget"] for d in result.details] == list(range(1, 13))
    assert result.metrics == nugget_scores(verdicts, [i for _, i in facts])
    assert result.value == result.metrics[ALL_STRICT] and result.rating == f"{verdicts.count('support')}/12"
    record(judge.name, judge.metric, answered, result)
    assert set(NUGGET_METRICS) <= set(answered.metrics["answer"])
    settings = judge.settings()
    assert settings["nugget_batch"] == 5 and settings["nuggets"].startswith("sha256:")
    again = build_judge("nuggets", options(judge_server, nuggets_file(tmp_path / "other.jsonl", {
        answered.id: facts[:-1]}), nugget_batch=5))
    assert again.settings()["nuggets"] != settings["nuggets"]  # other nuggets: another judged run


def test_a_question_without_nuggets_is_not_applicable_and_nothing_is_asked(judge_server, llm_env, tmp_path):
    path = nuggets_file(tmp_path / "nuggets.jsonl", {"q-soup-1": [], "q-other": [("A fact.", "vital")]})
    judge = build_judge("nuggets", options(judge_server, path))
    for answered in (sample(0), sample(1)):  # not in the file; an empty list
        result = judge.judge(answered)
        assert result.skipped == "no nuggets" and result.value is None and result.failure is None
        judge.score(None, answered)
        assert not set(NUGGET_METRICS) & set(answered.metrics.get("answer", {}))  # neither 0 nor 1
    assert judge_server.count() == 0


def test_a_failed_batch_fails_the_question_and_leaves_no_score(llm_env, tmp_path):
    def replies(request):
        nuggets = BLOCK.findall(request["messages"][0]["content"])[2].splitlines()
        if nuggets[0].startswith("1. second"):  # the second batch always answers one verdict too few
            return Reply(json.dumps({"verdicts": ["support"] * (len(nuggets) - 1)}))
        return Reply(json.dumps({"verdicts": ["support"] * len(nuggets)}))

    path = nuggets_file(tmp_path / "n.jsonl", {"q-soup-0": [("first", "vital"), ("second", "vital"),
                                                            ("third", "okay")]})
    with ChatServer(replies) as server:
        judge = build_judge("nuggets", options(server, path, nugget_batch=1))
        answered = sample()
        answered.metrics["answer"] = {ALL_STRICT: 0.9, VITAL_STRICT: 0.9}  # an earlier verdict's
        answered.judges["nuggets"] = {"value": 0.9, "metrics": {VITAL_STRICT: 0.9}}
        judge.score(None, answered)
        assert server.count() == 1 + 2 + 1  # the second batch: its request, then one repair request
    verdict = answered.judges["nuggets"]
    assert verdict["value"] is None and verdict["failure"].startswith("nuggets 2-2: malformed JSON after one repair")
    assert "expected 1 verdicts" in verdict["failure"]
    assert [d["verdict"] for d in verdict["details"]] == ["support", None, "support"]
    assert not set(NUGGET_METRICS) & set(answered.metrics["answer"])  # the old scores went with the old verdict


@pytest.mark.parametrize("reply", ['["support", "not_support", "partial support"]',
                                   '```json\n{"verdicts": ["Support", "NOT_SUPPORT", "partial-support"]}\n```'])
def test_a_bare_list_and_spelling_variants_are_read(reply, llm_env, tmp_path):
    path = nuggets_file(tmp_path / "n.jsonl", {"q-soup-0": [("a", "vital"), ("b", "okay"), ("c", "okay")]})
    with ChatServer(lambda request: Reply(reply)) as server:
        result = build_judge("nuggets", options(server, path)).judge(sample())
    assert [d["verdict"] for d in result.details] == ["support", "not_support", "partial_support"]
    assert result.metrics == {ALL_STRICT: 1 / 3, ALL_PARTIAL: 1.5 / 3, VITAL_STRICT: 1.0, VITAL_PARTIAL: 1.0}


def test_samples_are_voted_nugget_by_nugget(llm_env, tmp_path):
    rounds = iter([["support", "not_support"], ["support", "support"], ["not_support", "not_support"]])
    path = nuggets_file(tmp_path / "n.jsonl", {"q-soup-0": [("a", "vital"), ("b", "vital")]})
    with ChatServer(lambda request: Reply(json.dumps({"verdicts": next(rounds)}))) as server:
        result = build_judge("nuggets", options(server, path, samples=3, temperature=0.7)).judge(sample())
        assert server.count() == 3
    assert [d["verdict"] for d in result.details] == ["support", "not_support"]
    assert [d["samples"] for d in result.details] == [[1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    assert result.disagreement is True and result.value == 0.5


@pytest.mark.parametrize("batch", [0, -1, 101, "5", 2.5, True, None])
def test_a_bad_batch_size_is_refused_naming_the_field(batch, tmp_path):
    path = nuggets_file(tmp_path / "n.jsonl", {"q": [("a", "vital")]})
    with pytest.raises(JudgeError, match="nugget_batch must be a whole number from 1 to 100"):
        build_judge("nuggets", JudgeOptions(nuggets=path, nugget_batch=batch))


def test_the_judge_needs_a_nuggets_file(tmp_path):
    with pytest.raises(JudgeError, match="needs the questions' nuggets .*questions nuggets DATASET"):
        build_judge("nuggets", JudgeOptions())
    with pytest.raises(MissingInputError, match="file not found"):
        build_judge("nuggets", JudgeOptions(nuggets=tmp_path / "missing.jsonl"))


@pytest.mark.parametrize("line, problem", [
    ('{"question_id": "q", "nuggets": [{"text": "a"}]}', "field 'nuggets.0.importance': Field required"),
    ('{"question_id": "q", "nuggets": [{"text": "a", "importance": "critical"}]}', "nuggets.0.importance"),
    ('{"question_id": "q", "nuggets": [{"text": "  ", "importance": "vital"}]}', "must not be blank"),
    ('{"question_id": "q", "nuggets": "a fact"}', "field 'nuggets'"),
    ('{"question_id": "", "nuggets": []}', "field 'question_id'"),
    ('{"question_id": 7, "nuggets": []}', "field 'question_id'"),
    ('{"question_id": "q", "nuggets": [], "nuggets_version": 2}', "nuggets_version 2 is not supported"),
    ('{"question_id": "q", "nuggets": [], "secret": "x"}', "field 'secret': Extra inputs are not permitted"),
    ('{"question_id": "q", "nuggets": null}', "field 'nuggets'"),
    ("not json", "invalid JSON"),
])
def test_a_bad_nuggets_line_is_refused_naming_file_and_line(line, problem, tmp_path):
    path = tmp_path / "nuggets.jsonl"
    path.write_text('{"question_id": "ok", "nuggets": []}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=f"nuggets.jsonl:2: .*{problem}"):
        read_nuggets(path)


def test_a_question_twice_is_refused(tmp_path):
    path = tmp_path / "nuggets.jsonl"
    path.write_text('{"question_id": "q", "nuggets": []}\n\n{"question_id": "q", "nuggets": []}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"nuggets.jsonl:3: question 'q' has nuggets twice \(first on line 1\)"):
        read_nuggets(path)


def test_the_card_lists_each_nugget_with_its_verdict_escaped():
    evil = "<script>alert(1)</script>"
    verdict = {"value": 0.5, "rating": "1/2", "reasoning": "r", "details": [
        {"nugget": 1, "text": evil, "importance": "vital", "verdict": "support"},
        {"nugget": 2, "text": "cold rice", "importance": "okay", "verdict": "not_support"}]}
    html = _judge_cell("nuggets", verdict)
    assert '<ul class="nuggets">' in html and "<script>" not in html and "&lt;script&gt;" in html
    assert '<li class="pass"' in html and '<li class="fail"' in html and "okay, not_support" in html
    shown = web_verdict(verdict)
    assert shown["value"] == 0.5 and [n["verdict"] for n in shown["nuggets"]] == ["support", "not_support"]
    assert "nuggets" not in web_verdict({"value": 1.0, "details": [{"position": 0, "rating": "yes"}]})


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def test_answer_and_judge_answers_judge_with_the_dataset_nuggets(demo_dataset, judge_server, llm_env, tmp_path):
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    for name in ("corpus.jsonl", "questions.jsonl", "manifest.json"):
        (dataset / name).write_bytes((demo_dataset / name).read_bytes())
    common = ["--dataset", dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever", "bm25",
              "--judge", "nuggets", "--judge-model", "judge-model", "--judge-base-url", judge_server.url,
              "--no-progress"]
    missing = invoke("answer", *common, "--no-save", code=2)
    assert "the nuggets judge needs nuggets: " in missing.output and "questions nuggets DATASET" in missing.output
    stray = invoke("answer", *common[:-7], "--judge-nuggets", DEMO_NUGGETS, "--no-save", "--no-progress", code=2)
    assert "add --judge nuggets" in stray.output
    (dataset / "nuggets.jsonl").write_bytes(DEMO_NUGGETS.read_bytes())
    runs = tmp_path / "runs.sqlite"
    done = invoke("answer", *common, "--out", tmp_path / "r.json", "--runs-db", runs, "--name", "nuggets")
    report = AnswerReport.load(tmp_path / "r.json")
    assert report.judges["nuggets"].skipped == 1 and report.judges["nuggets"].judged == 4  # a-none: empty list
    assert report.judges["nuggets"].skipped_because == {"no nuggets": 1}
    for name in NUGGET_METRICS:
        assert report.counts["answer"][name] == 4 and name in report.intervals["answer"] and name in done.output
    asked = judge_requests(judge_server, "nuggets")
    assert asked == 4  # every demo question has at most 10 nuggets: one request each
    html = tmp_path / "report.html"
    invoke("runs", "report", "nuggets", "--html", html, "--runs-db", runs)
    page = html.read_text(encoding="utf-8")
    assert page.count('<ul class="nuggets">') == 4 and "skipped: no nuggets" in page

    invoke("answer", "--dataset", dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
           "bm25", "--no-progress", "--runs-db", runs, "--name", "plain")
    judged = invoke("judge", "answers", "plain", "--judge", "nuggets", "--judge-model", "judge-model",
                    "--judge-base-url", judge_server.url, "--judge-nugget-batch", "1", "--runs-db", runs,
                    "--no-progress")
    assert ALL_STRICT in judged.output
    counts = [len(r.nuggets) for r in read_nuggets(DEMO_NUGGETS).values() if r.nuggets]
    # one request per nugget now, but a question with one nugget asks what it asked before: from the cache
    assert judge_requests(judge_server, "nuggets") == asked + sum(n for n in counts if n > 1)
    invoke("answer", *common, "--judge-nugget-batch", "0", "--no-save", code=2)
