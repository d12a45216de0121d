"""`rr.judge_answers`: the `judge answers` workflow from Python, against the OpenAI-compatible test server: a stored
run judged in place or into a new run, an AnswerReport judged without a history, a dry run that asks nothing, and
hostile arguments refused by name before any request."""

from __future__ import annotations

import pytest

import ragretrieval as rr
from ragretrieval.answers.report import AnswerReport
from ragretrieval.errors import InputError
from ragretrieval.runs import RunHistory

from .conftest import judge_requests
from .test_judge_answers import QUESTIONS


@pytest.fixture
def floor(demo_dataset, llm_env, tmp_path):
    runs = tmp_path / "runs.sqlite"
    rr.answer(demo_dataset, QUESTIONS, generator="extractive", retriever="bm25", runs_db=runs, name="floor")
    return runs


def test_a_stored_run_is_judged_in_place_and_said_where(floor, judge_server):
    said = []
    judged = rr.judge_answers("floor", runs_db=floor, judges=["score5"], judge_model="judge-model",
                              judge_base_url=judge_server.url, on_note=said.append)
    assert isinstance(judged, AnswerReport)
    assert judge_server.count() == judge_requests(judge_server) == 5  # one verdict per answer, no answer asked
    with RunHistory(floor) as history:
        stored = history.get("floor")
    assert stored.report.means["answer"]["average_score"] == judged.means["answer"]["average_score"]
    assert [line for line in said if line.startswith(f"run {stored.id} updated")]


def test_a_new_run_keeps_the_first_and_a_report_needs_no_history(floor, judge_server, tmp_path):
    with RunHistory(floor) as history:
        first = history.get("floor")
    judged = rr.judge_answers("floor", runs_db=floor, judges="score5", judge_model="judge-model",
                              judge_base_url=judge_server.url, new_run=True, name="floor judged", tags=["j"])
    assert judged.judged_from == first.id
    with RunHistory(floor) as history:
        assert history.get("floor").config_key == first.config_key  # left as it was
        assert history.get("floor judged").tags == ["j"]
    again = rr.judge_answers(first.report, judges=["score5"], judge_model="judge-model",
                             judge_base_url=judge_server.url, out=tmp_path / "judged.json")
    assert AnswerReport.load(tmp_path / "judged.json").means == again.means


def test_a_dry_run_plans_and_asks_nothing(floor, judge_server):
    plan = rr.judge_answers("floor", runs_db=floor, judges=["score5"], judge_model="judge-model",
                            judge_base_url=judge_server.url, dry_run=True)
    assert judge_server.count() == 0 and plan is not None


@pytest.mark.parametrize("arguments, field", [
    (dict(judges=[]), "judges"),
    (dict(judges=["score5"], threads=0), "threads"),
    (dict(judges=["score5"], threads=-3), "threads"),
    (dict(judges=["score5"], threads="many"), "threads"),
    (dict(judges=["score5"], max_cost=-1), "max_cost"),
    (dict(judges=["score5"], generator="extractive"), "generator"),  # not a judging setting
    (dict(judges=["score5"], name="x"), "name"),  # names a new run: needs new_run
    (dict(judges=["score5"], labels={"q": 1}), "labels"),  # read by the audit: needs repeats
])
def test_hostile_arguments_are_refused_by_name_before_any_request(floor, judge_server, arguments, field):
    with pytest.raises(rr.SettingsError) as raised:
        rr.judge_answers("floor", runs_db=floor, judge_base_url=judge_server.url, **arguments)
    assert field in str(raised.value) and judge_server.count() == 0


@pytest.mark.parametrize("run", [None, "", 42, ["floor"]])
def test_a_run_that_is_no_run_is_refused(run):
    with pytest.raises(rr.SettingsError, match="run must be"):
        rr.judge_answers(run, judges=["score5"])


def test_a_report_file_needs_out_and_a_retrieval_run_is_refused(demo_dataset, floor, tmp_path):
    with RunHistory(floor) as history:
        history.get("floor").report.save(tmp_path / "floor.json")
    with pytest.raises(rr.SettingsError, match=r"out \(the judged report's file\) is needed: .*floor.json is a report"):
        rr.judge_answers(tmp_path / "floor.json", judges=["score5"])
    retrieval = rr.evaluate(demo_dataset, retriever="bm25")
    with pytest.raises(InputError, match="is a retrieval run"):
        rr.judge_answers(retrieval, judges=["score5"])
