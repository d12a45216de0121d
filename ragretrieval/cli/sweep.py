"""``ragretrieval sweep``: evaluate a grid of settings, store every cell as a run, print them ranked."""

from __future__ import annotations

from pathlib import Path

import click

from ..retrieval.registry import sweepable_retrievers
from ..runs.sweep import read_grid, run_sweep, sweep_table
from .evaluate import (
    embedding_options,
    fusion_options,
    given,
    parse_ks,
    parse_options,
    rerank_options,
    retrieval_settings,
)
from .progress import no_progress_option, terminal_progress
from .runs import history_errors, runs_db_option

_RERANK_SETTINGS = ("depth", "format", "model", "api_key_env")  # eval's --rerank-* options, for every reranking cell


def embedding_fusion_and_rerank_options(command):
    """eval's embedding settings (for every model of the grid), fusion options (for its hybrid cells) and reranking
    settings (for its reranking cells); `--rerank` itself is repeatable here."""
    for option in reversed([*embedding_options, *fusion_options, *rerank_options[1:]]):
        command = option(command)
    return command


@click.command("sweep")
@click.option("--grid", "grid_file", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML or TOML grid file (docs/runs.md); options given here replace its fields.")
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@click.option("--model", "models", multiple=True, help="Embedding model (repeatable) [default: m3e-small].")
@click.option("--retriever", "retrievers", multiple=True, type=click.Choice(sweepable_retrievers()),
              help="Retriever (repeatable) [default: dense]; those without a model (bm25) ignore --model and "
                   "--store.")
@click.option("--rerank", "reranks", multiple=True,
              help="A reranking stage after every retriever (repeatable; 'none': the retriever alone), e.g. "
                   "--rerank none --rerank embed:e5-small-q4 [default: none].")
@click.option("--store", "stores", multiple=True, help="Vector store (repeatable) [default: faiss].")
@click.option("--store-option", "store_options", multiple=True, help="key=value for every store.")
@click.option("--chunk-size", "chunk_sizes", multiple=True, type=int, help="Chunk size (repeatable) [default: 300].")
@click.option("--chunk-overlap", "chunk_overlaps", multiple=True, type=int,
              help="Chunk overlap (repeatable) [default: 50].")
@click.option("--k", "ks", default=None, help="Cutoffs to score, e.g. 1,3,5,10 [default: 1,3,5,10].")
@click.option("--granularity", type=click.Choice(["doc", "chunk", "both"]), default=None, help="[default: both]")
@click.option("--primary", default=None, help="Metric that ranks the cells: recall@5 or chunk:ndcg@10 "
                                               "[default: recall@5].")
@click.option("--sweep-id", default=None, help="Resume (or name) this sweep [default: derived from the cells, so "
                                                "running the same sweep again resumes it].")
@runs_db_option
@no_progress_option
@embedding_fusion_and_rerank_options
def sweep_command(grid_file, dataset_dir, questions, models, retrievers, reranks, stores, store_options, chunk_sizes,
                  chunk_overlaps, ks, granularity, primary, sweep_id, runs_db, no_progress, **settings) -> None:
    """Evaluate every combination of models x retrievers x rerankers x stores x chunkings; each cell is a stored
    run. ``--retriever hybrid`` gives one hybrid (BM25 + dense) per model."""
    rerank = given(**{key: settings.pop(f"rerank_{key}") for key in _RERANK_SETTINGS})
    retrieval = retrieval_settings(retriever="hybrid", retriever_options=(), run_file=None, model=None, store=None,
                                   store_options=(), chunk_size=None, chunk_overlap=None, **settings)
    overrides = dict(dataset=str(dataset_dir) if dataset_dir else None, questions=str(questions) if questions else None,
                     models=list(models), retrievers=list(retrievers), reranks=list(reranks), stores=list(stores),
                     store_options=parse_options(store_options) or None, chunk_sizes=list(chunk_sizes),
                     chunk_overlaps=list(chunk_overlaps), ks=parse_ks(ks) if ks is not None else None,
                     granularity=granularity, primary=primary, embed=retrieval["embed"],
                     fusion=retrieval["retriever_options"] or None, rerank=rerank or None)
    if grid_file is None and dataset_dir is None:
        raise click.UsageError("give --dataset or a --grid file")

    def report(event, cell, run_id):
        if event == "start":
            click.echo(f"cell {cell.label}: running", err=True)
        elif event == "done":
            click.echo(f"cell {cell.label}: run {run_id}", err=True)
        else:
            click.echo(f"cell {cell.label}: finished earlier as {run_id}", err=True)

    with history_errors(runs_db) as history:
        history.check_writable()
        grid = read_grid(grid_file, overrides)
        result = run_sweep(grid, history, sweep_id=sweep_id, progress=terminal_progress(no_progress), on_cell=report)
    click.echo(sweep_table(result, grid.primary))
