"""Interrupted builds resume without asking again for finished documents (HowToCook, 20 documents)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.data.evidence import fold
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import good_reply

JOURNAL = ".llm-questions.journal.jsonl"


def args(server, corpus, out, *extra):
    return ["dataset", "build", str(corpus), "--out", str(out), "--generator", "llm", "--max-docs", "20",
            "--base-url", server.url, "--model", "fake-model", "--max-retries", "1", "--no-progress", *extra]


def journaled(out) -> int:
    path = out / JOURNAL
    return path.read_text(encoding="utf-8").count("\n") if path.exists() else 0


def check_complete(out, howtocook_corpus):
    dataset = load_dataset(out)
    documents = {d.id: d.text for d in dataset.documents}
    asked = {q.relevant[0].doc_id for q in dataset.questions}
    assert len(documents) > 300 and len(asked) == 20
    for question in dataset.questions:
        (rel,) = question.relevant
        located = fold("".join(documents[rel.doc_id][s:e] for s, e in rel.spans))[0]
        assert rel.spans and all(fold(quote)[0] in located for quote in question.metadata["evidence"])
    assert not (out / JOURNAL).exists()


def test_a_server_that_fails_midway_then_a_rerun(tmp_path, howtocook_corpus, llm_env):
    out = tmp_path / "dataset"
    with ChatServer(good_reply) as server:
        server.fail_after = 8
        first = CliRunner().invoke(main, args(server, howtocook_corpus, out, "--concurrency", "2"))
        assert first.exit_code != 0
        assert "gave up after 2 attempts; last error: HTTP 500" in first.stderr
        assert "run the same command again to continue" in first.stderr
        done = journaled(out)
        assert 6 <= done <= 8 and not (out / "manifest.json").exists()
        server.fail_after, before = None, len(server.requests)
        second = CliRunner().invoke(main, args(server, howtocook_corpus, out, "--concurrency", "2"))
        assert second.exit_code == 0, second.stderr
        assert len(server.requests) - before == 20 - done
    check_complete(out, howtocook_corpus)


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_a_killed_build_then_a_rerun(tmp_path, howtocook_corpus, llm_env):
    out = tmp_path / "dataset"
    slow = lambda request: Reply(good_reply(request).content, delay=0.2)  # noqa: E731
    with ChatServer(slow) as server:
        command = [sys.executable, "-c", "from ragretrieval.cli import main; main()",
                   *args(server, howtocook_corpus, out, "--concurrency", "1")]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)
        try:
            deadline = time.monotonic() + 120
            while journaled(out) < 5 and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        done = journaled(out)
        assert 5 <= done < 20
        before = len(server.requests)
        second = CliRunner().invoke(main, args(server, howtocook_corpus, out))
        assert second.exit_code == 0, second.stderr
        asked = len(server.requests) - before
        # a document answered but not yet journaled when the process died is served from the answer cache
        assert 20 - done - 1 <= asked <= 20 - done
        assert before <= done + 1
    check_complete(out, howtocook_corpus)
