"""`sweep`: ``ragretrieval sweep`` from Python (docs/python.md, "Sweeps")."""

from __future__ import annotations


def sweep(dataset, grid, *, runs_db=None, sweep_id=None, progress=False, stop=None, cache=None, **overrides):
    """Evaluate every combination of a grid of settings on `dataset` (a `Dataset` or its folder; None: the grid's),
    each cell stored as a run in the runs history (`runs_db`: its URL or SQLite file; default
    ``$RAGRETRIEVAL_RUNS_URL``, else ``./.ragretrieval/runs.sqlite``), and compare the cells: what
    ``ragretrieval sweep`` does.

    `grid`: a `SweepGrid`, a dict of its fields (``{"retrievers": ["bm25"], "chunk_sizes": [200, 300]}``) or a
    grid file (YAML or TOML, docs/runs.md); `overrides` are grid fields laid over it. A sweep resumes: called
    again with the same cells (or `sweep_id`), it runs only the cells not stored yet. A bad grid value raises
    `SettingsError` naming the field before any cell runs. Returns a `SweepResult`: ``.runs`` (one summary per
    cell), ``.ran`` and ``.skipped`` (run ids), ``.comparison`` (a `Comparison` of every cell with the best on the
    primary metric; None under two cells); printed, the command's table. `progress`, `stop`, `cache` as in
    `evaluate`."""
    from ..runs.sweep import sweep as run_grid

    return run_grid(grid, dataset=dataset, runs_db=runs_db, sweep_id=sweep_id, progress=progress, stop=stop,
                    cache=cache, **overrides)
