"""The README's command lines run as written (its Python block runs in tests/face/test_face.py): each ``bash`` block
marked ``<!-- runs in tests/cli/test_readme.py -->``, line by line, in a folder laid out like the repository; the
model endpoint a line names is the chat server on 127.0.0.1, and `serve` is started as a real process and asked for
its first page. The Makefile's `demo` target's command lines run the same way, so `make demo` keeps working."""

from __future__ import annotations

import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- runs in tests/cli/test_readme.py -->"
README_ENDPOINT = "http://localhost:11434/v1"


def command_lines(block: str) -> list[tuple[dict, list[str]]]:
    """(environment assignments, arguments after `ragretrieval`) of each command of a shell block."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        env = {}
        while re.match(r"^[A-Z_]+=", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        assert words[0] == "ragretrieval", line
        found.append((env, words[1:]))
    return found


def readme_blocks() -> list[list[tuple[dict, list[str]]]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [command_lines(b) for b in re.findall(re.escape(MARK) + r"\n```bash\n(.*?)```", text, re.S)]


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A working folder holding datasets/demo as the repository does, with a runs history of its own."""
    shutil.copytree(ROOT / "datasets" / "demo", tmp_path / "datasets" / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "runs.sqlite"))
    return tmp_path


def run(arguments, env, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, f"ragretrieval {shlex.join(arguments)}\n{result.output}"
    assert "warning: '" not in result.stderr, "the README shows an old command name"
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(arguments, folder: Path) -> str:
    """Start `ragretrieval serve` as the README says (on a free port) and return its first page."""
    port = free_port()
    log = (folder / "serve.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "ragretrieval", *arguments, "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    return response.read().decode("utf-8")
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((folder / "serve.log").read_text(encoding="utf-8", errors="replace")) from None
                time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(30)
        log.close()


def test_the_readme_has_the_three_workflows():
    blocks = readme_blocks()
    assert len(blocks) == 3
    first = [arguments[:2] for _, arguments in blocks[0]]
    assert ["dataset", "build"] in first and ["runs", "compare"] in first and ["runs", "report"] in first
    assert [arguments[:1] for _, arguments in blocks[1]][0] == ["answer"]
    assert blocks[2][0][1][0] == "serve"
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.model  # the README's eval uses the default model, m3e-small
def test_every_readme_command_runs_as_written(repository, monkeypatch):
    retrieval, answers, web = readme_blocks()
    for env, arguments in retrieval:
        run(arguments, env, monkeypatch)
    assert "<html" in (repository / "report.html").read_text(encoding="utf-8")[:200].lower()

    with ChatServer(lambda request: Reply(JUDGE_REPLY)) as server:
        shown = [run([server.url if a == README_ENDPOINT else a for a in arguments], env, monkeypatch)
                 for env, arguments in answers]
        assert len(server.requests) > 0  # the judges asked the model the line names
    assert "correctness" in shown[-1].stdout and "floor" in shown[-1].stdout

    ((env, arguments),) = web
    page = serve(arguments, repository)
    assert "demo-dataset" in page or "ragretrieval" in page.lower()


@pytest.mark.model  # the demo embeds with m3e-small
def test_make_demo_runs(repository, monkeypatch):
    """The `demo` target's ragretrieval lines, as `make demo` runs them after installing."""
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in recipe.replace("\\\n", " ").splitlines()[1:]]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("$(VENV)/bin/ragretrieval")]
    assert [c[:2] for c in commands] == [["dataset", "build"], ["eval", "--dataset"], ["answer", "--dataset"]]
    for arguments in commands:
        run(arguments, {}, monkeypatch)
    assert (repository / ".demo" / "dataset" / "manifest.json").is_file()


@pytest.mark.model  # the README's eval uses the default model, m3e-small
def test_every_readme_block_runs_twice_in_the_same_folder(repository, monkeypatch):
    """Each block run again where it ran: `dataset build` finds its own build (a note, nothing written), each
    `--name` moves to the new run (a note; the earlier run keeps its id under a dated name), so the compare and report
    lines name the new runs and work."""
    retrieval, answers, web = readme_blocks()
    for _attempt in range(2):
        shown = [run(arguments, env, monkeypatch) for env, arguments in retrieval]
    notes = [line for result in shown for line in result.stderr.splitlines() if line.startswith("note:")]
    assert any("already holds this build" in line for line in notes)
    assert sum("now names run" in line for line in notes) == 2  # bm25 and dense
    compared = next(r for r, (_, arguments) in zip(shown, retrieval) if arguments[:2] == ["runs", "compare"])
    assert "A = bm25\nB = dense\n" in compared.stdout  # each name now means one run: the newer
    names = [s.name for s in RunHistory(str(repository / "runs.sqlite")).list()]
    assert sorted(name.partition("@")[0] for name in names) == ["bm25", "bm25", "dense", "dense"]
    assert names[-2:] == ["bm25", "dense"]

    with ChatServer(lambda request: Reply(JUDGE_REPLY)) as server:
        for _attempt in range(2):
            shown = [run([server.url if a == README_ENDPOINT else a for a in arguments], env, monkeypatch)
                     for env, arguments in answers]
    assert "correctness" in shown[-1].stdout and "floor" in shown[-1].stdout

    ((env, arguments),) = web
    for _attempt in range(2):
        page = serve(arguments, repository)
        assert "demo-dataset" in page or "ragretrieval" in page.lower()
