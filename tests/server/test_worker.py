"""The worker with the built-in engine, asking the test RAG service over real HTTP (the http: generator), on SQLite
and PostgreSQL: an evaluation runs to COMPLETED with one result per question and its answer run stored, pause stops
after the questions in hand and resume goes on, a service that stays down fails the evaluation with its error (and
resume asks the failed questions again), a worker without the corpus cannot start, a claim whose worker died is
taken over, and a worker that lost its claim stores nothing."""

from __future__ import annotations

import re
import threading
from collections import Counter

import pytest
from sqlalchemy import select

from ragretrieval.runs.history import RunHistory
from ragretrieval.runs.schema import evaluation_results
from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.answer_engine import FAILURE_STREAK, AnswerEngine
from ragretrieval.server.jobs.engine import ItemResult, load_engine
from ragretrieval.server.jobs.worker import Worker

from .conftest import FAST, new_evaluation, new_set, wait_for
from .rag_service import SOURCE, SOURCE_TEXT, default_respond

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: claims and locks


@pytest.fixture
def db(db_url):
    database = Database(db_url)
    yield database
    database.close()


@pytest.fixture
def start_worker(db, datasets):
    started = []

    def start(settings=FAST, name=None, locate=lambda name: str(datasets / name)) -> Worker:
        worker = Worker(db, load_engine(None), settings, locate=locate, name=name)
        worker.start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


class ClaimCalls:
    """What the workers asked of jobs/claims.py, in order: ``("claim", got a question)`` and ``("finish", the status
    it returned)``. The real functions run; a test waits for these events instead of sleeping a fixed time."""

    def __init__(self, monkeypatch):
        self._calls: list[tuple[str, object]] = []
        self._lock = threading.Lock()
        self._spy(monkeypatch, "claim", lambda claim: claim is not None)
        self._spy(monkeypatch, "finish", lambda status: status)

    def _spy(self, monkeypatch, name: str, summary) -> None:
        real = getattr(claims, name)

        def spy(*args, **kwargs):
            result = real(*args, **kwargs)
            with self._lock:
                self._calls.append((name, summary(result)))
            return result

        monkeypatch.setattr(claims, name, spy)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    def of(self, name: str, since: int = 0) -> list:
        with self._lock:
            return [value for called, value in self._calls[since:] if called == name]


@pytest.fixture
def claim_calls(monkeypatch) -> ClaimCalls:
    return ClaimCalls(monkeypatch)


def stored(db, eval_id) -> list:
    with db.read() as conn:
        return conn.execute(select(evaluation_results).where(evaluation_results.c.evaluation_id == eval_id)
                            .order_by(evaluation_results.c.position)).all()


def status_of(api, eval_id):
    return api.get(f"/api/v1/evaluations/{eval_id}?limit=0")


def texts(question_set) -> Counter:
    return Counter({q["question_text"]: 1 for q in question_set["questions"]})


def test_an_evaluation_runs_to_completed_with_one_result_per_question_and_its_run(api, db, db_url, rag_service,
                                                                                    start_worker):
    assert isinstance(load_engine(None), AnswerEngine)
    question_set = new_set(api, 12)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url, name="service run")["id"]
    start_worker()
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    assert (done["progress"], done["completed_questions"], done["error"], done["average_score"]) == (100, 12, None,
                                                                                                     None)
    rows = stored(db, eval_id)
    assert [r.state for r in rows] == ["DONE"] * 12 and [r.attempts for r in rows] == [1] * 12
    assert Counter(r.question_id for r in rows) == Counter(q["id"] for q in question_set["questions"])
    assert rag_service.asked == texts(question_set)
    first = api.get(f"/api/v1/evaluations/{eval_id}?limit=1")["results"][0]
    assert first["rag_answer"] == "answer to: question 0 [0]" and first["llm_judge_score"] is None
    assert first["rag_answer_sources"] == [{"position": 0, "doc_id": SOURCE, "title": "清蒸鲈鱼的做法",
                                            "content": SOURCE_TEXT, "cited": True}]
    assert first["checks"] == {} and first["error"] is None and first["latency"] > 0
    assert "answer_record" not in first
    with RunHistory(db_url) as history:
        run = history.get(done["run_id"])
    assert run.name == "service run" and run.tags == sorted([eval_id, "web"]) and run.kind == "answer"
    assert run.report.config.generator == f"http:{rag_service.url}" and run.report.config.contexts == "generator"
    assert [q.id for q in run.report.questions] == [q["id"] for q in question_set["questions"]]
    assert [q.answer for q in run.report.questions] == [r.rag_answer for r in rows]
    assert run.report.questions[0].citations[0].doc_id == SOURCE and run.report.timings["answering"] > 0


def test_pause_stops_after_the_questions_in_hand_and_resume_goes_on(api, db, rag_service, start_worker,
                                                                      claim_calls):
    rag_service.delay = 0.15
    question_set = new_set(api, 20)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    wait_for(lambda: status_of(api, eval_id)["completed_questions"] >= 3, what="three answers")
    api.post(f"/api/v1/evaluations/{eval_id}/pause")
    wait_for(lambda: all(r.state != "RUNNING" for r in stored(db, eval_id)), what="the questions in hand")
    settled, mark = status_of(api, eval_id), len(claim_calls)
    # the workers keep looking for work (each thread twice more at least), and none is taken from a paused evaluation
    wait_for(lambda: len(claim_calls.of("claim", mark)) >= 2 * FAST.threads, what="the workers looking again")
    assert not any(claim_calls.of("claim", mark))
    assert status_of(api, eval_id)["completed_questions"] == settled["completed_questions"] < 20
    assert settled["status"] == "PAUSED" and settled["run_id"] is None
    assert rag_service.count() == settled["completed_questions"]
    api.post(f"/api/v1/evaluations/{eval_id}/resume")
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    assert rag_service.asked == texts(question_set) and done["run_id"]
    assert len(stored(db, eval_id)) == 20


def test_a_service_that_stays_down_fails_the_evaluation_and_resume_asks_again(api, db, rag_service, start_worker):
    question_set = new_set(api, 10)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    rag_service.crash = True
    start_worker()
    failed = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "FAILED" and e, what="FAILED")
    assert re.match(r"question \d+ \(q_[0-9a-f]{16}\): \d+ questions in a row got no answer; the last: POST "
                    rf"{re.escape(rag_service.url)} .*Remote end closed connection", failed["error"]), failed["error"]
    # none lost: each question in hand is given back, or stored with its error (a busy machine may take a moment)
    rows = wait_for(lambda: (found := stored(db, eval_id)) and all(r.state == "PENDING" or r.error for r in found)
                    and found, what="the questions in hand given back")
    # a question in hand may be stored (with its error) after the evaluation failed: its count is kept up to date
    settled = status_of(api, eval_id)
    assert settled["status"] == "FAILED" and settled["error"] == failed["error"]
    assert settled["completed_questions"] == sum(r.state == "DONE" for r in rows) < FAILURE_STREAK + FAST.threads
    rag_service.crash = False
    resumed = api.post(f"/api/v1/evaluations/{eval_id}/resume")
    assert resumed["error"] is None and resumed["completed_questions"] == 0  # the failed ones are asked again
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    assert done["completed_questions"] == 10 and done["error"] is None and done["summary"]["errors"] == 0
    assert Counter(r.question_id for r in stored(db, eval_id)) == Counter(q["id"] for q in question_set["questions"])


def test_a_worker_without_the_corpus_cannot_start_and_says_so(api, rag_service, start_worker):
    question_set = new_set(api, 2)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker(locate=lambda name: None)
    failed = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "FAILED" and e, what="FAILED")
    assert failed["error"] == "cannot start: corpus 'dataset' is not under this worker's --datasets folder"
    assert rag_service.count() == 0


def test_a_question_the_service_refuses_is_stored_with_its_error(api, rag_service, start_worker):
    rag_service.respond = lambda request: None if request["query"].endswith("1") else default_respond(request)
    question_set = new_set(api, 3)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    done = wait_for(lambda: (e := status_of(api, eval_id))["status"] == "COMPLETED" and e, what="COMPLETED")
    shown = api.get(f"/api/v1/evaluations/{eval_id}")
    assert [r["error"] is None for r in shown["results"]] == [True, False, True]
    assert "HTTP 500" in shown["results"][1]["error"] and shown["results"][1]["rag_answer"] is None
    assert shown["summary"]["errors"] == 1 and done["run_id"]


def test_a_dead_workers_claim_is_taken_over_and_its_late_answer_dropped(api, db, rag_service, start_worker):
    question_set = new_set(api, 4)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    dead = claims.claim(db, "dead-worker", stale_after=FAST.stale_after)  # then it never beats again
    assert dead.question.position == 0 and dead.evaluation.id == eval_id
    assert [q.question_text for q in dead.evaluation.questions()] == [f"question {i}" for i in range(4)]
    start_worker(name="live-worker")
    wait_for(lambda: status_of(api, eval_id)["status"] == "COMPLETED", timeout=30, what="takeover and COMPLETED")
    rows = stored(db, eval_id)
    assert rows[0].attempts == 2 and rows[0].worker == "live-worker"
    late = ItemResult(rag_answer="late")
    assert claims.finish(db, dead, "dead-worker", late) is None
    assert stored(db, eval_id)[0].rag_answer == "answer to: question 0 [0]"
    assert len(rows) == 4 and rag_service.asked == texts(question_set)


def test_deleting_a_running_evaluation_drops_the_answer_in_hand(api, db, rag_service, start_worker, claim_calls):
    gate = threading.Event()  # the service answers only once the evaluation is deleted
    rag_service.respond = lambda request: default_respond(request) if gate.wait(60) else None
    question_set = new_set(api, 5)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    start_worker()
    wait_for(lambda: rag_service.count() >= 1, what="a question in hand")
    api.delete(f"/api/v1/evaluations/{eval_id}")
    gate.set()
    # every question the workers claimed comes back with its answer, which finds no claim to store it under
    wait_for(lambda: (n := len(claim_calls.of("finish"))) > 0 and n == sum(claim_calls.of("claim")),
             what="the answers in hand to come back")
    assert set(claim_calls.of("finish")) == {None}
    assert stored(db, eval_id) == []


def test_an_engine_is_named_module_function(monkeypatch):
    from ragretrieval.server.jobs.engine import ENGINE_VARIABLE, EngineError

    assert load_engine(None, "MY_KEY").api_key_env == "MY_KEY"
    target = "ragretrieval.server.jobs.answer_engine:AnswerEngine"
    assert load_engine(target) is AnswerEngine
    monkeypatch.setenv(ENGINE_VARIABLE, target)
    assert load_engine(None) is AnswerEngine
    for spec, message in [("ragretrieval.server", "must be written module:function"),
                          ("no_such_module:prepare", "cannot load engine 'no_such_module:prepare'"),
                          ("ragretrieval.server.jobs.answer_engine:missing", "has no attribute 'missing'"),
                          ("ragretrieval.server.jobs.answer_engine:FAILURE_STREAK", "is not callable")]:
        with pytest.raises(EngineError, match=message):
            load_engine(spec)
