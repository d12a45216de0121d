"""Fixtures for the runs history: a throwaway PostgreSQL server, histories on both back ends, small real reports."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from itertools import count
from pathlib import Path

import pytest

from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.runs import RunHistory


@pytest.fixture(autouse=True)
def _isolated_history(tmp_path, monkeypatch):
    """No test reads or writes ./.ragretrieval: the default history is a tmp file."""
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "default-runs.sqlite"))


@pytest.fixture(scope="session")
def dataset_dir(demo_dataset) -> Path:
    return demo_dataset


@pytest.fixture(scope="session")
def bm25_reports(dataset_dir):
    """Two real reports (bm25, chunk sizes 300 and 500) on the demo dataset."""
    dataset = load_dataset(dataset_dir)
    return [evaluate(dataset, EvalConfig(retriever="bm25", model=None, chunk_size=size), progress=False)
            for size in (300, 500)]


# ------------------------------------------------------------------------------------------------------ PostgreSQL
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found and shutil.which("initdb"):
        found = [shutil.which("initdb")]
    if not found:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (`make test` installs it)")
    return Path(found[-1]).parent


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server in a temporary folder on a free port of 127.0.0.1; yields its base URL.

    PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user.
    """
    bin_dir = _pg_bin()
    folder = Path(tempfile.mkdtemp(prefix="rr-pg-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    data, sockets, log = folder / "data", folder / "sockets", folder / "server.log"
    port = _free_port()

    def run(*args):
        done = subprocess.run([*as_user, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, f"{args[0]} failed: {done.stdout}{done.stderr}"

    run("mkdir", "-p", sockets)
    run(bin_dir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    run(bin_dir / "pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


_database_numbers = count()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, empty database on the session's server."""
    import psycopg

    name = f"runs_{os.getpid()}_{next(_database_numbers)}"
    with psycopg.connect(postgres_server.replace("+psycopg", "") + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def history(history_url):
    with RunHistory(history_url) as opened:
        yield opened
