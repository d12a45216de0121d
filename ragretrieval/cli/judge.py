"""``ragretrieval judge``: grade the pooled top chunks of one or more eval runs with an LLM; ``eval --judgements``
reads the file it writes (docs/llm.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..data.dataset import load_dataset
from ..scoring.trec import TrecWriteError, write_qrels
from .llm_options import llm_options, llm_settings
from .progress import no_progress_option, terminal_progress


@click.command("chunks")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--runs", "run_options", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Eval report JSON (the --out of `ragretrieval eval`); more may follow, or repeat --runs.")
@click.argument("more_runs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--depth", type=int, default=10, show_default=True, help="Chunks pooled per question from each run.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("judgements.json"),
              show_default=True, help="Judgements file to write.")
@click.option("--qrels-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the grades as a TREC qrels file over chunk ids (for the scorer or trec_eval).")
@llm_options("", "$question, $passage")
@no_progress_option
def judge_command(dataset_dir, run_options, more_runs, depth, out, qrels_out, model, base_url, api_key_env, concurrency,
                  prompt_file, language, price_in, price_out, timeout, max_retries, no_progress) -> None:
    """Grade the pooled top chunks of eval runs 0-3 with an LLM, for use as chunk labels by `eval --judgements`."""
    from ..llm.judge.pooling import judge
    from ..llm.prompts import guess_language, load_prompt
    from ..llm.replies import check_failures

    runs = list(run_options) + list(more_runs)
    if not runs:
        raise click.UsageError("give at least one run: --runs REPORT.json [REPORT.json ...]")
    settings = llm_settings(model, base_url, api_key_env, timeout, max_retries, price_in, price_out)
    dataset = load_dataset(dataset_dir)
    if language == "auto":
        language = guess_language(d.text for d in dataset.documents)
    prompt = load_prompt("judge", language, prompt_file)
    judgements = judge(dataset, runs, settings, prompt, language, depth, concurrency,
                       progress=terminal_progress(no_progress))
    if judgements.labels:
        judgements.save(out)
    if qrels_out and judgements.labels:
        try:
            write_qrels(judgements.as_qrels(), qrels_out)
        except TrecWriteError as error:  # an id a TREC file cannot hold; the judgements file is written
            raise click.ClickException(f"{qrels_out}: {error}") from None
    for failure in judgements.failed:
        click.echo(f"warning: no judgement for {failure.question_id} / {failure.chunk_id}: {failure.reason}", err=True)
    usage = judgements.usage
    grades = [label.grade for label in judgements.labels]
    spread = ", ".join(f"{grades.count(g)} x {g}" for g in (3, 2, 1, 0))
    click.echo(f"{len(grades)} chunks judged ({spread}), {len(judgements.failed)} failed; {usage['requests']} "
               f"requests, {usage['cached']} from cache, {usage['prompt_tokens'] + usage['completion_tokens']} tokens"
               + (f", ${usage['cost']:.4f}" if usage["cost"] else "")
               + (f" -> {out}" if judgements.labels else "; nothing written"))
    check_failures([f.reason for f in judgements.failed], len(judgements.failed) + len(judgements.labels),
                   "judgements", f"the {len(judgements.labels)} judged chunks are in {out}" if judgements.labels
                   else "no judgements file was written")
