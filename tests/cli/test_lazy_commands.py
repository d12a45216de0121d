"""Commands load when they run (cli/lazy.py): ``ragretrieval --help`` and ``ragretrieval NOUN --help`` import none
of the heavy libraries, list exactly what the loaded commands would, and every listed command still resolves."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.cli.aliases import RENAMED
from ragretrieval.cli.lazy import LazyGroup

NOUNS = ["dataset", "questions", "judge", "runs"]
HEAVY = ["scipy", "sqlalchemy", "torch", "pandas", "numpy", "pydantic"]
# what a command's own --help may not import: its options are built from the settings models (pydantic, numpy), but
# the runs history, the statistics and the models load when the command runs
HEAVY_FOR_A_COMMAND = ["scipy", "sqlalchemy", "torch", "pandas", "pydantic_settings"]
MODULES_SCRIPT = ("import sys\nfrom ragretrieval.cli import main\ntry:\n    main(sys.argv[1:])\n"
                  "except SystemExit:\n    pass\nprint(' '.join(sorted(sys.modules)))")


def help_modules(arguments: list[str]) -> tuple[str, set[str]]:
    """The help `arguments` print, and the top-level packages imported to print it (in a fresh process)."""
    result = subprocess.run([sys.executable, "-c", MODULES_SCRIPT, *arguments], capture_output=True, text=True,
                            check=True)
    return result.stdout, {m.split(".")[0] for m in result.stdout.splitlines()[-1].split()}

# `ragretrieval --help` at 80 columns before commands loaded lazily (0.2's listing, unchanged)
TOP_LEVEL_LISTING = """\
Commands:
  answer     Answer every question of a dataset and score the answers:...
  dataset    Make a dataset (corpus.jsonl, questions.jsonl,...
  eval       Evaluate retrieval on a dataset: chunk, embed (cached),...
  judge      Grade with an LLM: `chunks` labels the pooled top chunks of...
  plugins    List the retrievers, embedders, rerankers, vector stores,...
  questions  Question sets: `import` and `export` them (agent-evaluation...
  runs       The history of evaluation runs (every `eval` and every sweep...
  score      Score RUN (qid Q0 docid rank score tag) against QRELS (qid 0...
  serve      Serve question sets, evaluations and their results on...
  sweep      Evaluate every combination of models x retrievers x...
  worker     Answer the questions of pending and running evaluations...
"""

# prints the help of the top level and of each noun, as JSON; with "load" first, every command is imported
HELP_SCRIPT = """
import contextlib, io, json, sys
import click
from ragretrieval.cli import main

def load(group):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            load(command)

if sys.argv[1] == "load":
    load(main)
helps = {}
for noun in ["", *sys.argv[2:]]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        main([*noun.split(), "--help"], prog_name="ragretrieval", standalone_mode=False)
    helps[noun] = out.getvalue()
print(json.dumps({"helps": helps, "modules": sorted(sys.modules)}))
"""


def helps(load: bool, columns: int = 80) -> dict:
    environment = {**os.environ, "COLUMNS": str(columns)}
    result = subprocess.run([sys.executable, "-c", HELP_SCRIPT, "load" if load else "lazy", *NOUNS],
                            capture_output=True, text=True, env=environment, check=True)
    return json.loads(result.stdout)


@pytest.mark.parametrize("arguments", [["--help"], *([noun, "--help"] for noun in NOUNS)])
def test_help_imports_no_heavy_library(arguments):
    output, modules = help_modules(arguments)
    assert "Usage:" in output
    assert not modules & set(HEAVY)


@pytest.mark.parametrize("columns", [80, 60])
def test_the_listing_is_what_the_loaded_commands_make(columns):
    lazy, loaded = helps(load=False, columns=columns), helps(load=True, columns=columns)
    assert lazy["helps"] == loaded["helps"]
    # the lazy side stayed lazy
    assert "ragretrieval.cli.evaluate" in loaded["modules"] and "ragretrieval.cli.evaluate" not in lazy["modules"]


def test_the_top_level_listing_is_unchanged():
    assert helps(load=False)["helps"][""].endswith(TOP_LEVEL_LISTING)


def lazy_entries(group: click.Group, path=()):
    """(path, entry, loaded command) for every lazy command below `group`."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        entry = group.lazy.get(name) if isinstance(group, LazyGroup) else None
        command = group.get_command(ctx, name)
        if entry is not None:
            yield " ".join((*path, name)), entry, command
        if isinstance(command, click.Group):
            yield from lazy_entries(command, (*path, name))


ENTRIES = list(lazy_entries(main))


@pytest.mark.parametrize(("path", "entry", "command"), ENTRIES, ids=[path for path, _, _ in ENTRIES])
def test_the_stored_sentence_is_the_commands_own(path, entry, command):
    """The table's sentence (cli/__init__.py, cli/nouns.py) is the one click takes from the command's docstring: edit
    a docstring's first sentence and this names the table line to edit with it."""
    assert entry.short_help == command.get_short_help_str(limit=sys.maxsize), path
    assert command.hidden == entry.hidden


@pytest.mark.parametrize("path", [path for path, _, _ in ENTRIES])
def test_a_commands_help_imports_neither_the_history_nor_the_statistics(path):
    """``ragretrieval eval --help``, ``ragretrieval runs list --help``, ...: SQLAlchemy (the runs history), SciPy
    (the statistics), torch and pandas load when the command runs."""
    output, modules = help_modules([*path.split(), "--help"])
    assert "Usage:" in output
    assert not modules & set(HEAVY_FOR_A_COMMAND), path


def test_every_listed_command_resolves_and_shows_its_help():
    runner = CliRunner()
    paths = [path for path, _, _ in ENTRIES] + list(RENAMED)
    assert len(ENTRIES) == 27  # 8 commands at the top (stores hidden) and 19 verbs of the four nouns
    for path in paths:
        result = runner.invoke(main, [*path.split(), "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, path


def test_judge_without_a_verb_still_runs_chunks():
    result = CliRunner().invoke(main, ["judge", "--dataset", "nowhere", "--runs", "r.trec"])
    assert "warning: 'judge' is now 'judge chunks'" in result.stderr
    assert "No such command" not in result.output
