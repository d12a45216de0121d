"""``ragretrieval sweep``: evaluate a grid of settings, store every cell as a run, print them ranked."""

from __future__ import annotations

from pathlib import Path

import click

from ..embedders.settings import EmbedSettings
from ..evaluation.report import EvalConfig
from ..retrieval.registry import sweepable_retrievers
from ..runs.store_grid import parse_store_grid
from ..work.options import SettingsError
from .evaluate import embedding_settings, fusion_settings, rerank_settings
from .fields import Setting, collect, comma_separated, setting_options
from .progress import no_progress_option, terminal_progress
from .runs import print_note, runs_db_option


def _retrievers(ctx, param, values):
    """--retriever, repeated or comma-separated, each one a retriever a sweep can run."""
    names, allowed = comma_separated(ctx, param, values), sweepable_retrievers()
    for name in names:
        if name not in allowed:
            raise click.BadParameter(f"{name!r} is not one of {', '.join(map(repr, allowed))}.")
    return names


def _store_grids(ctx, param, values):
    """--store-grid faiss:kind=hnsw:ef_search=8,16,32 (repeatable), each a store with option axes."""
    try:
        parsed = [parse_store_grid(value) for value in values or ()]
        return [item if isinstance(item, str) else item.model_dump() for item in parsed]
    except SettingsError as error:
        raise click.BadParameter(str(error).removeprefix("stores: ")) from None


# grid field <- the eval setting whose option is repeatable here (its default is eval's)
SWEPT = {"models": "model", "retrievers": "retriever", "stores": "store", "chunk_sizes": "chunk_size",
         "chunk_overlaps": "chunk_overlap"}
SWEPT_SETTINGS = [
    Setting("model", EvalConfig, help="Embedding model (repeatable).", show_old=True),
    Setting("retriever", EvalConfig, help="Retriever (repeatable); those without a model (bm25) ignore --model and "
                                          "--store.", extra={"callback": _retrievers,
                                                              "metavar": "[" + "|".join(sweepable_retrievers()) + "]"}),
    Setting("store", EvalConfig, help="Vector store (repeatable)."),
    Setting("chunk_size", EvalConfig, help="Chunk size (repeatable)."),
    Setting("chunk_overlap", EvalConfig, help="Chunk overlap (repeatable)."),
    Setting("embed.dtype", EmbedSettings, help="Precision of the local models (repeatable): one cell per dtype."),
]
SWEPT_SETTINGS = [Setting(s.path, s.model, s.help, {"callback": comma_separated, **s.extra, "multiple": True},
                          s.show_old) for s in SWEPT_SETTINGS]
# settings every cell shares: eval's, for the cells they apply to
SHARED_SETTINGS = [Setting("store_options", EvalConfig, help="key=value for every store."),
                   Setting("retriever_options", EvalConfig,
                           help="key=value for every retriever of the grid that takes it, e.g. k1=1.2."),
                   Setting("ks", EvalConfig), Setting("granularity", EvalConfig),
                   Setting("search_concurrency", EvalConfig),
                   *(s for s in embedding_settings() if s.path != "embed.dtype"), *fusion_settings(),
                   *rerank_settings()[1:]]


@click.command("sweep")
@click.option("--config", "--grid", "grid_file", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML or TOML grid file (docs/runs.md); options given here replace its fields.")
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@setting_options(SWEPT_SETTINGS)
@click.option("--rerank", "reranks", multiple=True, callback=comma_separated,
              help="A reranking stage after every retriever (repeatable; 'none': the retriever alone), e.g. "
                   "--rerank none --rerank embed:e5-small-q4 [default: none].")
@click.option("--store-grid", "store_grids", multiple=True, callback=_store_grids, metavar="STORE:KEY=V[,V...]...",
              help="A store with option axes, a cell per value for that store (and kind) only (repeatable), e.g. "
                   "faiss:kind=hnsw:ef_search=8,16,32 (docs/stores.md).")
@click.option("--primary", default=None, help="Metric that ranks the cells: recall@5 or chunk:ndcg@10 "
                                               "[default: recall@5].")
@click.option("--sweep-id", default=None, help="Resume (or name) this sweep [default: derived from the cells, so "
                                                "running the same sweep again resumes it].")
@runs_db_option
@no_progress_option
@setting_options(SHARED_SETTINGS)
def sweep_command(grid_file, dataset_dir, questions, reranks, store_grids, primary, sweep_id, runs_db, no_progress,
                  **given) -> None:
    """Evaluate every combination of models x retrievers x rerankers x stores x chunkings; each cell is a stored
    run. ``--retriever hybrid`` gives one hybrid (BM25 + dense) per model."""
    swept = collect(SWEPT_SETTINGS, given)
    shared = collect(SHARED_SETTINGS, given)
    options = shared.get("retriever_options", {})
    fusion = {k: options.pop(k) for k in ("fusion", "rrf_k", "alpha") if k in options}
    overrides = dict(dataset=str(dataset_dir) if dataset_dir else None, questions=str(questions) if questions else None,
                     **{field: swept.get(name) for field, name in SWEPT.items()}, reranks=list(reranks),
                     embed_dtypes=(swept.get("embed") or {}).get("dtype"),
                     store_options=shared.get("store_options"), retriever_options=options or None,
                     ks=shared.get("ks"), granularity=shared.get("granularity"), primary=primary,
                     search_concurrency=shared.get("search_concurrency"),
                     embed=shared.get("embed"), fusion=fusion or None, rerank=shared.get("rerank"))
    if store_grids:  # beside --store's names; in place of the grid file's stores
        overrides["stores"] = [*(overrides["stores"] or ()), *store_grids]
    if grid_file is None and dataset_dir is None:
        raise click.UsageError("give --dataset or a --config (grid) file")

    def report(event, cell, run_id):
        if event == "start":
            click.echo(f"cell {cell.label}: running", err=True)
        elif event == "done":
            click.echo(f"cell {cell.label}: run {run_id}", err=True)
        else:
            click.echo(f"cell {cell.label}: finished earlier as {run_id}", err=True)

    from ..runs.sweep import sweep  # the history (SQLAlchemy): imported when the sweep runs, not for --help

    given_fields = {field: value for field, value in overrides.items() if value not in (None, (), [])}
    result = sweep(grid_file if grid_file is not None else {}, runs_db=runs_db, sweep_id=sweep_id,
                   progress=terminal_progress(no_progress), on_cell=report, on_note=print_note,
                   compare=False, **given_fields)
    click.echo(str(result))
