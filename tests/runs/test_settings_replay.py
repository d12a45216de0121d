"""``runs show RUN --config > sub/x.toml`` replays from any folder: the settings file names the dataset and the
questions file by absolute paths (it named them as the run was given them, relative to the run's folder, while
``--config`` reads a relative path as relative to the file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.runs.settings_file import read_settings_file


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("command", ["eval", "answer"])
def test_a_shown_settings_file_replays_from_a_subfolder_and_from_elsewhere(demo_dataset, tmp_path, monkeypatch,
                                                                            command):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copytree(demo_dataset, work / "demo-dataset")
    shutil.copy(demo_dataset / "questions.jsonl", work / "some-questions.jsonl")
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    extra = ["--generator", "extractive"] if command == "answer" else []
    monkeypatch.chdir(work)
    run(command, "--dataset", "demo-dataset", "--questions", "some-questions.jsonl", "--retriever", "bm25", *extra,
        "--runs-db", db, "--name", "first", "--no-progress")
    (work / "sub").mkdir()
    settings = work / "sub" / "x.toml"
    settings.write_text(run("runs", "show", "first", "--runs-db", db, "--config").stdout, encoding="utf-8")
    read = read_settings_file(settings, "retrieval" if command == "eval" else "answer")
    assert (read.dataset, read.questions) == (str(work / "demo-dataset"), str(work / "some-questions.jsonl"))
    run(command, "--config", "sub/x.toml", "--runs-db", db, "--name", "again", "--no-progress")
    monkeypatch.chdir(elsewhere)
    run(command, "--config", settings, "--runs-db", db, "--name", "elsewhere", "--no-progress")
    with RunHistory(db) as history:
        keys = {s.name: s.config_key for s in history.list()}
        assert Path(history.get("elsewhere").report.dataset.path) == work / "demo-dataset"
    assert keys["again"] == keys["elsewhere"] == keys["first"]
