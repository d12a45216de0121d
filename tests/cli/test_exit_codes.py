"""One rule for exit codes (issue U2, item 2): 2 for anything the user must change in the command (a bad option, an
unknown run, a missing input), 1 for a failure while working. Every command is run with an option it does not have,
and every command that names runs with a run that is not there."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main

# every leaf command, by its new spelling
COMMANDS = ["dataset build", "dataset import", "dataset export", "questions import", "questions export",
            "questions generate", "questions import-traces", "questions nuggets", "eval", "sweep", "answer",
            "judge chunks", "judge answers", "judge calibrate", "runs list", "runs show", "runs rm", "runs tag",
            "runs rename", "runs export", "runs compare", "runs report", "score", "plugins", "serve", "worker"]


def leaves(group, path=()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command.hidden:
            continue
        if hasattr(command, "commands"):
            yield from leaves(command, (*path, name))
        else:
            yield " ".join((*path, name))


def run(*arguments):
    return CliRunner().invoke(main, [str(a) for a in arguments])


def test_the_list_is_every_command():
    assert sorted(leaves(main)) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_exits_2(command):
    result = run(*command.split(), "--no-such-option")
    assert result.exit_code == 2 and "No such option '--no-such-option'" in result.stderr


@pytest.fixture
def empty_history(tmp_path, monkeypatch):
    url = tmp_path / "runs.sqlite"
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", str(url))  # read by every --runs-db (click's envvar)
    return url


UNKNOWN_RUN = [
    ["runs", "show", "nope"], ["runs", "rm", "nope"], ["runs", "tag", "nope", "x"], ["runs", "rename", "nope", "x"],
    ["runs", "export", "nope", "--format", "json"], ["runs", "compare", "nope", "x"],
    ["runs", "report", "nope", "--out", "r.html"], ["judge", "answers", "nope", "--judge", "correctness"],
    ["judge", "calibrate", "nope", "--labels", "LABELS", "--metric", "m"],
    ["compare", "nope", "x"],  # 0.2's spelling: the same code
]


@pytest.mark.parametrize("arguments", UNKNOWN_RUN, ids=" ".join)
def test_an_unknown_run_exits_2_naming_it(arguments, empty_history, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": "q1", "value": 1}\n', encoding="utf-8")
    result = run(*[labels if a == "LABELS" else a for a in arguments])
    assert result.exit_code == 2, result.output
    assert "no run 'nope'" in result.stderr and "Traceback" not in result.output


MISSING_INPUT = [
    ["eval", "--dataset", "MISSING", "--retriever", "bm25", "--no-save"],
    ["answer", "--dataset", "MISSING", "--generator", "extractive", "--no-save"],
    ["sweep", "--dataset", "MISSING", "--retriever", "bm25"],
    ["questions", "export", "--dataset", "MISSING"],
    ["questions", "nuggets", "MISSING"],
    ["questions", "generate", "MISSING"],
    ["dataset", "export", "MISSING", "--format", "beir", "--out", "OUT"],
    ["score", "MISSING", "MISSING"],
    ["judge", "chunks", "--dataset", "MISSING", "--runs", "MISSING"],
]


@pytest.mark.parametrize("arguments", MISSING_INPUT, ids=" ".join)
def test_a_missing_input_exits_2(arguments, empty_history, tmp_path):
    replaced = {"MISSING": tmp_path / "nothing-here", "OUT": tmp_path / "out"}
    result = run(*[replaced.get(a, a) for a in arguments])
    assert result.exit_code == 2, result.output
    assert "nothing-here" in result.stderr and "Traceback" not in result.output


def test_a_failure_while_working_exits_1(tmp_path, demo_dataset):
    """A run file whose lines cannot be read is a failure of the work, not of the command line."""
    broken = tmp_path / "run.txt"
    broken.write_text("q1 Q0\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    result = run("score", qrels, broken)
    assert result.exit_code == 1 and "run.txt" in result.stderr
