"""Store options as sweep axes (runs/store_grid.py): grid-file entries, ``--store-grid``, refusals, and a sweep over
``ef_search`` storing one run per value with its ``exact_overlap@10``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.runs import RunHistory
from ragretrieval.runs.store_grid import StoreAxis, parse_store_grid
from ragretrieval.runs.sweep import plan
from ragretrieval.runs.sweep_grid import SweepError, SweepGrid, read_grid, validated_grid
from ragretrieval.work.options import SettingsError


def run_cli(*args, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def test_a_store_grid_gives_a_cell_per_value_for_that_store_and_kind_only(dataset_dir):
    grid = SweepGrid(dataset=str(dataset_dir), stores=[
        "numpy", {"name": "faiss", "options": {"kind": "hnsw", "ef_search": [8, 16, 32]}},
        {"name": "faiss", "options": {"kind": "ivf", "nprobe": [1, 4]}}])
    cells = plan(grid, load_dataset(dataset_dir))
    assert [(c.config.store, c.config.store_options) for c in cells] == [
        ("numpy", {}), ("faiss", {"kind": "hnsw", "ef_search": 8}), ("faiss", {"kind": "hnsw", "ef_search": 16}),
        ("faiss", {"kind": "hnsw", "ef_search": 32}), ("faiss", {"kind": "ivf", "nprobe": 1}),
        ("faiss", {"kind": "ivf", "nprobe": 4})]
    assert cells[1].label.endswith("faiss kind=hnsw ef_search=8 300/50")
    assert len({c.key for c in cells}) == 6


def test_the_grid_file_form(dataset_dir, tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(f"dataset: {dataset_dir}\nstores:\n  - {{name: faiss, options: {{kind: hnsw, ef_search: [8, 16, "
                    "32]}}\n  - {name: faiss, options: {kind: ivf, nprobe: [1, 4, 16]}}\nsearch_concurrency: 2\n",
                    encoding="utf-8")
    grid = read_grid(path)
    cells = plan(grid, load_dataset(dataset_dir))
    assert len(cells) == 6 and all(c.config.search_concurrency == 2 for c in cells)


@pytest.mark.parametrize("text, expected", [
    ("faiss", "faiss"),
    ("faiss:kind=hnsw:ef_search=8,16,32", StoreAxis(name="faiss", options={"kind": "hnsw",
                                                                              "ef_search": ["8", "16", "32"]})),
    ("milvus:uri=http://127.0.0.1:19530:ef=8,64", StoreAxis(name="milvus", options={
        "uri": "http://127.0.0.1:19530", "ef": ["8", "64"]})),
])
def test_store_grid_texts(text, expected):
    assert parse_store_grid(text) == expected


@pytest.mark.parametrize("text, message", [
    ("", "expected STORE"), (":kind=hnsw", "expected STORE"), ("fa iss:kind=hnsw", "expected STORE"),
    ("faiss:kind", "expected key=value"), ("faiss:=hnsw", "expected key=value"), ("faiss:", "expected key=value"),
    ("faiss:ef_search=8,,16", "empty value"), ("faiss:ef_search=", "empty value"),
    ("faiss:ef_search=8:ef_search=16", "given twice"),
])
def test_bad_store_grid_texts_are_refused(text, message):
    with pytest.raises(SettingsError) as error:
        parse_store_grid(text)
    assert message in str(error.value) and error.value.field == "stores"


@pytest.mark.parametrize("stores, message", [
    ([{"name": "faiss", "options": {"efsearch": [8, 16]}}], "store faiss does not declare option 'efsearch'"),
    ([{"name": "numpy", "options": {"ef_search": [8]}}], "store numpy does not declare option 'ef_search'"),
    ([{"name": "faiss", "options": {"ef_search": []}}], "an empty list of values gives no cell"),
    ([{"name": "faiss", "options": {"ef_search": [[8]]}}], "each value must be a number"),
    ([{"name": "faiss", "options": {"kind": ["hnsw", "lsh"]}}], "store_options.kind"),
    ([{"name": "faiss", "options": {"ef_search": [8, 0]}}], "store_options.ef_search"),
    ([{"name": "nosuchstore", "options": {"ef": [8]}}], "stores.0.name"),
    ([{"name": "faiss", "opts": {"ef": [8]}}], "entry 0: opts: unknown field (known: name, options)"),
    ([{"options": {"ef": [8]}}], "entry 0: name: Field required"),
    ([{"name": "faiss", "options": "kind=hnsw"}], "entry 0: options"),
    ([], "stores must not be empty"),
])
def test_bad_store_axes_are_refused_before_any_cell(dataset_dir, stores, message):
    with pytest.raises(SweepError) as error:
        plan(validated_grid({"dataset": str(dataset_dir), "stores": stores}), load_dataset(dataset_dir))
    assert message in str(error.value)


def test_bad_store_grid_on_the_command_line_exits_2(dataset_dir, tmp_path):
    out = run_cli("sweep", "--dataset", dataset_dir, "--store-grid", "faiss:kind", "--runs-db",
                  tmp_path / "runs.sqlite", code=2)
    assert "--store-grid" in out and "expected key=value" in out
    out = run_cli("sweep", "--dataset", dataset_dir, "--store-grid", "faiss:efsearch=8,16", "--runs-db",
                  tmp_path / "runs.sqlite", code=2)
    assert "does not declare option 'efsearch'" in out
    out = run_cli("sweep", "--dataset", dataset_dir, "--search-concurrency", "0", "--runs-db",
                  tmp_path / "runs.sqlite", code=2)
    assert "search_concurrency" in out or "--search-concurrency" in out


@pytest.mark.model  # the sweep embeds the demo with the default model
def test_a_sweep_over_ef_search_stores_one_run_per_value_with_exact_overlap(dataset_dir, tmp_path):
    """The default model, on the demo dataset: flat is exact by construction (1.0), HNSW cells are measured."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    args = ["sweep", "--dataset", dataset_dir, "--store-grid", "faiss:kind=hnsw:ef_search=8,16,32",
            "--store-grid", "faiss:kind=flat", "--runs-db", url, "--no-progress", "--search-concurrency", "2"]
    out = run_cli(*args)
    assert "ran 4, 0 finished earlier" in out and "kind=hnsw ef_search=16" in out
    with RunHistory(url) as history:
        reports = [history.get(s.id).report for s in history.list()]
    by_ef = {r.config.store_options.get("ef_search"): r for r in reports if r.config.store_options["kind"] == "hnsw"}
    assert sorted(by_ef) == [8, 16, 32]
    for report in by_ef.values():
        assert 0.0 < report.exact.overlap["exact_overlap@10"] <= 1.0
        assert report.search.search_latency_ms.p95 > 0 and report.search.concurrency == 2
    flat = next(r for r in reports if r.config.store_options["kind"] == "flat")
    assert flat.exact.exact_store and flat.exact.overlap["exact_overlap@10"] == 1.0  # exact by construction
    assert "ran 0, 4 finished earlier" in run_cli(*args)  # resumed: every cell was stored
    sweep_id = next(line for line in out.splitlines() if line.startswith("sweep ")).split()[1].rstrip(":")
    html = tmp_path / "report.html"
    run_cli("runs", "report", "--sweep", sweep_id, "--runs-db", url, "--out", html, "-m", "recall@5")
    page = html.read_text(encoding="utf-8")
    assert "Quality against search latency" in page and 'class="exact"' in page and 'class="pareto"' in page
    assert "cheapest setting not significantly below exact" in page and "http" not in page.split("<body>")[1]
    assert "no run is tagged 's-nothing'" in run_cli("runs", "report", "--sweep", "s-nothing", "--runs-db", url,
                                                       "--out", html, code=2)
