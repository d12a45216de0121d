"""One option vocabulary: the new flag and its 0.2 spelling give the same result, the help shows
the new one only, and the environment defaults are shown in --help."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main


def run(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def options(*command) -> set[str]:
    shown = run(*command, "--help").stdout
    return {word.rstrip(",") for line in shown.splitlines() for word in line.split()[:3] if word.startswith("--")}


@pytest.mark.parametrize("command, new, old", [
    (("answer",), "--concurrency", "--threads"),
    (("answer",), "--embed-model", "--model"),
    (("judge", "answers"), "--concurrency", "--threads"),
    (("worker",), "--concurrency", "--threads"),
    (("serve",), "--concurrency", "--threads"),
    (("dataset", "build"), "--llm-model", "--model"),
    (("dataset", "build"), "--llm-base-url", "--base-url"),
    (("questions", "generate"), "--llm-timeout", "--timeout"),
    (("judge", "chunks"), "--llm-api-key-env", "--api-key-env"),
    (("questions", "nuggets"), "--llm-model", "--nuggets-model"),
    (("questions", "nuggets"), "--concurrency", "--nuggets-concurrency"),
    (("runs", "report"), "--out", "--html"),
    (("runs", "list"), "--with-tag", "--tag"),
    (("runs", "export"), "--granularity", "--level"),
])
def test_the_help_shows_the_new_flag_and_not_the_old(command, new, old):
    shown = options(*command)
    assert new in shown and old not in shown


def test_eval_and_sweep_show_model_beside_embed_model():
    assert {"--embed-model", "--model"} <= options("eval") and {"--embed-model", "--model"} <= options("sweep")


def test_environment_defaults_are_shown():
    assert "[env var: RAGRETRIEVAL_RUNS_URL]" in " ".join(run("runs", "list", "--help").stdout.split())
    assert "[env var: RAGRETRIEVAL_SERVE_ENGINE]" in " ".join(run("worker", "--help").stdout.split())


def test_old_and_new_flags_give_the_same_runs(tmp_path, demo_dataset):
    history = tmp_path / "runs.sqlite"
    for flag, name in (("--embed-model", "new"), ("--model", "old")):
        run("eval", "--dataset", demo_dataset, flag, "hashing-64", "--chunk-size", 200, "--name", name,
            "--tag", f"t-{name}", "--runs-db", history, "--out", tmp_path / f"{name}.json", "--no-progress")
    new, old = (json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8")) for n in ("new", "old"))
    assert new["config"]["model"] == old["config"]["model"] == "hashing-64" and new["means"] == old["means"]
    with_tag = run("runs", "list", "--runs-db", history, "--with-tag", "t-new", "--json").stdout
    tag = run("runs", "list", "--runs-db", history, "--tag", "t-new", "--json").stdout
    assert with_tag == tag and [json.loads(line)["name"] for line in with_tag.splitlines()] == ["new"]
    for flag, name in (("--concurrency", "c-new"), ("--threads", "c-old")):
        run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--retriever", "bm25", flag, 3,
            "--name", name, "--runs-db", history, "--out", tmp_path / f"{name}.json", "--no-progress")
    a, b = (json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8")) for n in ("c-new", "c-old"))
    assert a["means"] == b["means"] and a["config"] == b["config"]  # questions at once is speed only: not recorded


@pytest.mark.parametrize("flag", ["--concurrency", "--threads"])
def test_a_bad_value_names_the_new_flag_whichever_was_typed(flag, demo_dataset):
    result = run("answer", "--dataset", demo_dataset, "--generator", "extractive", flag, "0", code=2)
    assert "--concurrency" in result.stderr and "--threads" not in result.stderr


def test_comma_lists_and_repeated_flags_are_one(tmp_path):
    qrels, trec = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    trec.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d1 1 2.0 x\nq2 Q0 d2 2 1.0 x\n", encoding="utf-8")
    repeated = json.loads(run("score", qrels, trec, "-m", "recall@1", "-m", "mrr", "--json").stdout)
    commas = json.loads(run("score", qrels, trec, "-m", "recall@1,mrr", "--json").stdout)
    assert commas == repeated == {"recall@1": 0.5, "mrr": 0.75}
    assert json.loads(run("score", qrels, trec, "-m", "recall@1, ,mrr,", "--json").stdout) == repeated


def test_a_sweep_takes_comma_lists_of_models_and_numbers_repeated(tmp_path, demo_dataset):
    shown = run("sweep", "--dataset", demo_dataset, "--model", "hashing-32,hashing-64", "--retriever", "dense,",
                "--chunk-size", 200, "--chunk-size", 300, "--runs-db", tmp_path / "runs.sqlite", "--no-progress")
    cells = [line for line in shown.stderr.splitlines() if line.startswith("cell ") and ": run " in line]
    assert len(cells) == 4 and sum("hashing-32" in c for c in cells) == 2


def test_a_sweep_refuses_an_unknown_retriever_in_a_comma_list(tmp_path, demo_dataset):
    result = run("sweep", "--dataset", demo_dataset, "--retriever", "bm25,bm2", "--runs-db", tmp_path / "r.sqlite",
                 code=2)
    assert "Invalid value for '--retriever': 'bm2' is not one of 'dense', 'bm25', 'hybrid'." in result.stderr
