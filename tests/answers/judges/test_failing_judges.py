"""Judges that fail say so: `answer --judge` and `judge-answers` exit 1 when more than half of a
judge's verdicts failed, store and write nothing, and a run of the same command asks those verdicts again; a judge
that needs reference answers is refused before anything is asked when no question has one; and the same `answer`
command run twice with one `--name` leaves one run under that name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import judge_requests, plays_both

QUESTIONS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_questions.jsonl"
OFF_THE_SCALE = ['{"score": 0}', '{"score": 6}', '{"score": "five"}', '{"score": null}', '{"score": 4.5}',
                 '{"score": true}', '{"score": -1}', '{"score": 1e400}', "not JSON at all"]


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def answer(server, dataset, *extra, code=0, questions=QUESTIONS):
    return invoke("answer", "--dataset", dataset, "--questions", questions, "--generator", "openai:gen-model",
                  "--base-url", server.url, "--retriever", "bm25", "--judge-model", "judge-model", "--max-retries", 1,
                  "--judge-max-retries", 1, "--sleep-time", 0, "--no-progress", *extra, code=code)


def judging_with(reply: str):
    return lambda request: plays_both(request) if request["model"] != "judge-model" else Reply(reply)


@pytest.mark.parametrize("reply", OFF_THE_SCALE)
def test_answer_exits_1_when_most_verdicts_fail_and_a_rerun_asks_them_again(demo_dataset, llm_env, tmp_path, reply):
    runs, out = tmp_path / "runs.sqlite", tmp_path / "r.json"
    with ChatServer(judging_with(reply)) as server:
        result = answer(server, demo_dataset, "--judge", "score5", "--runs-db", runs, "--out", out, code=1)
        assert "5 of 5 verdicts of judge score5 got no usable answer (first reasons: malformed JSON" in result.output
        assert not out.exists()
        with RunHistory(runs) as history:
            assert history.list() == []
        answers, verdicts = server.count(lambda r: r["model"] == "gen-model"), judge_requests(server, "score5")
        server.responder = plays_both  # the judge is mended
        answer(server, demo_dataset, "--judge", "score5", "--runs-db", runs, "--out", out)
        assert judge_requests(server, "score5") - verdicts == 5  # asked again: a failed verdict is never cached
        assert server.count(lambda r: r["model"] == "gen-model") == answers == 5  # the answers come from the cache
    assert json.loads(out.read_text(encoding="utf-8"))["judges"]["score5"]["judged"] == 5


def test_judge_answers_exits_1_when_most_verdicts_fail_and_leaves_the_run(demo_dataset, llm_env, tmp_path):
    runs = tmp_path / "runs.sqlite"
    invoke("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
           "bm25", "--no-progress", "--runs-db", runs, "--name", "floor")
    judged = ("judge", "answers", "floor", "--judge", "score5,correctness", "--judge-model", "judge-model",
              "--runs-db", runs, "--no-progress", "--out", tmp_path / "j.json")
    with ChatServer(judging_with("I would rather not say.")) as server:
        result = invoke(*judged, "--judge-base-url", server.url, code=1)
    assert "of judge score5 got no usable answer" in result.output and not (tmp_path / "j.json").exists()
    with RunHistory(runs) as history:
        assert history.get("floor").report.judges == {}  # the run is left as it was
    with ChatServer(plays_both) as mended:
        invoke(*judged, "--judge-base-url", mended.url)
        assert judge_requests(mended) == 10  # every failed verdict asked again, none taken from the journal
    with RunHistory(runs) as history:
        assert history.get("floor").report.judges["score5"].judged == 5


def test_a_judge_needing_references_is_refused_when_no_question_has_one(demo_dataset, llm_env, tmp_path):
    with ChatServer(plays_both) as server:
        result = answer(server, demo_dataset, "--judge", "groundedness,score5", "--no-save", code=1,
                        questions=demo_dataset / "questions.jsonl")
        assert server.count() == 0  # refused before anything is asked
    assert "judge score5 needs reference answers (ground_truth) and none of the 30 questions has one" in result.output
    some = tmp_path / "some.jsonl"
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first.pop("ground_truth")
    some.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8")
    with ChatServer(plays_both) as server:
        result = answer(server, demo_dataset, "--judge", "score5", "--no-save", "--out", tmp_path / "r.json",
                        questions=some)
    assert "warning: judge score5 skips the 1 of 5 questions without a reference answer" in result.output
    summary = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["judges"]["score5"]
    assert (summary["judged"], summary["skipped"], summary["failed"]) == (4, 1, 0)


def test_a_repeated_name_moves_to_the_new_run_and_nothing_is_replaced_or_refused(
        demo_dataset, llm_env, tmp_path, judge_server):
    """The same command twice, then another configuration under the same name: each is a new run that takes the
    name; the runs that had it keep their ids, tags and reports under a dated name (runs/names.py)."""
    runs = tmp_path / "runs.sqlite"
    answer(judge_server, demo_dataset, "--runs-db", runs, "--name", "mine", "--tag", "first")
    with RunHistory(runs) as history:
        (before,) = history.list()
    again = answer(judge_server, demo_dataset, "--runs-db", runs, "--name", "mine", "--tag", "second")
    dated = f"mine@{before.created_at:%Y-%m-%dT%H:%M}"
    assert ("note: the name 'mine' now names run r-" in again.stderr
            and f"the earlier run {before.id} keeps its id and is now named '{dated}'" in again.stderr)
    other = answer(judge_server, demo_dataset, "--runs-db", runs, "--name", "mine", "--context-k", 3)
    assert "note: the name 'mine' now names run" in other.stderr
    with RunHistory(runs) as history:
        first, second, third = history.list()
        assert (first.id, first.name, first.tags) == (before.id, dated, ["first"])
        assert second.name.startswith("mine@") and second.tags == ["second"] and third.name == "mine"
        assert history.get("mine").id == third.id and history.get(dated).id == before.id
    answer(judge_server, demo_dataset, "--runs-db", runs, "--name", "other", "--context-k", 3)
    assert "mine" in invoke("runs", "show", "mine", "--runs-db", runs).output
    assert invoke("runs", "compare", "mine", "other", "--runs-db", runs).exit_code == 0
