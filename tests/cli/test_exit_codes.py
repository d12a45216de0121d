"""One rule for exit codes: 2 for anything the user must change in the command (a bad option, an
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


# ------------------------------------------------------------------------------------------------------------------
# Every kind of bad input, on every command that takes it: status 2 and one `Error:` line naming what to change.

@pytest.fixture
def inputs(tmp_path, demo_dataset, empty_history):
    """A folder with what the bad commands below name: the demo dataset, files that exist (to be refused, not
    replaced), BEIR folders each without one of its parts, a qrels and a run, a grid that cannot run."""
    (tmp_path / "exists.jsonl").write_text("keep me\n", encoding="utf-8")
    (tmp_path / "exists-beir").mkdir()
    (tmp_path / "exists-beir" / "corpus.jsonl").write_text("keep me\n", encoding="utf-8")
    (tmp_path / "traces.jsonl").write_text("", encoding="utf-8")
    for name, files in {"no-corpus": [], "no-queries": ["corpus.jsonl"],
                        "no-split": ["corpus.jsonl", "queries.jsonl"]}.items():
        (tmp_path / name).mkdir()
        for file in files:
            (tmp_path / name / file).write_text('{"_id": "d1", "title": "", "text": "x"}\n', encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    (tmp_path / "grid.toml").write_text('chunk_sizes = [300, "big"]\n', encoding="utf-8")
    return {"DS": demo_dataset, "NOFILE": tmp_path / "nofile.jsonl", "EXISTS": tmp_path / "exists.jsonl",
            "EXISTS_BEIR": tmp_path / "exists-beir", "TRACES": tmp_path / "traces.jsonl", "QRELS": tmp_path / "qrels.txt",
            "RUN": tmp_path / "run.txt", "GRID": tmp_path / "grid.toml", "NO_CORPUS": tmp_path / "no-corpus",
            "NO_QUERIES": tmp_path / "no-queries", "NO_SPLIT": tmp_path / "no-split", "FREE_PORT": _free_port()}


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


BAD_INPUT = {
    # a file the command reads that is not there
    "eval --questions": (["eval", "--dataset", "DS", "--retriever", "bm25", "--questions", "NOFILE", "--no-save"],
                         "nofile.jsonl: file not found"),
    "answer --questions": (["answer", "--dataset", "DS", "--generator", "extractive", "--retriever", "bm25",
                            "--questions", "NOFILE", "--no-save"], "nofile.jsonl: file not found"),
    "sweep --questions": (["sweep", "--dataset", "DS", "--retriever", "bm25", "--questions", "NOFILE"],
                          "nofile.jsonl: file not found"),
    "questions nuggets --questions": (["questions", "nuggets", "DS", "--questions", "NOFILE"],
                                      "nofile.jsonl: file not found"),
    "questions export --questions": (["questions", "export", "--dataset", "DS", "--questions", "NOFILE"],
                                     "nofile.jsonl: file not found"),
    "answer --generator file:": (["answer", "--dataset", "DS", "--generator", "file:NOFILE", "--no-save"],
                                 "nofile.jsonl: cannot read the answers file"),
    "answer --run": (["answer", "--dataset", "DS", "--generator", "extractive", "--retriever", "run-file", "--run",
                      "NOFILE", "--no-save"], "nofile.jsonl: run file not found"),
    "questions import": (["questions", "import", "NOFILE", "--dataset", "DS", "--out", "NOFILE.out"],
                         "nofile.jsonl: file not found"),
    "questions import aperag": (["questions", "import", "NOFILE", "--format", "aperag-json", "--out", "NOFILE.out"],
                                "nofile.jsonl: cannot read"),
    "eval --judgements": (["eval", "--dataset", "DS", "--retriever", "bm25", "--judgements", "NOFILE", "--no-save"],
                          "nofile.jsonl: cannot read"),
    "dataset build": (["dataset", "build", "NOFILE", "--out", "NOFILE.ds"], "nofile.jsonl: not a folder"),
    "judge chunks --runs": (["judge", "chunks", "--dataset", "DS", "--runs", "NOFILE"], "nofile.jsonl: cannot read"),
    # a BEIR folder without one of its parts
    "beir without corpus": (["dataset", "import", "NO_CORPUS", "--format", "beir", "--out", "NOFILE.ds"],
                            "not a BEIR folder (corpus.jsonl not found)"),
    "beir without queries": (["dataset", "import", "NO_QUERIES", "--format", "beir", "--out", "NOFILE.ds"],
                             "not a BEIR folder (queries.jsonl not found)"),
    "beir without the split": (["dataset", "import", "NO_SPLIT", "--format", "beir", "--out", "NOFILE.ds"],
                               "split 'test' not found"),
    # a name nothing answers to
    "score -m bogus_measure": (["score", "QRELS", "RUN", "-m", "bogus_measure"], "unknown metric 'bogus_measure'"),
    "score -m P.abc": (["score", "QRELS", "RUN", "-m", "P.abc"], "cannot parse metric name 'P.abc'"),
    "score -m recal@5": (["score", "QRELS", "RUN", "-m", "recal@5"], "unknown metric 'recal'"),
    "score --trec-eval -m P.abc": (["score", "--trec-eval", "QRELS", "RUN", "-m", "P.abc"],
                                   "measure P.abc: cutoffs must be positive integers"),
    "score --trec-eval -m bogus": (["score", "--trec-eval", "QRELS", "RUN", "-m", "bogus"],
                                   "not trec_eval measures: 'bogus'"),
    "score --depth 0": (["score", "QRELS", "RUN", "--depth", "0"], "depth must be a positive integer"),
    "serve --engine": (["serve", "--engine", "nope:x", "--port", "FREE_PORT"], "cannot load engine 'nope:x'"),
    "worker --engine": (["worker", "--engine", "nope:x"], "cannot load engine 'nope:x'"),
    "eval --rerank": (["eval", "--dataset", "DS", "--retriever", "bm25", "--rerank", "nope:x", "--no-save"],
                      "unknown reranker 'nope:x'"),
    "answer --generator": (["answer", "--dataset", "DS", "--generator", "nosuch:x", "--no-save"],
                           "unknown generator 'nosuch:x'"),
    "answer --judge": (["answer", "--dataset", "DS", "--generator", "extractive", "--judge", "nosuch", "--no-save"],
                       "unknown judge 'nosuch'"),
    "sweep --store": (["sweep", "--dataset", "DS", "--store", "faiss", "--store", "nosuchstore"],
                      "unknown store 'nosuchstore'"),
    # a grid that cannot run
    "sweep --grid": (["sweep", "--grid", "GRID", "--dataset", "DS"], "field 'chunk_sizes.1'"),
    # a file of the user's own data the command would replace
    "questions import --out": (["questions", "import", "EXISTS", "--dataset", "DS", "--out", "EXISTS"],
                               "already exists; pass --force"),
    "questions export --out": (["questions", "export", "--dataset", "DS", "--out", "EXISTS"],
                               "already exists; pass --force"),
    "questions import-traces --out": (["questions", "import-traces", "TRACES", "--format", "mlflow", "--out",
                                       "EXISTS"], "already exists; pass --force"),
    "questions generate --out": (["questions", "generate", "DS", "--out", "EXISTS"], "already exists; pass --force"),
    "dataset export --out": (["dataset", "export", "DS", "--format", "beir", "--out", "EXISTS_BEIR"],
                             "already exists; pass --force"),
}


@pytest.mark.parametrize("case", BAD_INPUT)
def test_bad_input_exits_2_in_one_line(case, inputs):
    arguments, message = BAD_INPUT[case]
    spelled = [str(inputs[a]) if a in inputs else a.replace("NOFILE", str(inputs["NOFILE"])) for a in arguments]
    result = run(*spelled)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in result.output, result.output
    assert (inputs["EXISTS"].read_text(encoding="utf-8") == "keep me\n"
            and (inputs["EXISTS_BEIR"] / "corpus.jsonl").read_text(encoding="utf-8") == "keep me\n")


def test_a_port_in_use_exits_2_naming_it(tmp_path, empty_history):
    import socket

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run("serve", "--port", port, "--datasets", tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"Error: cannot listen on 127.0.0.1 port {port}: Address already in use; "
                                          "choose another --port (or stop what holds it)"]


def test_report_files_are_replaced_and_exports_of_user_data_are_with_force(tmp_path, demo_dataset, empty_history):
    """Report files (--out of eval, answer, runs export) are written again on every run; an export of a question
    set is the user's data and is replaced with --force only."""
    for command in (["eval", "--retriever", "bm25"], ["answer", "--generator", "extractive", "--retriever", "bm25"]):
        out = tmp_path / f"{command[0]}.json"
        out.write_text("old", encoding="utf-8")
        result = run(*command, "--dataset", demo_dataset, "--out", out, "--name", command[0])
        assert result.exit_code == 0 and out.read_text(encoding="utf-8") != "old", result.output
    exported = tmp_path / "run.trec"
    exported.write_text("old", encoding="utf-8")
    assert run("runs", "export", "eval", "--format", "trec", "--out", exported).exit_code == 0
    assert exported.read_text(encoding="utf-8") != "old"
    questions = tmp_path / "questions.jsonl"
    questions.write_text("old", encoding="utf-8")
    assert run("questions", "export", "--dataset", demo_dataset, "--out", questions).exit_code == 2
    assert questions.read_text(encoding="utf-8") == "old"
    assert run("questions", "export", "--dataset", demo_dataset, "--out", questions, "--force").exit_code == 0
    assert questions.read_text(encoding="utf-8") != "old"
