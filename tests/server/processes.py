"""`ragretrieval serve` and `ragretrieval worker` as real processes, with the built-in engine and short heartbeats, for
the tests that kill them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FAST_OPTIONS = ["--heartbeat", "0.3", "--stale-after", "4", "--poll", "0.1"]  # see conftest.FAST


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
               PYTHONWARNINGS="ignore", **extra)
    env.pop("RAGRETRIEVAL_SERVE_TOKEN", None)
    return env


class Process:
    def __init__(self, args: list[str], log: Path, env: dict | None = None):
        self.log = log
        self._out = log.open("ab")
        self.popen = subprocess.Popen([sys.executable, "-m", "ragretrieval", *args], stdout=self._out,
                                      stderr=subprocess.STDOUT, env=env or environment())

    def kill(self) -> None:
        """SIGKILL: no shutdown, no claims given back, nothing flushed."""
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(30)

    def stop(self) -> int:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._out.close()
        return self.popen.returncode

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


class Server(Process):
    def __init__(self, runs_db: str, datasets: Path, log: Path, *extra: str, env: dict | None = None,
                 port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__(["serve", "--port", str(self.port), "--runs-db", runs_db, "--datasets", str(datasets),
                          *FAST_OPTIONS, *extra], log, env)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"serve exited with {self.popen.returncode}:\n{self.output()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v1/health", timeout=2) as answer:
                    self.health = json.loads(answer.read())
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"serve did not answer within 90 s:\n{self.output()}")


class Worker(Process):
    def __init__(self, runs_db: str, datasets: Path, log: Path, *extra: str):
        super().__init__(["worker", "--runs-db", runs_db, "--datasets", str(datasets), *FAST_OPTIONS, *extra], log)
