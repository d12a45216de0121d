"""The retrieval settings' integers (EvalConfig, work/limits.py) on every surface: a cutoff above 10,000 is refused
naming the field before any work (a billion used to end in a MemoryError), a boolean is never read as 1, and a
cutoff past every chunk allocates nothing past the ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.data.chunking import Chunk
from ragretrieval.retrieval.base import Ranking
from ragretrieval.retrieval.rollup import HitTable, roll_up
from ragretrieval.work.options import SettingsError, build_settings

ROOT = Path(__file__).resolve().parents[2]


def refused(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.output


@pytest.mark.parametrize("command", ["eval", "answer"])
def test_a_cutoff_of_a_billion_is_refused_naming_the_flag(demo_dataset, command):
    answering = ["--questions", ROOT / "datasets/demo/answer_questions.jsonl"] if command == "answer" else []
    shown = refused(command, "--dataset", demo_dataset, *answering, "--retriever", "bm25", "--k", "1000000000",
                    "--no-save")
    assert "Error: --k: a cutoff above 10,000 is refused" in shown and "1000000000" in shown


def test_the_bound_is_ten_thousand_and_top_k_shares_it(demo_dataset):
    config = rr.EvalConfig(retriever="bm25", ks=[1, 10_000])
    assert config.ks == [1, 10_000]
    shown = refused("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--top-k", "10001", "--no-save")
    assert "Error: --top-k: a cutoff above 10,000 is refused" in shown


@pytest.mark.parametrize("line, field", [
    ("chunk_size = true", "chunk_size"),
    ("ks = [true, 5]", "ks.0"),
    ("rel_level = true", "rel_level"),
    ("chunk_overlap = false", "chunk_overlap"),
    ("ks = [5, 100000]", "ks"),
])
def test_a_settings_file_with_a_boolean_or_a_deep_cutoff_is_refused_naming_the_field(demo_dataset, tmp_path, line,
                                                                                      field):
    settings = tmp_path / "settings.toml"
    settings.write_text(f'dataset = "{demo_dataset}"\nretriever = "bm25"\n{line}\n', encoding="utf-8")
    shown = refused("eval", "--config", settings, "--no-save")
    assert f"{settings}: {field}: " in shown


@pytest.mark.parametrize("settings, message", [
    (dict(chunk_size=True), "chunk_size: must be an integer, got true"),
    (dict(ks=[True, 5]), "ks.0: must be an integer, got true"),
    (dict(rel_level=True), "rel_level: must be an integer, got true"),
    (dict(ks=[1_000_000_000]), "ks: a cutoff above 10,000 is refused"),
    (dict(top_k=20_000), "top_k: a cutoff above 10,000 is refused"),
])
def test_python_keyword_arguments_are_refused_naming_the_field(demo_dataset, settings, message):
    with pytest.raises(SettingsError) as raised:
        rr.evaluate(demo_dataset, retriever="bm25", **settings)
    assert message in str(raised.value)


@pytest.mark.parametrize("settings, field", [
    (dict(context_k=True), "context_k"), (dict(judge_samples=True), "judge_samples"), (dict(seed=False), "seed"),
    (dict(threads=True), "threads"), (dict(ks=[10_001]), "retrieval.ks"),
])
def test_answer_settings_refuse_booleans_and_deep_cutoffs_too(settings, field):
    with pytest.raises(SettingsError) as raised:
        build_settings(rr.AnswerSettings, settings)
    assert raised.value.field == field


def test_plugin_options_refuse_a_boolean_for_an_integer():
    with pytest.raises(SettingsError, match="sentences: must be an integer, got true"):
        build_settings(rr.AnswerSettings, {"generator_options": {"sentences": True}})


def test_a_cutoff_past_every_chunk_allocates_no_more_than_the_ranking_holds():
    chunks = [Chunk(chunk_id=f"d{i}#0", parent_id=f"d{i}", start=0, end=1, heading_path=(), text="t") for i in range(3)]
    table = HitTable(chunks, ["d0", "d1", "d2"])
    ranking = Ranking(positions=np.array([[2, 0, 1]]), scores=np.array([[3.0, 2.0, 1.0]]), foreign=())
    found = roll_up(ranking, np.array(["q1"], dtype=object), table, 10_000, "300/50")
    assert found.doc_run.codes.shape == (1, 3) and found.chunk_run.codes.shape == (1, 3)
    assert found.short_rankings == 1 and [c for c, _, _ in found.retrieved[0]] == ["d2#0", "d0#0", "d1#0"]


def test_scores_at_a_cutoff_past_every_chunk_are_those_of_the_whole_ranking(demo_dataset):
    deep = rr.evaluate(demo_dataset, retriever="bm25", ks=[10_000])
    whole = rr.evaluate(demo_dataset, retriever="bm25", ks=[deep.dataset.n_chunks])
    for level in ("doc", "chunk"):
        for name, value in deep.means[level].items():
            if not name.startswith(("precision", "f1")):  # precision@k divides by k
                assert value == pytest.approx(whole.means[level][name.replace("10000", str(deep.dataset.n_chunks))])
