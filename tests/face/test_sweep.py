"""`rr.sweep`: the grid swept from Python, each cell a stored run, resumed when called again, the cells compared;
bad grids refused with `rr.SettingsError` naming the field before any cell runs."""

from __future__ import annotations

import pytest

import ragretrieval as rr
from ragretrieval.runs import RunHistory
from ragretrieval.runs.sweep_grid import SweepGrid


def test_a_bm25_grid_is_stored_resumed_and_compared(demo_dataset, tmp_path):
    db = tmp_path / "runs.sqlite"
    grid = {"retrievers": ["bm25"], "chunk_sizes": [200, 300], "ks": [1, 5]}
    first = rr.sweep(demo_dataset, grid, runs_db=db)
    assert len(first.ran) == 2 and first.skipped == []
    with RunHistory(str(db)) as history:
        stored = history.list(tag=first.sweep_id)
    assert sorted(s.chunk_size for s in stored) == [200, 300] and {s.id for s in stored} == set(first.ran)
    assert str(first).startswith(f"sweep {first.sweep_id}: 2 cells")  # the table `ragretrieval sweep` prints

    comparison = first.comparison
    assert isinstance(comparison, rr.Comparison)
    best = first.ranked()[0]  # the other cell is compared with the best on the primary metric (recall@5)
    assert comparison.runs == [f"bm25 {best.chunk_size}/50", f"bm25 {500 - best.chunk_size}/50"]
    assert list(comparison.pairs[0].metrics) == ["recall@5", "mrr@5", "ndcg@5"] and comparison.granularity == "doc"

    again = rr.sweep(rr.load_dataset(demo_dataset), SweepGrid(dataset="ignored", **grid), runs_db=db)
    assert again.ran == [] and sorted(again.skipped) == sorted(first.ran) and again.sweep_id == first.sweep_id
    assert again.comparison.runs == comparison.runs


def test_a_grid_file_with_overrides_and_a_single_cell(demo_dataset, tmp_path):
    (tmp_path / "grid.yaml").write_text("retrievers: bm25\nchunk_sizes: [200, 300]\nks: [1, 5]\n", encoding="utf-8")
    result = rr.sweep(demo_dataset, tmp_path / "grid.yaml", runs_db=tmp_path / "runs.sqlite", chunk_sizes=[250])
    assert [s.chunk_size for s in result.runs] == [250] and result.comparison is None  # nothing to compare with


@pytest.mark.parametrize(("grid", "overrides", "field"), [
    ({"retrievers": []}, {}, "retrievers"),
    ({"retrievers": ["bm25"]}, {"chunk_sizes": []}, "chunk_sizes"),
    ({"retrievers": ["bm25"], "chunk_sizes": [True]}, {}, "chunk_sizes.0"),
    ({"retrievers": ["bm25"]}, {"chunk_sizes": [200, False]}, "chunk_sizes.1"),
    ({"retrievers": ["bm25"], "primary": "recall@20"}, {}, "primary"),
    ({"retrievers": ["bm25"], "chunk_size": [200]}, {}, "chunk_size"),
    ("no-such-grid.yaml", {}, "grid"),
    (42, {}, "grid"),
])
def test_bad_grids_raise_settings_error_naming_the_field_before_any_run(demo_dataset, tmp_path, grid, overrides,
                                                                         field):
    with pytest.raises(rr.SettingsError) as raised:
        rr.sweep(demo_dataset, grid, runs_db=tmp_path / "runs.sqlite", **overrides)
    assert isinstance(raised.value, ValueError) and raised.value.field == field, raised.value.fields
    if field != "grid":
        assert field.split(".")[0] in str(raised.value)
    assert not (tmp_path / "runs.sqlite").exists()


def test_a_missing_grid_file_is_named(demo_dataset, tmp_path):
    with pytest.raises(rr.SettingsError, match="no-such-grid.yaml"):
        rr.sweep(demo_dataset, tmp_path / "no-such-grid.yaml", runs_db=tmp_path / "runs.sqlite")
