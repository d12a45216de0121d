"""Fixtures for the web app: its database on SQLite and on the real PostgreSQL (tests/conftest.py), the demo dataset
as the one corpus, the API through FastAPI's TestClient with the same-origin token, the test RAG service, workers,
and `ragretrieval serve` / `ragretrieval worker` as real processes."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient

from ragretrieval.server import ServeSettings, create_app
from ragretrieval.server.settings import WorkerSettings

from .rag_service import RagService

CORPUS = "dataset"  # the demo dataset's folder name: its corpus name under `datasets`
# a claim goes stale after 4 s without a heartbeat (every 0.2 s): short for the takeover tests, long enough that a
# busy shared machine never makes a live worker look dead
FAST = WorkerSettings(threads=2, poll_interval=0.05, heartbeat_interval=0.2, stale_after=4.0, stop_grace=5.0)


@pytest.fixture(autouse=True)
def _no_key_in_the_environment(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("RAGRETRIEVAL_SERVE_ENGINE", raising=False)
    monkeypatch.delenv("RAGRETRIEVAL_SERVE_TOKEN", raising=False)


@pytest.fixture
def db_url(history_url) -> str:
    """The web app's database: the runs history's, on SQLite and on PostgreSQL (tests/conftest.py)."""
    return history_url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


@pytest.fixture(scope="session")
def datasets(demo_dataset):
    """The folder holding the demo dataset (as ``dataset``): the server's --datasets."""
    return demo_dataset.parent


class Api:
    """The API as a page's script uses it: the same-origin token on every request that changes something."""

    def __init__(self, client: TestClient):
        self.client = client
        client.get("/api/v1/health")  # the first answer sets the rr_csrf cookie

    def request(self, method: str, path: str, expect: int | None = None, **kwargs):
        headers = kwargs.pop("headers", {})
        if method != "GET":
            headers.setdefault("X-CSRF-Token", self.client.cookies.get("rr_csrf"))
        response = self.client.request(method, path, headers=headers, **kwargs)
        if expect is not None:
            assert response.status_code == expect, response.text
        return response

    def get(self, path, expect=200, **kwargs):
        return self.request("GET", path, expect, **kwargs).json()

    def post(self, path, json=None, expect=200, **kwargs):
        response = self.request("POST", path, expect, json=json, **kwargs)
        return response.json() if response.content else None

    def put(self, path, json=None, expect=200, **kwargs):
        return self.request("PUT", path, expect, json=json, **kwargs).json()

    def delete(self, path, expect=204, **kwargs):
        return self.request("DELETE", path, expect, **kwargs)


@pytest.fixture
def client_on(datasets):
    """`client_on(url, **settings)`: a TestClient on a new app over the database at `url` (no worker unless
    asked)."""
    clients = []

    def make(runs_db: str, engine=None, **changes) -> TestClient:
        settings = ServeSettings(**{"runs_db": runs_db, "datasets": datasets, "worker": False,
                                    "worker_settings": FAST, **changes})
        client = TestClient(create_app(settings, engine=engine), base_url="http://127.0.0.1")
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def make_client(client_on, db_url):
    """`make(**settings)`: a TestClient over the test's database, SQLite or PostgreSQL."""
    return lambda **changes: client_on(db_url, **changes)


@pytest.fixture
def api(make_client) -> Api:
    return Api(make_client())


@pytest.fixture
def in_process_worker(db_url, datasets):
    """A worker with the built-in engine on the test's database, running while the test lasts."""
    from ragretrieval.server.db import Database
    from ragretrieval.server.jobs.engine import load_engine
    from ragretrieval.server.jobs.worker import Worker

    db = Database(db_url)
    worker = Worker(db, load_engine(None), FAST, locate=lambda name: str(datasets / name))
    worker.start()
    yield worker
    worker.stop()
    db.close()


@pytest.fixture
def rag_service():
    with RagService() as service:
        yield service


@contextmanager
def running_worker(db_url: str, datasets):
    """A worker with the built-in engine on the database at `db_url`, for the block's duration."""
    from ragretrieval.server.db import Database
    from ragretrieval.server.jobs.engine import load_engine
    from ragretrieval.server.jobs.worker import Worker

    db = Database(db_url)
    worker = Worker(db, load_engine(None), FAST, locate=lambda name: str(datasets / name))
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()
        db.close()


def wait_for(condition, timeout: float = 60.0, what: str = "the condition"):
    """Poll `condition()` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def run_until_done(api: Api, db_url: str, datasets, eval_id: str) -> dict:
    """A worker with the built-in engine until the evaluation is COMPLETED or FAILED; its detail."""
    from ragretrieval.server.db import Database
    from ragretrieval.server.jobs.engine import load_engine
    from ragretrieval.server.jobs.worker import Worker

    db = Database(db_url)
    worker = Worker(db, load_engine(None), FAST, locate=lambda name: str(datasets / name))
    worker.start()
    try:
        return wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=500"))["status"] in (
            "COMPLETED", "FAILED") and e, timeout=120, what="the end of the evaluation")
    finally:
        worker.stop()
        db.close()


def new_set(api: Api, n: int, prefix: str = "question", name: str = "set") -> dict:
    questions = [{"question_type": "FACTUAL", "question_text": f"{prefix} {i}", "ground_truth": f"truth {i}"}
                 for i in range(n)]
    return api.post("/api/v1/question-sets", {"name": name, "questions": questions}, expect=201)


def new_evaluation(api: Api, set_id: str, url: str, name: str = "evaluation", **extra) -> dict:
    """An evaluation answered by the RAG service at `url` (the built-in engine's http: generator); a failed request
    is not retried, so a test that makes the service fail does not wait for retries."""
    body = {"name": name, "dataset": CORPUS, "question_set_id": set_id, "generator": f"http:{url}",
            "options": {"generator_options": {"retries": 0}}, **extra}
    return api.post("/api/v1/evaluations", body, expect=201)
