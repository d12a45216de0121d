"""The command line as nouns with verbs: at most eleven entries in ``ragretrieval --help``, and
every 0.2 spelling still running as a hidden alias that prints one deprecation line to stderr and then does exactly
what the new spelling does (same output, same files, same exit status)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.cli.aliases import RENAMED
from ragretrieval.testing.chat_server import JUDGE_REPLY, TEST_API_KEY, ChatServer, Reply

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_CORPUS = REPO_ROOT / "datasets" / "demo" / "dishes"
ANSWER_QUESTIONS = REPO_ROOT / "datasets" / "demo" / "answer_questions.jsonl"
# every top-level command of 0.2's `ragretrieval --help` and its new spelling
OLD_COMMANDS = {**RENAMED, "judge": "judge chunks"}
WARNING = re.compile(r"^warning: '([a-z-]+)' is now '([a-z -]+)'; the old name stops working in 0\.4$")


def run(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def entries(help_text: str) -> list[str]:
    listed = help_text.split("Commands:\n", 1)[1]
    return [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line.split()]


def test_the_top_level_lists_at_most_eleven_nouns_and_no_old_name():
    listed = entries(run("--help").stdout)
    assert len(listed) <= 11
    assert set(listed) == {"dataset", "questions", "eval", "sweep", "answer", "judge", "runs", "score", "plugins",
                           "serve", "worker"}
    assert not set(listed) & set(OLD_COMMANDS) - {"judge"}


def test_the_groups_hold_their_verbs():
    assert {"build", "import", "export"} <= set(entries(run("dataset", "--help").stdout))
    assert {"import", "export", "import-traces", "nuggets"} <= set(entries(run("questions", "--help").stdout))
    assert {"chunks", "answers", "calibrate"} <= set(entries(run("judge", "--help").stdout))
    assert {"list", "show", "rm", "tag", "rename", "export", "compare", "report"} <= set(
        entries(run("runs", "--help").stdout))


def test_the_old_readme_names_every_alias():
    """The 0.2 README's commands (its "ragretrieval NAME" lines) are all in the table, so none is forgotten."""
    names = {"build-dataset", "import-questions", "export-questions", "import-dataset", "export-dataset",
             "import-traces", "judge", "judge-answers", "compare", "report", "calibrate", "stores"}
    assert names == set(OLD_COMMANDS)


@pytest.mark.parametrize("old", sorted(OLD_COMMANDS))
def test_every_old_name_shows_the_new_help_after_one_warning(old):
    new = OLD_COMMANDS[old]
    if old == "judge":  # the group's own help: `judge --help` is the group now; its old options are `chunks`'
        result = run("judge", "--dataset", "x", "--help")
    else:
        result = run(old, "--help")
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and WARNING.match(lines[0]).groups() == (old, new)
    if old == "stores":  # a command of its own still (`plugins` lists more): its help, as in 0.2
        assert "vector stores" in result.stdout
        return
    expected = run(*new.split(), "--help").stdout
    assert result.stdout.split("\n", 1)[1] == expected.split("\n", 1)[1]  # all but the usage line's name


def test_a_new_name_prints_no_warning():
    assert run("dataset", "build", "--help").stderr == ""
    assert run("judge", "--help").stderr == ""
    assert not any(map(WARNING.match, run("judge", code=2).stderr.splitlines()))  # the group's help, exit 2


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A demo dataset, two stored retrieval runs and one answer run in a history of their own."""
    folder = tmp_path_factory.mktemp("old-names")
    history = folder / "runs.sqlite"
    run("dataset", "build", DEMO_CORPUS, "--out", folder / "dataset")
    for name, retriever in (("lexical", "bm25"), ("dense", "dense")):
        run("eval", "--dataset", folder / "dataset", "--retriever", retriever, "--name", name, "--runs-db", history,
            "--out", folder / f"{name}.json", "--no-progress")
    run("answer", "--dataset", folder / "dataset", "--questions", ANSWER_QUESTIONS, "--generator", "extractive",
        "--retriever", "bm25", "--name", "answers", "--runs-db", history, "--no-progress")
    return folder, history


def same(old: list, new: list, folder, code=0):
    """Run the old and the new spelling; both end with `code` and print the same (paths aside); the old one warns
    once."""
    before, after = run(*old, code=code), run(*new, code=code)
    def said(lines):  # a usage error's first two lines name the command as typed
        return [line.replace("-old", "-new") for line in lines if not line.startswith(("Usage: ", "Try '"))]

    warning, *rest = before.stderr.splitlines()
    assert WARNING.match(warning) and said(rest) == said(after.stderr.splitlines())
    assert before.stdout.replace("-old", "-new") == after.stdout
    return before, after


def test_every_old_name_runs_a_real_command_like_the_new_one(work, monkeypatch):
    folder, history = work
    dataset = folder / "dataset"
    same(["build-dataset", DEMO_CORPUS, "--out", folder / "built-old"],
         ["dataset", "build", DEMO_CORPUS, "--out", folder / "built-new"], folder)
    assert (folder / "built-old" / "questions.jsonl").read_bytes() == (
        folder / "built-new" / "questions.jsonl").read_bytes()

    for suffix, spelling in (("old", ["export-dataset"]), ("new", ["dataset", "export"])):
        run(*spelling, dataset, "--format", "beir", "--out", folder / f"beir-{suffix}")
        run(*(["import-dataset"] if suffix == "old" else ["dataset", "import"]), "--format", "beir",
            folder / f"beir-{suffix}", "--out", folder / f"imported-{suffix}", "--no-progress")
    assert (folder / "beir-old" / "corpus.jsonl").read_bytes() == (folder / "beir-new" / "corpus.jsonl").read_bytes()
    assert (folder / "imported-old" / "questions.jsonl").read_bytes() == (
        folder / "imported-new" / "questions.jsonl").read_bytes()

    same(["export-questions", "--dataset", dataset, "--out", folder / "agent-old.jsonl"],
         ["questions", "export", "--dataset", dataset, "--out", folder / "agent-new.jsonl"], folder)
    same(["import-questions", folder / "agent-old.jsonl", "--dataset", dataset, "--out", folder / "q-old.jsonl"],
         ["questions", "import", folder / "agent-old.jsonl", "--dataset", dataset, "--out", folder / "q-new.jsonl"],
         folder)
    assert (folder / "q-old.jsonl").read_bytes() == (folder / "q-new.jsonl").read_bytes()
    same(["import-traces", folder / "missing.otlp.json", "--format", "otlp", "--out", folder / "t.jsonl"],
         ["questions", "import-traces", folder / "missing.otlp.json", "--format", "otlp", "--out",
          folder / "t.jsonl"], folder, code=2)

    same(["compare", "lexical", "dense", "-m", "recall@5", "--runs-db", history],
         ["runs", "compare", "lexical", "dense", "-m", "recall@5", "--runs-db", history], folder)
    same(["compare", "lexical", "nope", "--runs-db", history],
         ["runs", "compare", "lexical", "nope", "--runs-db", history], folder, code=2)
    same(["report", "lexical", "dense", "--runs-db", history, "--html", folder / "report-old.html"],
         ["runs", "report", "lexical", "dense", "--runs-db", history, "--html", folder / "report-new.html"], folder)
    assert (folder / "report-old.html").stat().st_size > 1000 and (folder / "report-new.html").exists()
    stores = run("stores")  # its 0.2 table still; `plugins --kind stores` lists the stores with their options
    assert [WARNING.match(line).groups() for line in stores.stderr.splitlines()] == [("stores", "plugins --kind stores")]
    assert "faiss" in stores.stdout and "faiss" in run("plugins", "--kind", "stores").stdout

    labels = folder / "labels.jsonl"
    labels.write_text("".join(json.dumps({"question_id": f"q{i}", "value": i % 2}) + "\n" for i in range(12)),
                      encoding="utf-8")
    same(["calibrate", "--predictions", labels, "--labels", labels, "--json"],
         ["judge", "calibrate", "--predictions", labels, "--labels", labels, "--json"], folder)

    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(folder / "llm-cache"))
    with ChatServer(lambda request: Reply('{"score": 2, "reasoning": "fits"}')) as server:
        for suffix, spelling in (("old", ["judge"]), ("new", ["judge", "chunks"])):
            result = run(*spelling, "--dataset", dataset, "--runs", folder / "lexical.json", "--depth", "2",
                         "--out", folder / f"judgements-{suffix}.json", "--base-url", server.url, "--no-progress")
            assert ("warning: 'judge' is now 'judge chunks'" in result.stderr) == (suffix == "old")
    old, new = (json.loads((folder / f"judgements-{s}.json").read_text(encoding="utf-8")) for s in ("old", "new"))
    assert old["labels"] == new["labels"] and old["labels"]
    with ChatServer(lambda request: Reply(JUDGE_REPLY)) as server:
        for suffix, spelling in (("old", ["judge-answers"]), ("new", ["judge", "answers"])):
            result = run(*spelling, "answers", "--judge", "correctness", "--judge-base-url", server.url,
                         "--judge-language", "en", "--new-run", "--name", f"judged-{suffix}", "--runs-db", history,
                         "--no-progress")
            assert ("warning: 'judge-answers' is now 'judge answers'" in result.stderr) == (suffix == "old")
    shown = [json.loads(run("runs", "list", "--json", "--runs-db", history, "-m", "answer:score").stdout
                        .splitlines()[i]) for i in (-2, -1)]
    assert [row["name"] for row in shown] == ["judged-old", "judged-new"]


OLD_README_LINES = (Path(__file__).with_name("readme_0_2_commands.txt").read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("line", OLD_README_LINES)
def test_every_command_line_of_the_0_2_readme_still_parses(line):
    """Each command line of the 0.2 README (readme_0_2_commands.txt, copied from it) with --help: click
    parses every option before the eager --help, so an option or a command that no longer exists fails here."""
    result = run(*shlex.split(line)[1:], "--help")
    assert result.stdout.startswith("Usage: ")
    assert all(WARNING.match(warning) for warning in result.stderr.splitlines()) and len(result.stderr.splitlines()) <= 1
