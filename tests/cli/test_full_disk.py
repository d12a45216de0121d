"""A full disk under any file a command writes is one ``Error:`` line naming that file (the report, the export, the
dataset file, the log), exit 1, no traceback, and nothing half-written left behind; a temp file a killed writer left
is removed by the next write of the same file.

The disk is real: a small tmpfs, filled to ENOSPC (ragretrieval/testing/disks.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.io.atomic import atomic_writer, remove_leftovers
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.disks import fill, tmpfs

TREC = Path(__file__).parents[1] / "data" / "trec_eval"
SPAN = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "rag",
        "startTimeUnixNano": "1732000000000000000", "endTimeUnixNano": "1732000001000000000",
        "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
                       {"key": "input.value", "value": {"stringValue": "How do I boil an egg?"}},
                       {"key": "output.value", "value": {"stringValue": "Six minutes."}}]}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def inputs(demo_dataset, tmp_path_factory) -> dict:
    """What the writers read: a stored run and its report, a BEIR folder, a question CSV, traces, qrels and a run."""
    folder = tmp_path_factory.mktemp("full-disk-inputs")
    runs = folder / "runs.sqlite"
    ok("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--runs-db", runs, "--name", "base",
       "--out", folder / "report.json", "--no-progress")
    ok("dataset", "export", demo_dataset, "--format", "beir", "--out", folder / "beir")
    (folder / "questions.csv").write_text("question_type,question_text,ground_truth\nFACTUAL,How long?,8 min\n",
                                          encoding="utf-8")
    (folder / "traces.json").write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [SPAN]}]}]}),
                                        encoding="utf-8")
    return {"dataset": demo_dataset, "runs": runs, "report": folder / "report.json", "beir": folder / "beir",
            "csv": folder / "questions.csv", "traces": folder / "traces.json"}


@pytest.fixture(scope="module")
def chat():
    with ChatServer(lambda request: Reply("Boil the water, then cook it for 8 minutes [0].")) as server:
        yield server


# each writer: (its arguments, given the inputs and the full disk; the file its error must name)
WRITERS = {
    "questions export": lambda i, d: (["questions", "export", "--dataset", i["dataset"], "--out", d / "q.jsonl"],
                                      d / "q.jsonl"),
    "questions import": lambda i, d: (["questions", "import", i["csv"], "--format", "aperag-csv", "--out",
                                       d / "q.jsonl"], d / "q.jsonl"),
    "questions import-traces": lambda i, d: (["questions", "import-traces", i["traces"], "--format", "otlp", "--out",
                                              d / "t.jsonl"], d / "t.jsonl"),
    "dataset build": lambda i, d: (["dataset", "build", Path(__file__).parents[2] / "datasets" / "demo" / "dishes",
                                    "--out", d / "ds"], d / "ds" / "corpus.jsonl"),
    "dataset import beir": lambda i, d: (["dataset", "import", i["beir"], "--format", "beir", "--out", d / "ds"],
                                         d / "ds" / "corpus.jsonl"),
    "dataset export beir": lambda i, d: (["dataset", "export", i["dataset"], "--format", "beir", "--out", d / "b"],
                                         d / "b" / "corpus.jsonl"),
    "eval --out": lambda i, d: (["eval", "--dataset", i["dataset"], "--retriever", "bm25", "--no-save",
                                 "--no-progress", "--out", d / "r.json"], d / "r.json"),
    "score --per-query": lambda i, d: (["score", TREC / "qrels.test", TREC / "results.test", "--per-query",
                                        d / "pq.tsv"], d / "pq.tsv"),
    "runs export json": lambda i, d: (["runs", "export", "base", "--format", "json", "--runs-db", i["runs"], "--out",
                                       d / "run.json"], d / "run.json"),
    "runs export trec": lambda i, d: (["runs", "export", "base", "--format", "trec", "--runs-db", i["runs"], "--out",
                                       d / "run.trec"], d / "run.trec"),
    "runs report": lambda i, d: (["runs", "report", i["report"], "--out", d / "r.html"], d / "r.html"),
}


def assert_names_the_file(result, target: Path) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and result.stderr.count("Error") == 1, result.stderr
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"Error: {target}: cannot write it (No space left on device): free space on its "
                              "disk, or write it to another disk; "), message
    return message


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_full_disk_names_the_file_being_written(writer, inputs, tmp_path):
    with tmpfs(tmp_path / "disk", "256k") as disk:
        args, target = WRITERS[writer](inputs, disk)
        fill(disk)
        assert_names_the_file(invoke(*args), target)
        assert not [p for p in disk.rglob("*.tmp")]  # no temp file left behind


@pytest.mark.parametrize("flag", ["--out", "--log"])
def test_answer_on_a_full_disk_names_its_report_or_log(flag, inputs, chat, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with tmpfs(tmp_path / "disk", "256k") as disk:
        target = disk / ("a.json" if flag == "--out" else "a.log")
        fill(disk)
        result = invoke("answer", "--dataset", inputs["dataset"], "--generator", "openai:gen", "--base-url", chat.url,
                        "--retriever", "bm25", "--no-save", "--no-progress", flag, target)
        message = assert_names_the_file(result, target)
        assert message.endswith("the lines written before are kept" if flag == "--log" else
                                "nothing was replaced: a file already there is as it was")


KILLED_WRITER = """
import os, signal, sys
from ragretrieval.io.atomic import atomic_writer
with atomic_writer(sys.argv[1]) as f:
    f.write("half a corpus\\n" * 1000)
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 mid-write: no cleanup runs
"""


def killed_mid_write(target: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    [left] = [p for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.") and p.suffix == ".tmp"]
    return left


def test_a_killed_beir_import_leaves_no_temp_file_after_the_next_run(inputs, tmp_path):
    out = tmp_path / "imported"
    left = killed_mid_write(out / "corpus.jsonl")  # what a kill -9 of `dataset import` leaves: a hidden temp corpus
    others = [out / ".corpus.jsonl.keep-me.tmp", out / ".notes.txt.abcdefgh.tmp", out / "mine.tmp"]
    for path in others:  # not ours, or not of this file: never touched
        path.write_text("x", encoding="utf-8")
    ok("dataset", "import", inputs["beir"], "--format", "beir", "--out", out)
    assert not left.exists() and all(path.exists() for path in others)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".") and p.suffix != ".tmp") == [
        "corpus.jsonl", "manifest.json", "questions.jsonl"]


def test_a_temp_file_being_written_is_not_a_leftover(tmp_path):
    target = tmp_path / "corpus.jsonl"
    with atomic_writer(target) as f:  # a live writer: its temp file is locked while it writes
        f.write("a line\n")
        [live] = [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
        assert remove_leftovers(target) == [] and live.exists()
        with atomic_writer(target) as other:  # a second writer of the same file at once: both finish
            other.write("another\n")
        assert live.exists()
    assert target.read_text(encoding="utf-8") == "a line\n" and not list(tmp_path.glob("*.tmp"))
    dead = killed_mid_write(target)
    assert remove_leftovers(target) == [dead] and not dead.exists()


def test_a_full_disk_under_the_nuggets_file_names_its_journal_and_what_moves_it(inputs, llm_env, tmp_path):
    questions = Path(__file__).parents[2] / "datasets" / "demo" / "answer_questions.jsonl"
    nuggets = '{"nuggets": [{"text": "Steam it for 8 minutes", "importance": "vital"}]}'
    with ChatServer(lambda request: Reply(nuggets)) as server, tmpfs(tmp_path / "disk", "256k") as disk:
        fill(disk)
        result = invoke("questions", "nuggets", inputs["dataset"], "--questions", questions, "--out",
                        disk / "nuggets.jsonl", "--nuggets-model", "m", "--nuggets-base-url", server.url,
                        "--no-progress")
        assert result.exit_code == 1 and result.stderr.count("Error") == 1, result.output
        message = result.stderr.strip().splitlines()[-1]
        assert message.startswith(f"Error: {disk / '.nuggets.journal.jsonl'}: cannot use the journal (No space left "
                                  "on device): free space on its disk, or write the nuggets file (--out) to a "
                                  "folder on another disk: its journal is kept beside it; "), message
        assert "RAGRETRIEVAL_CACHE_DIR" not in message  # it does not move this journal
