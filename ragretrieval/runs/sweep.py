"""Sweeps: evaluate every combination of models, retrievers, rerankers, stores and chunkings, one stored run per cell.

Why it is cheap: every cell embeds through one `EmbeddingCache`, so a text is embedded once per model whatever the
chunking or store; each model is loaded once per sweep. Why it resumes: a cell is identified by its configuration
key (configuration + corpus and question fingerprints, see runs/identity.py), each finished cell is committed to
the runs history as a run tagged with the sweep id, and a sweep started again with the same id skips the cells whose
run is already there. The default sweep id is derived from the cells, so re-running the same command resumes it.
The grid file format (YAML or TOML) is `SweepGrid`; docs/runs.md has an example.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..data.dataset import Dataset, load_dataset
from ..embedders.registry import VARIANTS, family_of
from ..embedders.settings import AUTO
from ..errors import RagretrievalError
from ..evaluation.pipeline import check_config, evaluate
from ..evaluation.report import EvalConfig
from ..retrieval.registry import BuildContext, retriever_class
from ..scoring import parse_metric
from ..stores import store_class
from ..work.options import SettingsError, build_settings
from ..work.progress import as_progress
from ..work.stop import StopToken
from .history import RunHistory, RunSummary
from .identity import config_key, labels_fingerprint, questions_fingerprint
from .store_grid import store_settings
from .sweep_grid import NO_RERANK, SweepError, SweepGrid, _default, as_grid
from .table import format_table, metric_value, number, parse_metric_column, reranked_by, retriever_cell

if TYPE_CHECKING:
    from ..analysis.compare import Comparison

@dataclass(frozen=True)
class Cell:
    config: EvalConfig
    key: str  # `runs.identity.config_key`: what makes a cell finished

    @property
    def label(self) -> str:
        c = self.config
        store = (" ".join([c.store, *(f"{k}={v}" for k, v in c.store_options.items())]) if c.model else None)
        what = " ".join(part for part in (c.retriever, c.model, store) if part)
        return f"{what}{reranked_by(c.rerank and c.rerank['name'])} {c.chunk_size}/{c.chunk_overlap}"


@dataclass
class SweepResult:
    """What a sweep did: its cells, the runs of the finished ones, and (from `sweep`) their paired comparison.
    Printed, it is the table ``ragretrieval sweep`` prints."""

    sweep_id: str
    dataset: Dataset
    cells: list[Cell]
    ran: list[str] = field(default_factory=list)  # run ids stored by this call
    skipped: list[str] = field(default_factory=list)  # run ids of cells finished before
    runs: list[RunSummary] = field(default_factory=list)  # one per finished cell
    primary: str = "recall@5"  # the metric that ranks the cells
    comparison: Comparison | None = None  # every cell against the best; None under two cells or when not asked

    def ranked(self, metric: str | None = None) -> list[RunSummary]:
        """The runs, best first by `metric` (the primary metric unless given)."""
        metric = metric or self.primary
        return sorted(self.runs, key=lambda s: -(metric_value(s.means, metric) or float("-inf")))

    def __str__(self) -> str:
        return sweep_table(self, self.primary)


def cell_options(grid: SweepGrid) -> dict[str, dict]:
    """Each retriever's options in the grid: the `retriever_options` it declares (every one must be declared by
    some retriever of the grid), and `fusion` for hybrid."""
    taken, options = set(), {}
    for name in grid.retrievers:
        declared = getattr(retriever_class(name), "Options", None)
        known = set(declared.model_fields) if declared is not None else set()
        options[name] = {k: v for k, v in grid.retriever_options.items() if k in known}
        taken |= set(options[name])
        if name == "hybrid":
            options[name] = {**options[name], **grid.fusion}
    stray = sorted(set(grid.retriever_options) - taken)
    if stray:
        raise SweepError(f"field 'retriever_options': no retriever of the grid ({', '.join(grid.retrievers)}) takes "
                         f"{stray[0]!r}", ["retriever_options"])
    return options


def plan(grid: SweepGrid, dataset: Dataset) -> list[Cell]:
    """The cells, grouped by model (so each model loads once); duplicates (bm25 x models x stores) collapse."""
    uses = {name: retriever_class(name).config_fields for name in grid.retrievers}
    if any("store" in fields for fields in uses.values()):
        for store in grid.stores:
            if isinstance(store, str):
                store_class(store)  # an unknown store fails now, not after the cells before it ran
        try:
            stores = store_settings(grid.stores, grid.store_options, store_class)
        except SettingsError as error:
            # the grid's own field names (``stores.0.options``), as a grid file and --store-grid write them
            raise SweepError(str(error), error.fields, source="stores") from None
    else:
        stores = [(_default("store"), {})]
    questions_fp = questions_fingerprint((q.id, q.text, [r.doc_id for r in q.relevant]) for q in dataset.questions)
    labels_fp = labels_fingerprint(dataset.questions)
    options = cell_options(grid)
    cells: dict[str, Cell] = {}
    for retriever, rerank, model, dtype, (store, store_options), size, overlap in itertools.product(
            grid.retrievers, grid.reranks, grid.models, grid.embed_dtypes, stores, grid.chunk_sizes,
            grid.chunk_overlaps):
        stored = "store" in uses[retriever]
        embed = cell_embed(grid.embed, model, dtype) if "embed" in uses[retriever] else None
        try:
            config = build_settings(EvalConfig, dict(
                retriever=retriever, model=model, store=store if stored else _default("store"),
                store_options=store_options if stored else {}, chunk_size=size, chunk_overlap=overlap,
                ks=grid.ks, granularity=grid.granularity, rel_level=grid.rel_level,
                search_concurrency=grid.search_concurrency,
                embed=embed,
                retriever_options=options[retriever],
                rerank=None if rerank == NO_RERANK else {"name": rerank, **grid.rerank}))
            check_config(config)
        except (ValueError, RagretrievalError) as error:
            stage = reranked_by(None if rerank == NO_RERANK else rerank)
            raise SweepError(f"cell {retriever}{stage} chunk {size}/{overlap}: {error}",
                             getattr(error, "fields", ())) from None
        key = config_key(config, dataset.fingerprint, questions_fp, labels_fp)
        cells.setdefault(key, Cell(config, key))
    return list(cells.values())


def cell_embed(shared: dict, model: str, dtype: str) -> dict | None:
    """A cell's embedding settings: the grid's shared ones, with the cell's dtype for a model that takes one (a
    model that takes none gets none, so its cells of every dtype collapse into one)."""
    base, at, variant = model.rpartition("@")
    takes_dtype = not (at and variant in VARIANTS) and family_of(model).sentence_transformers
    embed = {**shared, "dtype": dtype} if takes_dtype and dtype != AUTO else dict(shared)
    return embed or None


def default_sweep_id(cells: list[Cell]) -> str:
    return "s-" + hashlib.sha256(json.dumps(sorted(c.key for c in cells)).encode()).hexdigest()[:10]


def run_sweep(grid: SweepGrid, history: RunHistory, cache=None, sweep_id: str | None = None,
              progress=None, on_cell: Callable[[str, Cell, str | None], None] | None = None,
              stop: StopToken | None = None, dataset: Dataset | None = None,
              on_note: Callable[[str], None] | None = None) -> SweepResult:
    """Evaluate every unfinished cell and store it; `on_cell(event, cell, run_id)` hears "start", "done", "skip".
    A `stop` request ends the sweep between cells (and inside a cell between batches); run it again to resume.
    `dataset`: the grid's dataset already loaded (else it is loaded from the grid's paths). `on_note` hears the runs
    history's notes (a cell's name that moved from an earlier run: runs/names.py)."""
    dataset = dataset if dataset is not None else load_dataset(grid.dataset, grid.questions)
    cells = plan(grid, dataset)
    result = SweepResult(sweep_id or default_sweep_id(cells), dataset, cells, primary=grid.primary)
    finished = {s.config_key: s.id for s in history.list(tag=result.sweep_id)}
    context = BuildContext(cache=cache, progress=as_progress(progress), stop=stop)  # one model load per model
    say = on_cell or (lambda event, cell, run_id: None)
    for cell in cells:
        if cell.key in finished:
            result.skipped.append(finished[cell.key])
            say("skip", cell, finished[cell.key])
            continue
        if stop is not None:
            stop.check()
        say("start", cell, None)
        report = evaluate(dataset, cell.config, progress=context.progress, context=context)
        run_id = history.save(report, name=f"{result.sweep_id} {cell.label}", tags=[result.sweep_id], on_note=on_note)
        result.ran.append(run_id)
        say("done", cell, run_id)
    keys = {c.key for c in cells}
    result.runs = [s for s in history.list(tag=result.sweep_id) if s.config_key in keys]
    return result


def sweep_table(result: SweepResult, primary: str) -> str:
    """Cells ranked by the primary metric (best first), with their time and the texts they had to embed."""
    level, name = parse_metric_column(primary)
    k = parse_metric(name).k
    others = [f"{level}:{m}" if level else m for m in (f"mrr@{k}", f"ndcg@{k}") if m != name]
    ranked = result.ranked(primary)
    options = {c.key: c.config.store_options for c in result.cells}
    rows = [[str(i), s.id, retriever_cell(s), s.model or "-", store_cell(s, options.get(s.config_key)),
             f"{s.chunk_size}/{s.chunk_overlap}", *(number(metric_value(s.means, m)) for m in (primary, *others)),
             f"{s.total_seconds:.1f}s", str(s.embedded_texts), "now" if s.id in result.ran else "earlier"]
            for i, s in enumerate(ranked, start=1)]
    headers = ["#", "run", "retriever", "model", "store", "chunk", primary, *others, "time", "embedded", "when"]
    title = (f"sweep {result.sweep_id}: {len(result.cells)} cells on {result.dataset.path} "
             f"({len(result.dataset.questions)} questions); ran {len(result.ran)}, "
             f"{len(result.skipped)} finished earlier")
    return title + "\n" + format_table(headers, rows, right={0, *range(6, len(headers) - 1)})


def store_cell(summary: RunSummary, options: dict | None) -> str:
    """The store column: the store and the options of its cell (``faiss kind=hnsw ef_search=16``)."""
    if not summary.model:
        return "-"
    return " ".join([summary.store, *(f"{k}={v}" for k, v in (options or {}).items())])


def sweep(grid, *, dataset=None, runs_db=None, sweep_id: str | None = None, progress=None,
          stop: StopToken | None = None, cache=None, on_cell=None, on_note=None, compare: bool = True,
          **overrides) -> SweepResult:
    """The sweep workflow (``ragretrieval sweep``, ``rr.sweep``): the grid (`as_grid`, `overrides` over it) run
    in the runs history at `runs_db` (checked writable before any cell), resumed where it stopped; with `compare`,
    every finished cell compared, question by question, with the best on the primary metric.
    `dataset`: a `Dataset` or its folder, in place of the grid's; `on_note` as in `run_sweep`."""
    loaded = None
    if isinstance(dataset, Dataset):
        loaded = dataset
        overrides = {"dataset": str(dataset.path), **overrides}
    elif dataset is not None:
        overrides = {"dataset": str(dataset), **overrides}
    grid = as_grid(grid, overrides)
    with RunHistory(runs_db) as history:
        history.check_writable()
        result = run_sweep(grid, history, cache=cache, sweep_id=sweep_id, progress=progress, on_cell=on_cell,
                           stop=stop, dataset=loaded, on_note=on_note)
        if compare and len(result.runs) > 1:
            result.comparison = compare_cells(result, history)
    return result


def compare_cells(result: SweepResult, history: RunHistory) -> Comparison:
    """The paired comparison of the cells' runs, the best first (the others against it), on the metrics of the
    sweep's table: the primary and the MRR and nDCG at its cutoff, at the primary's level."""
    from ..analysis.compare import compare, from_report

    level, name = parse_metric_column(result.primary)
    k = parse_metric(name).k
    metrics = [name, *(m for m in (f"mrr@{k}", f"ndcg@{k}") if m != name)]
    labels = {cell.key: cell.label for cell in result.cells}
    runs = [from_report(history.get(s.id).report, labels.get(s.config_key, s.id), f"run {s.id}")
            for s in result.ranked()]
    if level is None:  # doc level if the runs have it, as the table reads the column
        level = "doc" if "doc" in result.runs[0].means else "chunk"
    return compare(runs, metrics, granularity=level)
