"""``ragretrieval questions nuggets DATASET``: write each question's nuggets (the facts a good answer holds) to
``nuggets.jsonl`` beside the dataset, for the ``nuggets`` judge (docs/answers/nuggets.md, "Nugget evaluation")."""

from __future__ import annotations

from pathlib import Path

import click

from ..llm.nuggets import DEFAULT_MAX_NUGGETS, DEFAULT_PASSAGE_CHARS, MAX_NUGGETS
from .llm_options import llm_options, llm_settings
from .progress import no_progress_option, terminal_progress


@click.command("nuggets")
@click.argument("dataset_dir", metavar="DATASET", type=click.Path(file_okay=False, path_type=Path))
@click.option("--questions", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Another questions.jsonl for the same corpus.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The nuggets file [default: nuggets.jsonl in DATASET].")
@click.option("--max-nuggets", type=click.IntRange(1, MAX_NUGGETS), default=DEFAULT_MAX_NUGGETS, show_default=True,
              help="Nuggets per question at most (vital ones kept first).")
@click.option("--passage-chars", type=click.IntRange(100, 1_000_000), default=DEFAULT_PASSAGE_CHARS,
              show_default=True, help="Characters of each relevant passage shown to the model.")
@click.option("--force", is_flag=True,
              help="Write every question's nuggets again, hand-written ones included [default: only questions "
                   "without nuggets in the file].")
@llm_options("nuggets: ", "question, ground_truth, passages, max_nuggets", old_prefix="nuggets")
@no_progress_option
def nuggets_command(dataset_dir, questions, out, max_nuggets, passage_chars, force, nuggets_model, nuggets_base_url,
                    nuggets_api_key_env, nuggets_concurrency, nuggets_prompt_file, nuggets_language, nuggets_price_in,
                    nuggets_price_out, nuggets_timeout, nuggets_max_retries, no_progress) -> None:
    """Ask a model for the nuggets of every question of DATASET that has none yet: short facts, each vital or okay,
    from the question's reference answer and relevant passages. Hand-written nuggets in the file are kept."""
    from ..data.dataset import load_dataset
    from ..data.nuggets import NUGGETS_FILE
    from ..llm.nuggets import NuggetOptions, write_question_nuggets

    dataset = load_dataset(dataset_dir, questions)
    out = out or Path(dataset_dir) / NUGGETS_FILE
    settings = llm_settings(nuggets_model, nuggets_base_url, nuggets_api_key_env, nuggets_timeout,
                            nuggets_max_retries, nuggets_price_in, nuggets_price_out)
    options = NuggetOptions(max_nuggets=max_nuggets, passage_chars=passage_chars, concurrency=nuggets_concurrency,
                            language=nuggets_language, prompt_file=nuggets_prompt_file, force=force)
    progress = terminal_progress(no_progress)
    result = write_question_nuggets(dataset, out, settings, options, progress)
    progress.close()
    for failed in result.failed:
        click.echo(f"warning: no nuggets for {failed['question_id']}: {failed['reason']}", err=True)
    if result.stale:
        shown = ", ".join(result.stale[:5]) + (", ..." if len(result.stale) > 5 else "")
        click.echo(f"warning: {len(result.stale)} question(s) changed since a model wrote their nuggets ({shown}): "
                   "delete their lines from the file and run again to write them anew, or --force for all", err=True)
    counts, usage = result.counts, result.usage
    listed = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()) if n)
    click.echo(f"{len(result.records)} questions with nuggets -> {out} ({listed or 'nothing to do'}); "
               f"{usage.get('requests', 0)} requests, {usage.get('cached', 0)} from cache, "
               f"{usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0)} tokens"
               + (f", ${usage['cost']:.4f}" if usage.get("cost") else ""), err=True)
