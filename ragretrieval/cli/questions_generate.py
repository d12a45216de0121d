"""``ragretrieval questions generate DATASET``: a model writes questions (with evidence spans) about an existing
dataset's documents into a question file of their own, the same questions ``dataset build --generator llm`` would add
(docs/llm.md). The dataset is not changed; ``eval --questions FILE`` evaluates them."""

from __future__ import annotations

from pathlib import Path

import click

from ..io.replacing import refuse_to_replace
from .llm_questions import question_llm_options

DEFAULT_NAME = "questions-llm.jsonl"


@click.command("generate")
@click.argument("dataset_dir", metavar="DATASET", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"The questions file to write [default: {DEFAULT_NAME} in DATASET].")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@question_llm_options("")
def generate_command(dataset_dir: Path, out: Path | None, force: bool, max_cost: float | None, dry_run: bool,
                     verbose: bool, **llm) -> None:
    """Ask a model for questions about the documents of DATASET, each with the passage that answers it, and write
    them to their own questions file; questions the dataset already asks are not asked again. An interrupted run
    continues where it stopped (the finished documents are kept beside the dataset until the file is written)."""
    from ..data.dataset import load_dataset, write_jsonl
    from ..llm.questions.generate import journal_for
    from .llm_questions import add_llm_questions, plan_llm_questions

    dataset = load_dataset(dataset_dir)
    out = out or dataset_dir / DEFAULT_NAME
    refuse_to_replace([out], force)
    if dry_run:
        return click.echo("\n".join(plan_llm_questions(dataset.documents, dataset_dir, **llm).lines(verbose)))
    known = list(dataset.questions)
    questions, _ = add_llm_questions(dataset.documents, dataset_dir, known, max_cost=max_cost, **llm)
    written = questions[len(known):]
    if not written:
        raise click.ClickException("the model's answers gave no usable question (see the counts above); nothing "
                                   "written. Check the model and prompt; answers are cached, so a re-run is free")
    write_jsonl(out, written)
    journal_for(dataset_dir).remove()  # the file is complete: nothing left to resume
    click.echo(f"{len(written)} questions -> {out}; evaluate them with: ragretrieval eval --dataset {dataset_dir} "
               f"--questions {out}")
