"""``ragretrieval eval``: run the pipeline on a dataset and print the summary table."""

from __future__ import annotations

from pathlib import Path

import click

from ..data.dataset import load_dataset
from ..embedders.executors import make_executor
from ..embedders.settings import EmbedSettings
from ..evaluation.pipeline import evaluate
from ..evaluation.render import question_line, summary_table
from ..evaluation.report import EvalConfig
from ..llm.judge.judgements import Judgements
from ..retrieval.external.run_file import RunFileOptions
from ..retrieval.hybrid import HybridOptions
from ..retrieval.registry import first_stage_retrievers
from ..retrieval.rerank.base import RerankSettings
from .fields import Setting, collect, config_option, given_settings, setting_options
from .progress import no_progress_option, terminal_progress
from .runs import keep_report, open_history, save_options


def retrieval_settings(prefix: str = "") -> list[Setting]:
    """The settings that say how to retrieve, shared by `eval` and `answer` (whose retrieval settings sit under
    ``retrieval.``): retriever, model, store, chunking, then embedding, fusion and reranking settings."""
    return [
        Setting(prefix + "retriever", EvalConfig, extra={"type": click.Choice(sorted(first_stage_retrievers()))}),
        Setting(prefix + "retriever_options", EvalConfig),
        Setting(prefix + "retriever_options.run", RunFileOptions,
                help="Results file for --retriever run-file: a TREC run or agent-evaluation JSONL.",
                extra={"type": click.Path(dir_okay=False, path_type=Path)}),
        Setting(prefix + "model", EvalConfig, show_old=not prefix),  # eval's one model: --model is shown too
        Setting(prefix + "store", EvalConfig),
        Setting(prefix + "store_options", EvalConfig),
        Setting(prefix + "chunk_size", EvalConfig),
        Setting(prefix + "chunk_overlap", EvalConfig),
        *embedding_settings(prefix), *fusion_settings(prefix), *rerank_settings(prefix),
    ]


def embedding_settings(prefix: str = "") -> list[Setting]:
    return [Setting(f"{prefix}embed.{name}", EmbedSettings)
            for name in ("base_url", "api_key_env", "dimensions", "batch_size", "dtype", "concurrency", "input_type",
                         "price", "query_prefix", "passage_prefix")]


def fusion_settings(prefix: str = "") -> list[Setting]:
    return [Setting(f"{prefix}retriever_options.{name}", HybridOptions, help=f"--retriever hybrid: {text}.")
            for name, text in (("fusion", "how BM25 and dense are fused"), ("rrf_k", "k of reciprocal rank fusion"),
                               ("alpha", "weight of the dense part in --fusion weighted"))]


def rerank_settings(prefix: str = "") -> list[Setting]:
    return [Setting(f"{prefix}rerank.{name}", RerankSettings)
            for name in ("name", "depth", "format", "model", "api_key_env")]


def run_options(command):
    """Where and how retrieval runs (not settings: they change no number)."""
    for option in reversed([
        click.option("--executor", "executor_spec", default="local", show_default=True,
                     help="Where corpus embedding runs: local, dask (a local cluster), dask-gpus[:0,1] (one worker "
                          "per GPU) or dask://HOST:PORT."),
        click.option("--index-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Save the dense index here and reuse it while chunks and model are unchanged "
                          "[default: in memory]."),
        click.option("--rebuild", is_flag=True,
                     help="Replace an index in --index-dir built from other chunks/model/store."),
    ]):
        command = option(command)
    return command


SCORING = [Setting("ks", EvalConfig), Setting("top_k", EvalConfig), Setting("granularity", EvalConfig),
           Setting("rel_level", EvalConfig), Setting("search_concurrency", EvalConfig)]
EVAL_SETTINGS = [*SCORING, *retrieval_settings()]


@click.command("eval")
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path),
              help="Dataset folder [required unless the --config file names one].")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@config_option
@setting_options(EVAL_SETTINGS)
@run_options
@click.option("--judgements", "judgements_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Chunk labels from `ragretrieval judge` to score the chunk level with (docs/llm.md).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@no_progress_option
@save_options
def eval_command(dataset_dir, questions, config_file, executor_spec, index_dir, rebuild, judgements_file, out,
                 verbose, no_progress, runs_db, name, tags, no_save, **given) -> None:
    """Evaluate retrieval on a dataset: chunk, embed (cached), index, search, score."""
    config, dataset_dir, questions = given_settings("retrieval", config_file, collect(EVAL_SETTINGS, given),
                                                    dataset_dir, questions)
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
