"""The worker against the test RAG service over real HTTP, on SQLite and PostgreSQL: an evaluation runs to COMPLETED
with one result per question, pause stops after the questions in hand and resume goes on, a service that crashes
mid-request fails the evaluation with its error (and resume finishes it), a claim whose worker died is taken over,
and a worker that lost its claim stores nothing."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from sqlalchemy import select

from ragretrieval.runs.schema import evaluation_results
from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import QuestionResult, builtin_engine
from ragretrieval.server.jobs.worker import Worker

from . import http_engine
from .conftest import FAST, new_evaluation, new_set, wait_for
from .rag_service import default_respond


@pytest.fixture
def db(db_url):
    database = Database(db_url)
    yield database
    database.close()


@pytest.fixture
def start_worker(db, datasets):
    started = []

    def start(engine=http_engine.prepare, settings=FAST, name=None) -> Worker:
        worker = Worker(db, engine, settings, locate=lambda name: str(datasets / name), name=name)
        worker.start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def stored(db, eval_id) -> list:
    with db.read() as conn:
        return conn.execute(select(evaluation_results).where(evaluation_results.c.evaluation_id == eval_id)
                            .order_by(evaluation_results.c.position)).all()


def status_of(api, eval_id):
    return api.get(f"/api/v1/evaluations/{eval_id}?limit=0")


def test_an_evaluation_runs_to_completed_with_one_result_per_question(api, db, rag_service, start_worker):
    question_set = new_set(api, 12)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    assert (done["progress"], done["completed_questions"], done["error"]) == (100, 12, None)
    scores = [len(f"question {i}") % 5 + 1 for i in range(12)]
    assert done["average_score"] == pytest.approx(sum(scores) / 12)
    rows = stored(db, eval_id)
    assert [r.state for r in rows] == ["DONE"] * 12 and [r.attempts for r in rows] == [1] * 12
    assert Counter(r.question_id for r in rows) == Counter(q["id"] for q in question_set["questions"])
    assert rag_service.asked == Counter({q["id"]: 1 for q in question_set["questions"]})
    first = api.get(f"/api/v1/evaluations/{eval_id}?limit=1")["results"][0]
    assert first["rag_answer"] == "answer to: question 0" and first["llm_judge_reasoning"].startswith("scored")
    assert first["rag_answer_sources"] == default_respond({"question": "q"})["sources"]


def test_pause_stops_after_the_questions_in_hand_and_resume_goes_on(api, db, rag_service, start_worker):
    rag_service.delay = 0.15
    question_set = new_set(api, 20)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    wait_for(lambda: status_of(api, eval_id)["completed_questions"] >= 3, what="three answers")
    api.post(f"/api/v1/evaluations/{eval_id}/pause")
    wait_for(lambda: all(r.state != "RUNNING" for r in stored(db, eval_id)), what="the questions in hand")
    settled = status_of(api, eval_id)
    time.sleep(0.5)  # workers keep looking for work: none must be taken from a paused evaluation
    assert status_of(api, eval_id)["completed_questions"] == settled["completed_questions"] < 20
    assert settled["status"] == "PAUSED" and rag_service.count() == settled["completed_questions"]
    api.post(f"/api/v1/evaluations/{eval_id}/resume")
    wait_for(lambda: status_of(api, eval_id)["status"] == "COMPLETED", what="COMPLETED after resume")
    assert rag_service.asked == Counter({q["id"]: 1 for q in question_set["questions"]})
    assert len(stored(db, eval_id)) == 20


def test_a_crash_mid_request_fails_the_evaluation_and_resume_finishes_it(api, db, rag_service, start_worker):
    question_set = new_set(api, 10)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    rag_service.crash = True
    start_worker()
    failed = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "FAILED" and e, what="FAILED")
    assert failed["error"].startswith("question ") and "RemoteDisconnected" in failed["error"]
    assert failed["completed_questions"] == 0 and failed["finished_at"]
    time.sleep(0.5)
    assert {r.state for r in stored(db, eval_id)} == {"PENDING"}  # given back, none lost
    rag_service.crash = False
    assert api.post(f"/api/v1/evaluations/{eval_id}/resume")["error"] is None
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    assert done["completed_questions"] == 10 and done["error"] is None
    assert Counter(r.question_id for r in stored(db, eval_id)) == Counter(q["id"] for q in question_set["questions"])


def test_an_engine_that_cannot_start_fails_the_evaluation_with_its_message(api, rag_service, start_worker):
    question_set = new_set(api, 2)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker(engine=builtin_engine)
    failed = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "FAILED" and e, what="FAILED")
    assert failed["error"].startswith("cannot start: this ragretrieval has no answer engine yet")
    assert rag_service.count() == 0


def test_a_question_the_engine_could_not_answer_is_stored_with_its_error(api, rag_service, start_worker):
    rag_service.respond = lambda request: ({"error": "the model refused"} if request["question"].endswith("1")
                                           else default_respond(request))
    question_set = new_set(api, 3)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    wait_for(lambda: status_of(api, eval_id)["status"] == "COMPLETED", what="COMPLETED")
    shown = api.get(f"/api/v1/evaluations/{eval_id}")
    assert [r["error"] for r in shown["results"]] == [None, "the model refused", None]
    assert shown["summary"]["errors"] == 1 and shown["summary"]["scores"]["none"] == 1


def test_a_dead_workers_claim_is_taken_over_and_its_late_answer_dropped(api, db, rag_service, start_worker):
    question_set = new_set(api, 4)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    dead = claims.claim(db, "dead-worker", stale_after=FAST.stale_after)  # then it never beats again
    assert dead.question.position == 0 and dead.evaluation.id == eval_id
    start_worker(name="live-worker")
    wait_for(lambda: status_of(api, eval_id)["status"] == "COMPLETED", timeout=30, what="takeover and COMPLETED")
    rows = stored(db, eval_id)
    assert rows[0].attempts == 2 and rows[0].worker == "live-worker"
    late = QuestionResult(rag_answer="late", llm_judge_score=1)
    assert claims.finish(db, dead, "dead-worker", late) is None
    assert stored(db, eval_id)[0].rag_answer == "answer to: question 0"
    assert len(rows) == 4 and rag_service.asked == Counter({q["id"]: 1 for q in question_set["questions"]})


def test_deleting_a_running_evaluation_drops_the_answer_in_hand(api, db, rag_service, start_worker):
    rag_service.delay = 0.3
    question_set = new_set(api, 5)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    wait_for(lambda: rag_service.count() >= 1, what="a question in hand")
    api.delete(f"/api/v1/evaluations/{eval_id}")
    time.sleep(0.8)
    assert stored(db, eval_id) == []


def test_an_engine_is_named_module_function(monkeypatch):
    from ragretrieval.server.jobs.engine import ENGINE_VARIABLE, EngineError, load_engine

    assert load_engine(None) is builtin_engine
    assert load_engine("server.http_engine:prepare") is http_engine.prepare
    monkeypatch.setenv(ENGINE_VARIABLE, "server.http_engine:prepare")
    assert load_engine(None) is http_engine.prepare
    for spec, message in [("server.http_engine", "must be written module:function"),
                          ("no_such_module:prepare", "cannot load engine 'no_such_module:prepare'"),
                          ("server.http_engine:missing", "has no attribute 'missing'"),
                          ("server.http_engine:__doc__", "is not callable")]:
        with pytest.raises(EngineError, match=message):
            load_engine(spec)
