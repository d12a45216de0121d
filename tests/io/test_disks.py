"""Disks that refuse writes: a full disk under ``RAGRETRIEVAL_CACHE_DIR`` is one ``Error:`` line
naming the cache file (it was a ``sqlite3.OperationalError`` traceback), and a re-run once there is room continues
from what was stored; a runs history on a read-only file system can still be listed, shown and exported.

The full disk and the read-only file system are real: a small tmpfs mounted for the test (mounting needs root, which
the test machines have; elsewhere the tests are skipped, saying so). A tmpfs fills like any disk (the kernel answers
ENOSPC), and a read-only remount answers EROFS to every write, root's included, which a chmod would not."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs.history import RunHistory
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.disks import fill, tmpfs


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and result.stderr.count("Error") == 1, result.stderr
    return result.stderr.splitlines()[-1]


@pytest.fixture
def chat():
    with ChatServer(lambda request: Reply("Boil the water, then cook it for 8 minutes [0].")) as server:
        yield server


def answer(dataset, chat, *extra):
    return invoke("answer", "--dataset", dataset, "--generator", "openai:gen", "--base-url", chat.url,
                  "--retriever", "bm25", "--no-save", "--no-progress", *extra)


def test_a_cache_disk_that_fills_mid_use_is_one_line_and_a_rerun_continues(demo_dataset, chat, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lines = (demo_dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(lines[0] + "\n", encoding="utf-8")
    second.write_text(lines[1] + "\n", encoding="utf-8")
    with tmpfs(tmp_path / "disk") as disk:
        monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(disk))
        assert answer(demo_dataset, chat, "--questions", first).exit_code == 0  # llm.sqlite holds one answer
        filler = fill(disk)
        message = one_error_line(answer(demo_dataset, chat, "--questions", second))  # a new answer to store
        assert message.startswith(f"Error: {disk / 'llm.sqlite'}: cannot use the LLM answer cache (")
        assert message.endswith("free space on its disk, or set $RAGRETRIEVAL_CACHE_DIR to a folder on another one; "
                                "what was stored before is kept, so a re-run continues")
        message = one_error_line(answer(demo_dataset, chat, "--questions", first))  # cached; its journal line fails
        assert message.startswith(f"Error: {disk / 'answers'}/") and ".journal.jsonl: cannot use the journal (No " \
            "space left on device): free space on its disk" in message
        asked = chat.count()
        filler.unlink()  # room again: the same command finishes, and the answer stored before is not asked again
        again = answer(demo_dataset, chat)
        assert again.exit_code == 0, again.output
        assert chat.count() - asked == len(lines) - 1 and "1 answers from cache" in again.output


def test_a_full_cache_disk_fails_dense_eval_and_answer_at_once_naming_the_file(demo_dataset, chat, tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with tmpfs(tmp_path / "disk") as disk:
        monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(disk))
        fill(disk)
        evaluated = invoke("eval", "--dataset", demo_dataset, "--retriever", "dense", "--model", "hashing",
                           "--no-save", "--no-progress")
        assert one_error_line(evaluated).startswith(f"Error: {disk / 'embeddings.sqlite'}: cannot use the "
                                                    "embedding cache (")
        assert one_error_line(answer(demo_dataset, chat)).startswith(f"Error: {disk / 'llm.sqlite'}: cannot use the "
                                                                     "LLM answer cache (")
        assert chat.count() == 0  # refused before any request was paid for


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_a_runs_history_on_a_read_only_disk_can_be_listed_shown_and_exported(demo_dataset, tmp_path):
    with tmpfs(tmp_path / "shared", "4m") as shared:
        store = shared / "runs.sqlite"
        # in a process of its own, which closes the store when it exits (a file held open keeps the remount busy)
        stored = subprocess.run([sys.executable, "-m", "ragretrieval", "eval", "--dataset", str(demo_dataset),
                                 "--retriever", "bm25", "--runs-db", str(store), "--name", "baseline", "--no-progress"],
                                capture_output=True, text=True)
        assert stored.returncode == 0, stored.stderr
        subprocess.run(["mount", "-o", "remount,ro", str(shared)], check=True)
        with pytest.raises(OSError):
            (shared / "probe").write_text("x")  # read-only for root too
        listed = invoke("runs", "list", "--runs-db", store)
        assert listed.exit_code == 0 and "baseline" in listed.output, listed.output
        shown = invoke("runs", "show", "baseline", "--runs-db", store)
        assert shown.exit_code == 0 and "Recall@k" in shown.output, shown.output
        exported = invoke("runs", "export", "baseline", "--format", "trec", "--runs-db", store)
        assert exported.exit_code == 0 and " Q0 " in exported.output
        assert invoke("runs", "compare", "baseline", "baseline", "--runs-db", store).exit_code == 0
        with RunHistory(store) as history:
            assert history.read_only and [run.name for run in history.list()] == ["baseline"]
        for refused in (invoke("runs", "tag", "baseline", "x", "--runs-db", store),
                        invoke("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--runs-db", store,
                               "--no-progress")):
            message = one_error_line(refused)
            assert "is read-only (its file or folder cannot be written): its runs can be listed" in message
        assert "evaluating" not in refused.stderr and "chunks" not in refused.output  # refused before the work
        assert sorted(p.name for p in shared.iterdir()) == ["runs.sqlite"]
