"""Judging a stored run: its journal belongs to its answers (another run with the same settings but other answers
never takes its verdicts), its judges speak the language the run chose, and a judge that failed on most answers
stops the judging before its audit asks anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.answers.judges import JudgeOptions, build_judges
from ragretrieval.answers.report import AnswerReport
from ragretrieval.answers.stored_judging import judge_report, judging_key
from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.work.stop import Stopped, StopToken

from .conftest import MARKERS, StopAfter, judge_requests, plays_both

QUESTIONS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_questions.jsonl"


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def stored(demo_dataset, llm_env, tmp_path) -> tuple[Path, AnswerReport]:
    """An extractive answer run of the demo questions in a history: (its path, the stored report)."""
    runs = tmp_path / "runs.sqlite"
    invoke("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
           "bm25", "--no-progress", "--runs-db", runs, "--name", "floor")
    with RunHistory(runs) as history:
        return runs, history.get("floor").report


def test_a_run_with_other_answers_does_not_take_the_journal_of_another(stored, judge_server, tmp_path):
    _, report = stored
    judges = build_judges("score5", JudgeOptions(model="judge-model", base_url=judge_server.url, language="zh"))
    stop = StopToken()

    journal = tmp_path / "judging.journal.jsonl"
    with pytest.raises(Stopped):
        judge_report(report, judges, threads=1, journal_path=journal, progress=StopAfter(2, stop), stop=stop)
    assert judge_server.count() == 2
    # the same run's configuration, but the service answered the first question otherwise today
    changed = [q.model_copy(update={"answer": "大火蒸 20 分钟。"}) if i == 0 else q
               for i, q in enumerate(report.questions)]
    other = report.model_copy(update={"questions": changed})
    assert judging_key(other, judges) != judging_key(report, judges)
    judged = judge_report(other, judges, threads=1, journal_path=journal)
    # the changed answer is judged (its old verdict is not taken from the journal); the unchanged second question's
    # request is the same as before and comes from the answer cache, the last three are asked
    assert judge_server.count() == 2 + 4
    assert any("大火蒸 20 分钟" in m["content"] for r in judge_server.requests[2:] for m in r["messages"])
    assert judged.judges["score5"].judged == 5
    assert judging_key(report.model_copy(deep=True), judges) == judging_key(report, judges)  # the same run: one key


def test_the_judges_speak_the_language_the_run_chose(stored, judge_server):
    runs, report = stored
    assert report.language == "zh"  # the demo questions are Chinese
    english = report.model_copy(update={"language": "en"})  # a run whose prompts were in English
    judged = rr.judge_answers(english, judges=["score5"], judge_model="judge-model", judge_base_url=judge_server.url)
    prompts = [r["messages"][0]["content"] for r in judge_server.requests]
    assert judged.judges["score5"].judged == 5 and prompts
    assert all(MARKERS["score5"][0] in p and MARKERS["score5"][1] not in p for p in prompts)


def test_a_run_stored_without_its_language_gets_that_of_its_questions(stored, tmp_path):
    _, report = stored
    data = json.loads(report.model_dump_json())
    del data["language"]
    assert AnswerReport.model_validate(data).language == "zh"
    data["questions"] = [{**q, "text": "How long is the sea bass steamed?"} for q in data["questions"]]
    assert AnswerReport.model_validate(data).language == "en"


@pytest.mark.parametrize("language", [5, "", "fr", "ZH", ["zh"], {"zh": 1}, "zh; DROP TABLE runs"])
def test_a_report_whose_language_is_no_prompt_language_is_refused_naming_the_field(stored, tmp_path, language):
    _, report = stored
    data = json.loads(report.model_dump_json())
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**data, "language": language}, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(rr.RagretrievalError) as raised:
        rr.judge_answers(path, judges=["score5"], out=tmp_path / "judged.json")
    assert "language" in str(raised.value) and str(path) in str(raised.value)
    assert not (tmp_path / "judged.json").exists()


def test_a_judge_that_failed_on_most_answers_is_not_audited(stored, llm_env, tmp_path):
    runs, _ = stored

    def failing_score5(request):
        return plays_both(request) if request["model"] != "judge-model" else Reply("I would rather not say.")

    with ChatServer(failing_score5) as server:
        result = invoke("judge", "answers", "floor", "--judge", "score5", "--judge-model", "judge-model",
                        "--judge-base-url", server.url, "--runs-db", runs, "--no-progress", "--repeats", "3",
                        code=1)
        asked = judge_requests(server, "score5")
    assert "of judge score5 got no usable answer" in result.output
    assert asked == 2 * 5  # each verdict and its one repair request; no repeat, shuffle or padding was asked
    with RunHistory(runs) as history:
        assert history.get("floor").report.judge_noise == {}
