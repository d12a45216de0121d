"""A real Chroma server (`chroma run`) on 127.0.0.1, started once per test session."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """(host, port) of a Chroma server whose data lives in a session tmp folder."""
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port, data = free_port(), tmp_path_factory.mktemp("chroma-server")
    log = open(data.parent / "chroma-server.log", "wb")
    process = subprocess.Popen([chroma, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {process.returncode}; see {log.name}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"chroma run did not listen on 127.0.0.1:{port} within 60 s; see {log.name}") from None
                time.sleep(0.2)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
