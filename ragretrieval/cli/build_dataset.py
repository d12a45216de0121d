"""``ragretrieval build-dataset DIR``: corpus + questions + manifest, written atomically.

Questions come from one or more generators: ``filename`` (free, one per file name) and ``llm`` (questions with
evidence spans from an OpenAI-compatible endpoint; see docs/llm.md). The LLM options are ignored without ``llm``.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..data.build import build_dataset as build
from ..data.build import default_out, ids_trec_cannot_hold, parse_generators, trec_ids_warning
from ..data.corpus import load_corpus
from ..data.filename_questions import DEFAULT_TEMPLATE
from .llm_questions import question_llm_options


@click.command("build")
@click.argument("corpus_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Dataset folder to write [default: ./<DIR name>-dataset].")
@click.option("--generator", "generator", default="filename", show_default=True,
              help="Question generators: filename, llm, or both (filename,llm).")
@click.option("--template", default=DEFAULT_TEMPLATE, show_default=True,
              help="Question template; placeholders {name}, {title}, {folder}.")
@click.option("--strict", is_flag=True, help="Stop at the first unreadable, binary, non-UTF-8 or empty file.")
@click.option("--force", is_flag=True, help="Replace a dataset already in --out.")
@question_llm_options("llm: ")
def build_dataset(corpus_dir: Path, out: Path | None, generator: str, template: str, strict: bool, force: bool,
                  max_cost: float | None, dry_run: bool, verbose: bool, **llm) -> None:
    """Build a dataset (corpus.jsonl, questions.jsonl, manifest.json) from a folder of Markdown files."""
    from .llm_questions import add_llm_questions, plan_llm_questions

    generators = parse_generators(generator)
    out = out or default_out(corpus_dir)
    if "llm" not in generators and (dry_run or max_cost is not None):
        raise click.UsageError("--dry-run and --max-cost are for --generator llm (filename questions cost nothing)")
    if dry_run:
        corpus = load_corpus(corpus_dir, strict=strict)
        return click.echo("\n".join(plan_llm_questions(corpus.documents, out, **llm).lines(verbose)))

    def llm_questions(documents, folder, questions):
        return add_llm_questions(documents, folder, questions, max_cost=max_cost, **llm)

    dataset = build(corpus_dir, out, template=template, strict=strict, force=force, generators=generators,
                    more_questions=llm_questions if "llm" in generators else None,
                    on_skip=lambda s: click.echo(f"warning: skipped {s.path}: {s.reason}", err=True),
                    on_note=lambda note: click.echo(f"note: {note}", err=True))
    awkward = trec_ids_warning(ids_trec_cannot_hold(dataset), "rename the files")
    if awkward:
        click.echo(f"warning: {awkward}", err=True)
    if "llm" in generators:
        from ..llm.questions.generate import journal_for

        journal_for(out).remove()  # the dataset is complete: nothing left to resume
    click.echo(f"{len(dataset.documents)} documents, {len(dataset.questions)} questions, "
               f"{len(dataset.manifest.skipped)} files skipped -> {out}")
