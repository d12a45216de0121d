"""The API examples of docs/web.md run, as written, against `ragretrieval serve --no-worker` on the demo dataset."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main

from .processes import Server

DOC = Path(__file__).resolve().parents[2] / "docs" / "web.md"
MARK = "<!-- runs in tests/server/test_docs.py -->"


def examples(language: str, mark: str = MARK) -> list[str]:
    return re.findall(re.escape(mark) + rf"\n```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def server(tmp_path_factory, datasets):
    folder = tmp_path_factory.mktemp("docs")
    process = Server(f"sqlite:///{folder / 'runs.sqlite'}", datasets, folder / "serve.log", "--no-worker")
    yield process
    process.stop()


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_the_curl_session_runs(server):
    (script,) = examples("bash")
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120,
                          env={"BASE": server.url, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('[{"name":"dataset","documents":') and lines[1:] == ["3", "PENDING", "PAUSED", "0",
                                                                                    "409"]


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_the_python_example_runs(server):
    (code,) = examples("python")
    done = subprocess.run([sys.executable, "-c", code.replace("http://127.0.0.1:8000", server.url)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{'finished': 0, 'pending': ")


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_the_example_that_runs_to_the_end_stores_a_run(tmp_path, datasets):
    (code,) = examples("python", "<!-- runs to the end in tests/server/test_docs.py -->")
    runs_db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = Server(runs_db, datasets, tmp_path / "serve.log")
    try:
        done = subprocess.run([sys.executable, "-c", code.replace("http://127.0.0.1:8000", server.url)],
                              capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    status, run_id, recall = done.stdout.split()
    assert status == "COMPLETED" and run_id.startswith("r-") and 0 < float(recall) <= 1
    report = CliRunner().invoke(main, ["runs", "report", "bm25 floor, k=3", "--runs-db", runs_db, "--html",
                                       str(tmp_path / "floor.html")])
    assert report.exit_code == 0, report.output


def test_the_engine_example_answers_an_evaluation(tmp_path, monkeypatch, api, db_url, datasets):
    from ragretrieval.server.db import Database
    from ragretrieval.server.jobs.engine import load_engine
    from ragretrieval.server.jobs.worker import Worker

    from .conftest import FAST, new_set, wait_for

    (code,) = re.findall(r"<!-- an engine: tests/server/test_docs.py -->\n```python\n(.*?)```",
                         DOC.read_text(encoding="utf-8"), re.S)
    (tmp_path / "docs_engine.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    question_set = new_set(api, 3)
    eval_id = api.post("/api/v1/evaluations", {"name": "docs engine", "dataset": "dataset", "generator": "extractive",
                                               "question_set_id": question_set["id"]}, expect=201)["id"]
    db = Database(db_url)
    worker = Worker(db, load_engine("docs_engine:prepare"), FAST, locate=lambda name: str(datasets / name))
    worker.start()
    try:
        wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["status"] == "COMPLETED", what="done")
    finally:
        worker.stop()
        db.close()
    shown = api.get(f"/api/v1/evaluations/{eval_id}")
    assert shown["average_score"] == 3 and shown["results"][0]["rag_answer"] == "I would look this up: question 0"


def test_the_deciding_session_runs_with_a_worker(tmp_path, datasets):
    """Compare, filters, export and a verdict (docs/web.md, Examples), against a server with its worker."""
    (script,) = examples("bash", "<!-- runs with a worker in tests/server/test_docs.py -->")
    server = Server(f"sqlite:///{tmp_path / 'runs.sqlite'}", datasets, tmp_path / "serve.log")
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path, env={"BASE": server.url, "PATH": "/usr/bin:/bin"})
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith("#")]
    assert lines[0].startswith("{'a': 1.0, 'b': 0.98") and "'n': 30" in lines[0]  # cite_f1, k=3 against k=1
    assert lines[3] == "400" and lines[4].startswith("{'recall': 0.5, 'mrr': 1.0")
    assert lines[-2] == "1" and lines[-1].startswith("{'annotated': 1, 'correct': 0, 'partly_correct': 1")
    assert (tmp_path / "k1.csv").read_bytes().startswith("\ufeffposition,question_id".encode("utf-8"))
