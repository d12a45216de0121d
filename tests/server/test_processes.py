"""The work survives, with the built-in engine asking the test RAG service: `ragretrieval serve` killed with SIGKILL
mid-evaluation and started again finishes it with exactly one result per question and stores its run; two
`ragretrieval worker` processes on one PostgreSQL share 200 questions and none is answered twice."""

from __future__ import annotations

import re
from collections import Counter

import httpx
import pytest
from sqlalchemy import func, select

from ragretrieval.runs.history import RunHistory
from ragretrieval.runs.schema import evaluation_results
from ragretrieval.server.db import Database

from .conftest import Api, new_evaluation, new_set, wait_for
from .processes import Server, Worker

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: workers and restarts

R = evaluation_results.c


def results_per_question(url: str, eval_id: str) -> Counter:
    db = Database(url)
    try:
        with db.read() as conn:
            rows = conn.execute(select(R.question_id, func.count()).where(R.evaluation_id == eval_id,
                                                                          R.state == "DONE")
                                .group_by(R.question_id)).all()
            return Counter(dict(rows))
    finally:
        db.close()


def runs_of(url: str) -> list[tuple]:
    with RunHistory(url) as history:
        return [(run.id, run.kind, run.n_questions) for run in history.list()]


def remote_api(url: str) -> Api:
    return Api(httpx.Client(base_url=url, timeout=30))


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_a_server_killed_mid_evaluation_finishes_it_after_a_restart(tmp_path, db_url, datasets, rag_service):
    rag_service.delay = 0.1
    server = Server(db_url, datasets, tmp_path / "serve-1.log")
    try:
        api = remote_api(server.url)
        question_set = new_set(api, 40)
        eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
        wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["completed_questions"] >= 5,
                 what="five answers before the kill")
        server.kill()
    finally:
        server.stop()
    killed_at = results_per_question(db_url, eval_id)
    assert 5 <= sum(killed_at.values()) < 40
    server = Server(db_url, datasets, tmp_path / "serve-2.log")
    try:
        api = remote_api(server.url)
        finished = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] ==
                            "COMPLETED" and e, timeout=120, what="COMPLETED after the restart")
    finally:
        server.stop()
    assert finished["completed_questions"] == 40 and finished["progress"] == 100
    per_question = results_per_question(db_url, eval_id)
    assert per_question == Counter({q["id"]: 1 for q in question_set["questions"]})
    # asked again: at most the questions that were in hand when the process died (2 threads)
    assert set(rag_service.asked) == {q["question_text"] for q in question_set["questions"]}
    assert sum(rag_service.asked.values()) <= 40 + 2
    assert finished["run_id"] and runs_of(db_url) == [(finished["run_id"], "answer", 40)]


def test_two_workers_on_postgresql_share_200_questions(tmp_path, postgres_url, datasets, rag_service, client_on):
    rag_service.delay = 0.01
    api = Api(client_on(postgres_url))  # the API only: the workers are other processes
    question_set = new_set(api, 200)
    eval_id = new_evaluation(api, question_set["id"], rag_service.url)["id"]
    workers = [Worker(postgres_url, datasets, tmp_path / f"worker-{i}.log", "--threads", "3") for i in range(2)]
    try:
        done = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] == "COMPLETED"
                        and e, timeout=240, what="COMPLETED by two workers")
    finally:
        codes = [worker.stop() for worker in workers]
    assert codes == [0, 0], [w.output() for w in workers]
    assert done["completed_questions"] == 200 and done["error"] is None
    assert runs_of(postgres_url) == [(done["run_id"], "answer", 200)]  # stored once, by one of the two
    assert rag_service.asked == Counter({q["question_text"]: 1 for q in question_set["questions"]})  # none twice
    assert results_per_question(postgres_url, eval_id) == Counter({q["id"]: 1 for q in question_set["questions"]})
    db = Database(postgres_url)
    try:
        with db.read() as conn:
            by_worker = Counter(conn.execute(select(R.worker).where(R.evaluation_id == eval_id)).scalars())
    finally:
        db.close()
    assert len(by_worker) == 2 and all(n >= 10 for n in by_worker.values()), by_worker  # both took a share


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_serve_makes_a_token_when_asked_and_the_api_then_needs_it(tmp_path, sqlite_url, datasets):
    server = Server(sqlite_url, datasets, tmp_path / "serve.log", "--token", "--no-worker")
    try:
        token = re.search(r"^token: (\S+)$", server.output(), re.M).group(1)
        assert len(token) >= 24
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/api/v1/question-sets").status_code == 401
            assert client.get("/api/v1/question-sets", headers={"Authorization": f"Bearer {token}"}).json()[
                "total"] == 0
            assert client.get("/evaluations/list", follow_redirects=True).url.path == "/login"
    finally:
        server.stop()
