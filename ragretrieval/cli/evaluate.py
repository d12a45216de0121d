"""``ragretrieval eval``: run the pipeline on a dataset and print the summary table."""

from __future__ import annotations

from pathlib import Path

import click

from ..chunking import ChunkingError
from ..dataset import DatasetError, load_dataset
from ..embedders.sentence_transformer import EmbedderError
from ..evaluation import EvaluationError, evaluate
from ..executors import ExecutorError, make_executor
from ..external import ExternalRetrieverError
from ..llm.judgements import Judgements, JudgementsError
from ..report import EvalConfig, question_line, summary_table
from ..stores import StoreError
from .runs import open_history, save_options, save_run


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}", param_hint="--k") from None
    if not ks or ks[0] <= 0:
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}", param_hint="--k")
    return ks


def parse_options(pairs, hint: str = "--store-option") -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected key=value, got {pair!r}", param_hint=hint)
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return options


@click.command("eval")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@click.option("--top-k", type=int, default=None, help="The k of the per-question lines [default: largest of --k].")
@click.option("--k", "ks", default=None, help="Cutoffs to score, e.g. 1,3,5,10 [default: 1,3,5,10 and --top-k].")
@click.option("--granularity", type=click.Choice(["doc", "chunk", "both"]), default="both", show_default=True)
@click.option("--retriever", type=click.Choice(["dense", "bm25", "http", "run-file"]), default="dense",
              show_default=True, help="http / run-file: your own retriever or results (docs/bring-your-own.md).")
@click.option("--retriever-option", "retriever_options", multiple=True,
              help="key=value for http / run-file, e.g. url=..., mapping=mapping.yaml, match=text.")
@click.option("--run", "run_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Results file for --retriever run-file: a TREC run or agent-evaluation JSONL.")
@click.option("--executor", "executor_spec", default="local", show_default=True,
              help="Where corpus embedding runs: local, dask (a cluster on 127.0.0.1) or dask://HOST:PORT.")
@click.option("--model", default="m3e-small", show_default=True, help="sentence-transformers id or folder.")
@click.option("--store", default="faiss", show_default=True, help="Vector store (see `ragretrieval stores`).")
@click.option("--store-option", "store_options", multiple=True, help="key=value for the store, e.g. kind=hnsw.")
@click.option("--index-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Save the dense index here and reuse it while chunks and model are unchanged [default: in memory].")
@click.option("--rebuild", is_flag=True, help="Replace an index in --index-dir built from other chunks/model/store.")
@click.option("--chunk-size", type=int, default=300, show_default=True, help="Most characters per chunk.")
@click.option("--chunk-overlap", type=int, default=50, show_default=True, help="Characters shared by cuts.")
@click.option("--rel-level", type=int, default=1, show_default=True, help="Grade from which a label is relevant.")
@click.option("--judgements", "judgements_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Chunk labels from `ragretrieval judge` to score the chunk level with (docs/llm.md).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars.")
@save_options
def eval_command(dataset_dir, questions, top_k, ks, granularity, retriever, retriever_options, run_file,
                 executor_spec, model, store, store_options,
                 chunk_size, chunk_overlap, rel_level, out, verbose, no_progress, runs_db, name, tags,
                 no_save, index_dir, rebuild, judgements_file=None) -> None:
    """Evaluate retrieval on a dataset: chunk, embed (cached), index, search, score."""
    cutoffs = parse_ks(ks) if ks else [1, 3, 5, 10]
    if top_k is not None:
        if top_k <= 0:
            raise click.BadParameter("must be a positive integer", param_hint="--top-k")
        cutoffs = sorted(set(cutoffs) | {top_k}) if ks is None or top_k in cutoffs else sorted(set(cutoffs) | {top_k})
    outside = parse_options(retriever_options, "--retriever-option") | ({"run": str(run_file)} if run_file else {})
    try:
        executor = make_executor(executor_spec)
    except ExecutorError as error:
        raise click.BadParameter(str(error), param_hint="--executor") from None
    click.get_current_context().call_on_close(executor.close)
    config = EvalConfig(retriever=retriever, model=model if retriever == "dense" else None, store=store,
                        retriever_options=outside,
                        store_options=parse_options(store_options), chunk_size=chunk_size,
                        chunk_overlap=chunk_overlap, ks=cutoffs, top_k=top_k or max(cutoffs),
                        granularity=granularity, rel_level=rel_level)
    history = None if no_save else open_history(runs_db)  # a bad URL fails before the evaluation, not after
    try:
        dataset = load_dataset(dataset_dir, questions)
        click.echo(f"loaded {len(dataset.questions)} questions over {len(dataset.documents)} documents", err=True)
        judged = Judgements.load(judgements_file) if judgements_file else None
        report = evaluate(dataset, config, progress=not no_progress, on_stage=lambda m: click.echo(m, err=True),
                          index_dir=index_dir, rebuild=rebuild, chunk_labels=judged, executor=executor)
    except (DatasetError, EvaluationError, ChunkingError, StoreError, EmbedderError, ExecutorError,
            ExternalRetrieverError, JudgementsError) as error:
        raise click.ClickException(str(error)) from None
    if verbose:
        granularity_shown = "doc" if "doc" in report.means else "chunk"
        for i, result in enumerate(report.questions, start=1):
            click.echo(question_line(i, len(report.questions), result, granularity_shown, config.top_k))
    click.echo(summary_table(report))
    if out:
        report.save(out)
        click.echo(f"report written to {out}", err=True)
    if history is not None:
        save_run(history, report, name, tags)
