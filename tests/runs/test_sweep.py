"""Sweeps: grid files, cell planning, resuming, stored runs and the embedding cache across cells."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.embedders import EmbeddingCache
from ragretrieval.runs import RunHistory
from ragretrieval.runs.sweep import default_sweep_id, plan, run_sweep, sweep_table
from ragretrieval.runs.sweep_grid import SweepError, SweepGrid, read_grid


def run_cli(*args, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.stdout if code == 0 else result.output  # the table alone; or the error message


def test_plan_collapses_bm25_and_groups_by_model(dataset_dir):
    grid = SweepGrid(dataset=str(dataset_dir), models=["a-model", "b-model"], retrievers=["dense", "bm25"],
                     stores=["numpy", "faiss"], chunk_sizes=[300, 500])
    cells = plan(grid, load_dataset(dataset_dir))
    assert len(cells) == 2 * 2 * 2 + 2  # bm25 ignores models and stores
    assert [c.label for c in cells[:4]] == ["dense a-model numpy 300/50", "dense a-model numpy 500/50",
                                            "dense a-model faiss 300/50", "dense a-model faiss 500/50"]
    assert [c.label for c in cells[-2:]] == ["bm25 300/50", "bm25 500/50"]
    assert len({c.key for c in cells}) == len(cells)
    assert default_sweep_id(cells) == default_sweep_id(list(reversed(cells)))
    assert default_sweep_id(cells).startswith("s-")


def test_bm25_sweep_from_a_yaml_grid_stores_every_cell(dataset_dir, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"grid_version: 1\ndataset: {dataset_dir}\nretrievers: bm25\nchunk_sizes: [300, 500]\n"
                    "ks: 1,3,5,10\nprimary: chunk:ndcg@10\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    out = run_cli("sweep", "--grid", grid, "--runs-db", url, "--no-progress")
    title, header, _rule, *rows = [line for line in out.splitlines() if not line.startswith("cell ")]
    assert title.startswith("sweep s-") and "2 cells" in title and "ran 2, 0 finished earlier" in title
    assert header.split()[:9] == ["#", "run", "retriever", "model", "store", "chunk", "chunk:ndcg@10",
                                  "chunk:mrr@10", "time"]
    sweep_id = title.split()[1].rstrip(":")
    with RunHistory(url) as history:
        stored = history.list(tag=sweep_id)
    assert sorted(s.chunk_size for s in stored) == [300, 500]
    assert all(s.retriever == "bm25" and s.name.startswith(f"{sweep_id} bm25 ") for s in stored)
    by_id = {s.id: s.means["chunk"]["ndcg@10"] for s in stored}
    ranked = [row.split()[1] for row in rows]
    assert sorted(ranked) == sorted(by_id) and by_id[ranked[0]] >= by_id[ranked[1]]
    assert f"{by_id[ranked[0]]:.4f}" in rows[0]


def test_toml_grid_with_command_line_overrides_and_relative_paths(dataset_dir, tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(dataset_dir, folder / "data")
    (folder / "grid.toml").write_text('grid_version = 1\ndataset = "data"\nretrievers = ["bm25"]\n'
                                      "chunk_sizes = [200, 300]\n", encoding="utf-8")
    grid = read_grid(folder / "grid.toml", {"chunk_sizes": [400], "models": []})
    assert grid.dataset == str(folder / "data") and grid.chunk_sizes == [400] and grid.models == ["m3e-small"]


@pytest.mark.parametrize("text, message", [
    ("dataset: d\nchunk_size: [1]\n", "grid.yaml: field 'chunk_size': Extra inputs are not permitted"),
    ("dataset: d\nretrievers: [http]\n", "field 'retrievers': retriever 'http' cannot be swept"),
    ("dataset: d\nprimary: recall@20\n", "primary metric 'recall@20' needs its cutoff in ks [1, 3, 5, 10]"),
    ("dataset: d\ngrid_version: 2\n", "field 'grid_version'"),
    ("dataset: [d\n", "grid.yaml: not valid YAML"),
    ("- a\n", "a grid file holds a mapping of settings, not list"),
    ("dataset: d\nreranks: []\n", "reranks must not be empty"),
    ("dataset: d\nrerank: {name: embed:x}\n", "rerank holds the settings of every reranker"),
    ("dataset: d\nrerank: {depth: 5}\n", "rerank settings apply to no cell: reranks is ['none']"),
    # a boolean is not read as 1, a cutoff is at most 10,000: refused with the field, before any cell
    ("dataset: d\nchunk_sizes: [true]\n", "grid.yaml: field 'chunk_sizes.0': must be an integer, got true"),
    ("dataset: d\nchunk_overlaps: true\n", "field 'chunk_overlaps.0': must be an integer, got true"),
    ("dataset: d\nks: [true, 5]\n", "field 'ks.0': must be an integer, got true"),
    ("dataset: d\nrel_level: true\n", "field 'rel_level': must be an integer, got true"),
    ("dataset: d\nks: [5, 1000000000]\n", "field 'ks': a cutoff above 10,000 is refused"),
])
def test_bad_grid_files_are_named(tmp_path, text, message):
    (tmp_path / "grid.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(SweepError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_grid(tmp_path / "grid.yaml")


def test_bad_cells_are_refused_before_any_run(dataset_dir, tmp_path):
    out = run_cli("sweep", "--dataset", dataset_dir, "--retriever", "bm25", "--chunk-size", "40", "--chunk-overlap",
                  "50", "--runs-db", tmp_path / "runs.sqlite", code=2)  # the grid must change: status 2
    assert "cell bm25 chunk 40/50: --chunk-overlap must be smaller than --chunk-size (40); got 50" in out
    out = run_cli("sweep", "--dataset", dataset_dir, "--store", "faiss", "--store", "nosuchstore",
                  "--runs-db", tmp_path / "runs.sqlite", code=2)
    assert "unknown store 'nosuchstore'; installed: " in out and "cell " not in out
    assert RunHistory(str(tmp_path / "runs.sqlite")).list() == []


@pytest.mark.model
def test_reranking_is_a_sweep_dimension(dataset_dir, tmp_path):
    """`--rerank none --rerank embed:...` gives each retriever alone and reranked: two stored runs whose
    configurations differ only in the reranking stage, shown apart in the table; a reranking cell keeps the grid's
    rerank settings; the first-stage cells keep the keys they had before reranking could be swept."""
    grid = SweepGrid(dataset=str(dataset_dir), retrievers=["bm25"], reranks=["none", "embed:e5-small-q4"],
                     rerank={"depth": 5}, granularity="doc")
    cells = plan(grid, load_dataset(dataset_dir))
    assert [c.label for c in cells] == ["bm25 300/50", "bm25 > embed:e5-small-q4 300/50"]
    assert cells[0].config.rerank is None and cells[1].config.rerank == {"name": "embed:e5-small-q4", "depth": 5}
    alone = plan(SweepGrid(dataset=str(dataset_dir), retrievers=["bm25"], granularity="doc"),
                 load_dataset(dataset_dir))
    assert [c.key for c in alone] == [cells[0].key]

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    out = run_cli("sweep", "--dataset", dataset_dir, "--retriever", "bm25", "--rerank", "none", "--rerank",
                  "embed:e5-small-q4", "--rerank-depth", "5", "--granularity", "doc", "--runs-db", url,
                  "--no-progress")
    rows = out.splitlines()[3:]
    assert sorted(row.split()[2:5] for row in rows) == [["bm25", "-", "-"], ["bm25", ">", "embed:e5-small-q4"]]
    with RunHistory(url) as history:
        stored = history.list()
    assert sorted((s.retriever, s.rerank or "") for s in stored) == [("bm25", ""), ("bm25", "embed:e5-small-q4")]
    reranked = next(s for s in stored if s.rerank)
    assert history_config(url, reranked.id).rerank == {"name": "embed:e5-small-q4", "depth": 5}
    assert {s.config_key for s in stored} == {c.key for c in cells}


@pytest.mark.parametrize("options, message", [
    (["--rerank", "none", "--rerank", "nope:x"],
     "cell bm25 > nope:x chunk 300/50: --rerank: unknown reranker 'nope:x'; a name starts with one of"),
    (["--rerank-depth", "5"], "rerank settings apply to no cell"),
])
def test_bad_reranking_cells_are_refused_before_any_run(dataset_dir, tmp_path, options, message):
    runs = tmp_path / "runs.sqlite"
    assert message in run_cli("sweep", "--dataset", dataset_dir, "--retriever", "bm25", *options, "--runs-db", runs,
                              code=2)
    assert RunHistory(str(runs)).list() == []


def history_config(url, run_id):
    with RunHistory(url) as history:
        return history.get(run_id).report.config


def test_an_interrupted_sweep_resumes_and_skips_finished_cells(dataset_dir, tmp_path):
    grid = SweepGrid(dataset=str(dataset_dir), retrievers=["bm25"], chunk_sizes=[200, 300, 500])
    events = []

    def interrupt_second_cell(event, cell, run_id):
        events.append((event, cell.config.chunk_size))
        if events.count(("start", 300)) and event == "start":
            raise KeyboardInterrupt

    with RunHistory(str(tmp_path / "runs.sqlite")) as history:
        with pytest.raises(KeyboardInterrupt):
            run_sweep(grid, history, progress=False, on_cell=interrupt_second_cell)
        assert [s.chunk_size for s in history.list()] == [200]
        resumed = run_sweep(grid, history, progress=False)
        assert (len(resumed.ran), len(resumed.skipped)) == (2, 1)
        assert resumed.skipped == [history.list()[0].id]
        again = run_sweep(grid, history, progress=False)
        assert (len(again.ran), len(again.skipped)) == (0, 3)
        assert len(history.list()) == 3
        assert sorted(s.chunk_size for s in again.runs) == [200, 300, 500]
        table = sweep_table(again, "recall@5")
        assert [line.endswith("earlier") for line in table.splitlines()[3:]] == [True] * 3
        assert "ran 0, 3 finished earlier" in table.splitlines()[0]


@pytest.mark.model
def test_dense_sweep_embeds_each_text_once_and_a_second_sweep_embeds_nothing(demo_corpus, tmp_path):
    """The one test with the real default model, on four recipes of the demo corpus."""
    corpus = tmp_path / "corpus"
    for path in sorted(demo_corpus.rglob("*.md"))[:4]:
        target = corpus / path.relative_to(demo_corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    run_cli("dataset", "build", corpus, "--out", tmp_path / "dataset")
    grid = SweepGrid(dataset=str(tmp_path / "dataset"), retrievers=["dense", "bm25"], stores=["numpy", "faiss"],
                     chunk_sizes=[120, 300])
    cache = EmbeddingCache(tmp_path / "cache")
    with RunHistory(str(tmp_path / "runs.sqlite")) as history:
        first = run_sweep(grid, history, cache=cache, progress=False)
        assert len(first.ran) == 6
        reports = {run_id: history.get(run_id).report for run_id in first.ran}
        embedded = {(r.config.retriever, r.config.store, r.config.chunk_size): r.embedded_texts
                    for r in reports.values()}
        assert embedded[("dense", "numpy", 120)] > 0
        assert embedded[("dense", "faiss", 120)] == 0 and embedded[("dense", "faiss", 300)] == 0
        assert sum(embedded.values()) == cache.count()  # every distinct text embedded exactly once
        second = run_sweep(grid, history, cache=cache, sweep_id="s-second", progress=False)
        assert len(second.ran) == 6
        assert [history.get(run_id).report.embedded_texts for run_id in second.ran] == [0] * 6
        assert len(history.list(tag="s-second")) == 6 and len(history.list()) == 12
        numpy_cell = next(r for r in reports.values() if r.config.store == "numpy" and r.config.chunk_size == 120)
        faiss_cell = next(r for r in reports.values() if r.config.store == "faiss" and r.config.chunk_size == 120)
        assert numpy_cell.means["chunk"]["recall@5"] == pytest.approx(faiss_cell.means["chunk"]["recall@5"])
