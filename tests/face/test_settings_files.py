"""Settings files and the command line's side of the settings models: ``runs show RUN --config`` then
``eval --config`` (and ``answer --config``) give the same configuration key; flags win over the file; a bad file or
value names the file and the field, or the flag; plug-in options are listed and typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs import RunHistory

ROOT = Path(__file__).resolve().parents[2]
ANSWER_QUESTIONS = "datasets/demo/answer_questions.jsonl"


def run(*args, code: int = 0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result


def keys(url: str) -> dict[str, str]:
    with RunHistory(url) as history:
        return {s.name: s.config_key for s in history.list()}


@pytest.mark.parametrize("kind", ["toml", "yaml"])
def test_a_stored_runs_settings_file_runs_it_again_with_the_same_key(demo_dataset, tmp_path, kind):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    run("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--retriever-option", "k1=1.2", "--k", "5,1",
        "--chunk-size", "250", "--runs-db", db, "--name", "first", "--no-progress")
    shown = run("runs", "show", "first", "--runs-db", db, "--config", *([] if kind == "toml" else ["yaml"]))
    settings = tmp_path / f"exp.{kind}"
    settings.write_text(shown.stdout, encoding="utf-8")
    assert "k1" in shown.stdout and "1.2" in shown.stdout and "settings_version" in shown.stdout
    run("eval", "--config", settings, "--runs-db", db, "--name", "again", "--no-progress")
    assert keys(db)["again"] == keys(db)["first"]
    run("eval", "--config", settings, "--chunk-size", "300", "--runs-db", db, "--name", "flag", "--no-progress")
    with RunHistory(db) as history:
        flagged = history.get("flag").report.config
    assert flagged.chunk_size == 300 and flagged.retriever_options == {"k1": 1.2}  # the flag over the file


def test_an_answer_runs_settings_file_runs_it_again_with_the_same_key(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    questions = ROOT / ANSWER_QUESTIONS
    run("answer", "--dataset", demo_dataset, "--questions", questions, "--generator", "extractive",
        "--generator-option", "sentences=1", "--retriever", "bm25", "--context-k", "3", "--match", "words",
        "--runs-db", db, "--name", "first", "--no-progress")
    settings = tmp_path / "answer.toml"
    settings.write_text(run("runs", "show", "first", "--runs-db", db, "--config").stdout, encoding="utf-8")
    text = settings.read_text(encoding="utf-8")
    assert 'kind = "answer"' in text and "[retrieval]" in text and str(questions) in text
    run("answer", "--config", settings, "--runs-db", db, "--name", "again", "--no-progress")
    assert keys(db)["again"] == keys(db)["first"]
    refused = run("eval", "--config", settings, "--no-save", code=2)
    assert "holds answer settings (kind = 'answer'): run them with `ragretrieval answer --config`" in refused.output


@pytest.mark.parametrize("text, message", [
    ("retriever = 'bm25'\nchunk_size = 0\n", "exp.toml: chunk_size: Input should be greater than or equal to 1"),
    ("retriever = 'bm25'\nchunk_size = 'big'\n", "exp.toml: chunk_size: Input should be a valid integer"),
    ("retriever = 'bm25'\nfrobnicate = 1\n", "exp.toml: frobnicate: Extra inputs are not permitted"),
    ("retriever = 'bm25'\n[retriever_options]\nk9 = 1\n", "exp.toml: retriever bm25: retriever_options.k9: unknown "
                                                          "option (known: k1, b)"),
    ("settings_version = 2\n", "exp.toml: field 'settings_version': Input should be 1"),
    ("retriever = \n", "exp.toml: not valid TOML"),
    ("", "Missing option '--dataset' (or a --config file that names its dataset)"),
])
def test_a_bad_settings_file_names_the_file_and_the_field(tmp_path, text, message):
    settings = tmp_path / "exp.toml"
    settings.write_text(text, encoding="utf-8")
    result = run("eval", "--config", settings, "--no-save", code=2)
    assert message in result.output


def test_a_settings_file_of_another_format_or_place_is_refused(tmp_path, demo_dataset):
    settings = tmp_path / "exp.ini"
    settings.write_text("retriever = bm25\n", encoding="utf-8")
    assert "exp.ini: a settings file ends in .toml, .yaml or .yml" in run("eval", "--config", settings,
                                                                           code=2).output
    relative = tmp_path / "sub" / "exp.yaml"
    relative.parent.mkdir()
    relative.write_text(f"dataset: ../{demo_dataset.name}\nretriever: bm25\n", encoding="utf-8")
    (tmp_path / demo_dataset.name).symlink_to(demo_dataset)
    assert "document level" in run("eval", "--config", relative, "--no-save", "--no-progress").output


@pytest.mark.parametrize("args, message", [
    (["--retriever-option", "k1=x"], "Error: retriever bm25: --retriever-option k1: Input should be a valid number"),
    (["--retriever-option", "k1"], "Error: --retriever-option: expected key=value, got 'k1'"),
    (["--retriever-option", "k9=1"], "Error: retriever bm25: --retriever-option k9: unknown option (known: k1, b)"),
    (["--fusion", "rrf"], "Error: retriever bm25: --fusion: unknown option (known: k1, b)"),
    (["--rerank-depth", "5"], "Error: --rerank-depth needs --rerank, the reranker"),
    (["--chunk-size", "100", "--chunk-overlap", "100"], "Error: --chunk-overlap must be smaller than --chunk-size"),
    (["--k", "0"], "Error: --k: every k must be a positive integer; got [0]"),
    (["--rel-level", "0"], "Error: --rel-level: Input should be greater than or equal to 1"),
    (["--embed-dimensions", "0", "--retriever", "dense"], "Error: --embed-dimensions: Input should be greater than 0"),
])
def test_the_library_names_fields_and_the_command_line_names_its_flags(demo_dataset, args, message):
    result = run("eval", "--dataset", demo_dataset, "--retriever", "bm25", *args, "--no-save", code=2)
    assert message in result.output


def test_plugins_verbose_lists_each_options_name_type_default_and_help():
    shown = run("plugins", "-v").output
    for line in ("k1  float  default 1.5   term-frequency saturation",
                 "kind             flat | hnsw | ivf  default \"flat\"",
                 "sentences  int   default 2  sentences in each answer",
                 "fusion      rrf | weighted  default \"rrf\""):
        assert " ".join(line.split()) in " ".join(shown.split()), line
    assert "candidates" in shown and "nprobe" in shown and "input_type" in shown
