"""``judge-answers RUN``: a stored ``--generator extractive`` run gets judge metrics without its answers being made
again; judging again asks nothing; other settings need --new-run; a report file; resuming; compare and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.answers.judges import JudgeOptions, build_judges
from ragretrieval.answers.report import AnswerReport
from ragretrieval.answers.stored_judging import judge_report
from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.work.stop import Stopped, StopToken

from .conftest import StopAfter, judge_requests

QUESTIONS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_questions.jsonl"
JUDGED = ("average_score", "response/llm_judged/correctness/rating", "retrieval/llm_judged/chunk_relevance_precision")


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def floor(demo_dataset, llm_env, tmp_path):
    """An extractive answer run stored as `floor`; yields the history's path."""
    runs = tmp_path / "runs.sqlite"
    invoke("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
           "bm25", "--no-progress", "--runs-db", runs, "--name", "floor", "--tag", "baseline")
    return runs


def judge(server, runs, *extra, code=0):
    return invoke("judge", "answers", "floor", "--judge", "score5,correctness,chunk_relevance", "--judge-model",
                  "judge-model", "--judge-base-url", server.url, "--runs-db", runs, "--no-progress", *extra, code=code)


def test_judge_answers_adds_judge_metrics_to_the_run_and_keeps_its_answers(floor, judge_server):
    with RunHistory(floor) as history:
        before = history.get("floor")
    result = judge(judge_server, floor)
    assert f"run {before.id} updated" in result.output
    assert judge_server.count() == judge_requests(judge_server) == 5 * (1 + 1 + 5)  # no answer was asked for
    with RunHistory(floor) as history:
        after = history.get("floor")
        listed = next(s for s in history.list() if s.id == before.id)
    assert after.id == before.id and after.tags == ["baseline"] and after.config_key != before.config_key
    for old, new in zip(before.report.questions, after.report.questions):
        assert (new.answer, new.contexts, new.citations, new.score) == (old.answer, old.contexts, old.citations,
                                                                      old.score)
        checks = {k: v for k, v in new.metrics["answer"].items() if k not in (*JUDGED, "llm_judge_score")}
        assert checks == old.metrics["answer"] and new.metrics.get("doc") == old.metrics.get("doc")
        assert {"score5", "correctness", "chunk_relevance"} <= set(new.judges)
    report = after.report
    assert all(name in report.means["answer"] for name in JUDGED) and listed.means == report.means
    assert report.means["answer"]["checks_score"] == before.report.means["answer"]["checks_score"]
    assert set(report.config.scorers) == {"checks", "score5", "correctness", "chunk_relevance"}
    assert "judging" in report.timings and any(n.startswith("judges added by judge-answers") for n in report.notes)

    judge(judge_server, floor)  # the same judges again: every verdict is kept, nothing is asked
    assert judge_server.count() == 35
    listed = invoke("runs", "list", "--runs-db", floor, "-m", "answer:average_score").output
    assert f"{report.means['answer']['average_score']:.4f}" in listed


def test_other_judge_settings_need_a_new_run_which_leaves_the_original(floor, judge_server):
    judge(judge_server, floor)
    with RunHistory(floor) as history:
        first = history.get("floor")
    refused = judge(judge_server, floor, "--judge-model", "judge-model", "--judge-temperature", "0.3", code=2)
    assert "already has judge 'score5' with other settings" in refused.output and "--new-run" in refused.output
    copy = judge(judge_server, floor, "--judge-temperature", "0.3", "--new-run", "--tag", "warm")
    assert "which is unchanged" in copy.output
    with RunHistory(floor) as history:
        assert history.get("floor").report == first.report
        new = history.get("floor+judges")
    assert new.report.judged_from == first.id and new.tags == ["baseline", "warm"]
    assert new.report.config.scorers["score5"]["temperature"] == 0.3
    plain = judge(judge_server, floor, "--name", "x", code=2)
    assert "--new-run" in plain.output


def test_a_report_file_is_judged_into_another_file(demo_dataset, llm_env, judge_server, tmp_path):
    source = tmp_path / "floor.json"
    invoke("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
           "bm25", "--no-progress", "--no-save", "--out", source)
    text = source.read_text(encoding="utf-8")
    base = ["judge", "answers", source, "--judge", "safety", "--judge-model", "judge-model", "--judge-base-url",
            judge_server.url, "--no-progress"]
    refused = invoke(*base, code=2)  # a file needs --out
    assert f"Error: --out (the judged report's file) is needed: {source} is a report file" in refused.output
    invoke(*base, "--out", tmp_path / "judged.json")
    assert source.read_text(encoding="utf-8") == text
    judged = AnswerReport.load(tmp_path / "judged.json")
    assert judged.means["answer"]["response/llm_judged/safety/rating"] == 1.0
    eval_out = tmp_path / "eval.json"
    invoke("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--no-save", "--out", eval_out)
    refused = invoke("judge", "answers", eval_out, "--judge", "safety", "--out", tmp_path / "x.json", code=2)  # the input must change
    assert "is a retrieval run" in refused.output


def test_a_stopped_judging_resumes_from_its_journal(floor, judge_server, tmp_path, monkeypatch):
    with RunHistory(floor) as history:
        report = history.get("floor").report
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    stop = StopToken()

    judges = build_judges("score5,correctness", JudgeOptions(model="judge-model", base_url=judge_server.url,
                                                             language="zh"))
    journal = tmp_path / "judging.journal.jsonl"
    with pytest.raises(Stopped):
        judge_report(report, judges, threads=1, journal_path=journal, progress=StopAfter(2, stop), stop=stop)
    journaled = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert len(journaled) == 2 and judge_server.count() == 4
    judged = judge_report(report, judges, threads=2, journal_path=journal)
    assert judge_server.count() == 10  # the three questions left, two judges each
    assert judged.judges["score5"].judged == 5 and report.judges == {}  # the stored report itself is not changed


def test_compare_and_report_pair_judge_metrics_and_show_both_runs_reasoning(floor, judge_server, tmp_path):
    judge(judge_server, floor)
    judge(judge_server, floor, "--judge-temperature", "0.3", "--new-run", "--name", "warm")
    compared = json.loads(invoke("runs", "compare", "floor", "warm", "-m", "average_score", "-m",
                                 "response/llm_judged/correctness/rating", "--runs-db", floor, "--json").output)
    metrics = compared["metrics"]
    assert set(metrics) == {"average_score", "response/llm_judged/correctness/rating"}
    defaults = invoke("runs", "compare", "floor", "warm", "--runs-db", floor).output
    assert "average_score" in defaults and "retrieval/llm_judged/chunk_relevance_precision" in defaults
    invoke("runs", "report", "floor", "warm", "--runs-db", floor, "--html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count('<p class="judge"><b>score5</b>') == 2 * 5 and "covers" in page
    assert "judge tokens / cost" in page


@pytest.mark.parametrize("extra, said", [
    (["--name", "x"], "--name and --tag name a new run: add --new-run"),
    (["--tag", "x"], "--name and --tag name a new run: add --new-run"),
    (["--labels", __file__], "--labels are read by the audit: give --repeats"),
    (["--repeats", "1"], "--repeats must be a whole number from 2 to 100; got 1"),
])
def test_the_librarys_refusals_are_said_in_flags(floor, judge_server, extra, said):
    refused = judge(judge_server, floor, *extra, code=2)
    assert said in refused.output and judge_server.count() == 0


def test_the_conflict_names_only_the_settings_that_differ(floor, judge_server):
    """With only the endpoint changed, the refusal names the endpoint, not the model or the prompt
    (0.2.0 printed the stored model and prompt hash, which had not changed)."""
    judge(judge_server, floor)
    other_spelling = judge_server.url.replace("127.0.0.1", "localhost")  # the same server, another endpoint
    refused = judge(judge_server, floor, "--judge-base-url", other_spelling, code=2)
    line = refused.output.strip().splitlines()[-1]
    assert (f"already has judge 'score5' with other settings: base_url {judge_server.url!r} (now "
            f"{other_spelling!r}); judge it into a new run (--new-run)") in line
    assert "model" not in line and "prompt" not in line
    prompt = floor.parent / "score5.txt"
    prompt.write_text("Question: $question\nReference: $ground_truth\nAnswer: $answer\nScore it from 1 to 5 as JSON "
                      '{"score": N, "reasoning": "..."}.', encoding="utf-8")
    refused = judge(judge_server, floor, "--judge-prompt", f"score5={prompt}", "--judge-temperature", "0.2", code=2)
    line = refused.output.strip().splitlines()[-1]
    assert "temperature 0.0 (now 0.2)" in line and f"(now {str(prompt)!r})" in line and "prompt_hash" not in line
    assert "base_url" not in line and "model" not in line
