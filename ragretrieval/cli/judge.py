"""``ragretrieval judge``: grade the pooled top chunks of one or more eval runs with an LLM; ``eval --judgements``
reads the file it writes (docs/llm.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..dataset import DatasetError, load_dataset
from ..scoring.trec import write_qrels


@click.command("judge")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--runs", "run_options", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Eval report JSON (the --out of `ragretrieval eval`); more may follow, or repeat --runs.")
@click.argument("more_runs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--depth", type=int, default=10, show_default=True, help="Chunks pooled per question from each run.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("judgements.json"),
              show_default=True, help="Judgements file to write.")
@click.option("--qrels-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the grades as a TREC qrels file over chunk ids (for the scorer or trec_eval).")
@click.option("--model", default=None, help="Judge model [default: gpt-4o-mini].")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable that holds the API key (the key itself is never written anywhere).")
@click.option("--concurrency", type=int, default=4, show_default=True, help="Requests in flight.")
@click.option("--prompt", "prompt_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Prompt file replacing the default ($question, $passage).")
@click.option("--language", type=click.Choice(["auto", "zh", "en"]), default="auto", show_default=True,
              help="Language of the default prompt; auto looks at the corpus.")
@click.option("--price-in", type=float, default=0.0, help="Price per million input tokens, for the cost shown.")
@click.option("--price-out", type=float, default=0.0, help="Price per million output tokens.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds per request.")
@click.option("--max-retries", type=int, default=4, show_default=True, help="Retries on 429, 5xx, timeouts.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def judge_command(dataset_dir, run_options, more_runs, depth, out, qrels_out, model, base_url, api_key_env, concurrency,
                  prompt_file, language, price_in, price_out, timeout, max_retries, no_progress) -> None:
    """Grade the pooled top chunks of eval runs 0-3 with an LLM, for use as chunk labels by `eval --judgements`."""
    from ..llm.client import DEFAULT_MODEL, LLMError, LLMSettings
    from ..llm.judge import JudgeError, judge
    from ..llm.prompts import PromptError, guess_language, load_prompt

    runs = list(run_options) + list(more_runs)
    if not runs:
        raise click.UsageError("give at least one run: --runs REPORT.json [REPORT.json ...]")
    settings = LLMSettings(model=model or DEFAULT_MODEL, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                           max_retries=max_retries, price_in=price_in, price_out=price_out)
    try:
        dataset = load_dataset(dataset_dir)
        if language == "auto":
            language = guess_language(d.text for d in dataset.documents)
        prompt = load_prompt("judge", language, prompt_file)
        judgements = judge(dataset, runs, settings, prompt, language, depth, concurrency, progress=not no_progress)
        judgements.save(out)
    except (DatasetError, JudgeError, PromptError, LLMError) as error:
        raise click.ClickException(str(error)) from None
    if qrels_out:
        try:
            write_qrels(judgements.as_qrels(), qrels_out)
        except ValueError as error:  # an id a TREC file cannot hold; the judgements file is written
            raise click.ClickException(f"{qrels_out}: {error}") from None
    for failure in judgements.failed:
        click.echo(f"warning: no judgement for {failure.question_id} / {failure.chunk_id}: {failure.reason}", err=True)
    usage = judgements.usage
    grades = [label.grade for label in judgements.labels]
    spread = ", ".join(f"{grades.count(g)} x {g}" for g in (3, 2, 1, 0))
    click.echo(f"{len(grades)} chunks judged ({spread}), {len(judgements.failed)} failed; {usage['requests']} "
               f"requests, {usage['cached']} from cache, {usage['prompt_tokens'] + usage['completion_tokens']} tokens"
               + (f", ${usage['cost']:.4f}" if usage["cost"] else "") + f" -> {out}")
