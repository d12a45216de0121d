"""``questions generate DATASET``: a model's questions about an existing dataset in a file of their own, against a
chat server on 127.0.0.1; the dataset is left as it was, a second run refuses to overwrite, bad input exits 2."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.testing.chat_server import ChatServer

from .conftest import good_reply


def run(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def test_generate_writes_the_models_questions_beside_the_dataset(tmp_path, demo_corpus, llm_env):
    dataset = tmp_path / "dataset"
    run("dataset", "build", demo_corpus, "--out", dataset)
    before = {p.name: p.read_bytes() for p in dataset.iterdir()}
    with ChatServer(good_reply) as server:
        arguments = ["questions", "generate", dataset, "--base-url", server.url, "--model", "fake", "--max-docs", "3",
                     "--per-doc", "2", "--no-progress"]
        shown = run(*arguments)
        asked = len(server.requests)
        again = run(*arguments, code=2)
    assert asked == 3 and "already exists; pass --force" in again.output
    written = [json.loads(line) for line in (dataset / "questions-llm.jsonl").read_text("utf-8").splitlines()]
    assert len(written) == 6 and {q["provenance"]["generator"] for q in written} == {"llm"}
    assert f"--questions {dataset / 'questions-llm.jsonl'}" in shown.stdout
    assert {p.name: p.read_bytes() for p in dataset.iterdir() if p.name != "questions-llm.jsonl"} == before
    evaluated = load_dataset(dataset, dataset / "questions-llm.jsonl")  # a question set of the same corpus
    assert len(evaluated.questions) == 6


def test_generate_refuses_a_folder_that_is_no_dataset_and_bad_numbers(tmp_path):
    missing = run("questions", "generate", tmp_path / "nope", "--base-url", "http://127.0.0.1:9", code=2)
    assert "not a dataset folder" in missing.output
    assert "Invalid value for '--concurrency'" in run("questions", "generate", tmp_path, "--concurrency", "0",
                                                      code=2).output
    planned = run("questions", "generate", tmp_path, "--dry-run", code=2)
    assert "not a dataset folder" in planned.output
