"""``ragretrieval build-dataset DIR``: corpus + questions + manifest, written atomically.

Questions come from one or more generators: ``filename`` (free, one per file name) and ``llm`` (questions with
evidence spans from an OpenAI-compatible endpoint; see docs/llm.md). The LLM options are ignored without ``llm``.
"""

from __future__ import annotations

from pathlib import Path

import click

from .. import __version__
from ..data.corpus import load_corpus
from ..data.dataset import (
    DatasetError,
    Manifest,
    SkippedRecord,
    check_writable,
    write_dataset,
)
from ..data.filename_questions import DEFAULT_TEMPLATE, check_template, filename_questions
from .cost_options import cost_options, make_budget
from .llm_options import llm_options
from .progress import no_progress_option

GENERATORS = ("filename", "llm")


def parse_generators(text: str) -> list[str]:
    names = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names or any(name not in GENERATORS for name in names):
        raise click.BadParameter(f"expected a comma-separated list of {', '.join(GENERATORS)}; got {text!r}",
                                 param_hint="--generator")
    return names


@click.command("build-dataset")
@click.argument("corpus_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Dataset folder to write [default: ./<DIR name>-dataset].")
@click.option("--generator", "generator", default="filename", show_default=True,
              help="Question generators: filename, llm, or both (filename,llm).")
@click.option("--template", default=DEFAULT_TEMPLATE, show_default=True,
              help="Question template; placeholders {name}, {title}, {folder}.")
@click.option("--strict", is_flag=True, help="Stop at the first unreadable, binary, non-UTF-8 or empty file.")
@click.option("--force", is_flag=True, help="Replace a dataset already in --out.")
@click.option("--per-doc", type=int, default=3, show_default=True, help="llm: questions asked per document.")
@click.option("--types", "types_text", default="factual,inferential", show_default=True,
              help="llm: question types (factual, inferential).")
@click.option("--max-docs", type=int, default=None, help="llm: ask about this many documents, spread over the corpus.")
@click.option("--no-retry-failed", is_flag=True,
              help="llm: when resuming, keep the failures of documents whose answers failed before (default: ask "
                   "again).")
@llm_options("llm: ", "$n, $types, $title, $document")
@click.option("-v", "--verbose", is_flag=True, help="llm, with --dry-run: one line per request.")
@cost_options
@no_progress_option
def build_dataset(corpus_dir: Path, out: Path | None, generator: str, template: str, strict: bool, force: bool,
                  verbose: bool, dry_run: bool, max_cost: float | None, **llm) -> None:
    """Build a dataset (corpus.jsonl, questions.jsonl, manifest.json) from a folder of Markdown files."""
    generators = parse_generators(generator)
    out = out or Path(f"{corpus_dir.resolve().name}-dataset")
    check_template(template)
    if "llm" not in generators and (dry_run or max_cost is not None):
        raise click.UsageError("--dry-run and --max-cost are for --generator llm (filename questions cost nothing)")
    if not dry_run:
        check_writable(out, force)  # before reading the corpus or paying for any request
    corpus = load_corpus(corpus_dir, strict=strict,
                         on_skip=lambda s: click.echo(f"warning: skipped {s.path}: {s.reason}", err=True))
    awkward = [d.id for d in corpus.documents if any(ch < " " or ch == "\x7f" for ch in d.id)]
    if awkward:
        click.echo(f"warning: {len(awkward)} document ids hold control characters (tab, newline, ...), which TREC "
                   f"files cannot hold: `runs export --format trec` and `judge --qrels-out` will refuse them; rename "
                   f"the files: {', '.join(map(repr, awkward[:3]))}", err=True)
    questions = filename_questions(corpus.documents, template) if "filename" in generators else []
    builder = {"generators": generators, "template": template, "strict": strict}
    if "llm" in generators:
        from .llm_questions import add_llm_questions

        budget = make_budget(max_cost, (llm["price_in"], llm["price_out"]))
        questions, builder["llm"] = add_llm_questions(corpus.documents, out, questions, dry_run=dry_run,
                                                      verbose=verbose, budget=budget, **llm)
        if dry_run:
            return
        if not questions:
            raise DatasetError("the model's answers gave no usable question (see the counts above); nothing "
                               "written. Check --model and --prompt; answers are cached, so a re-run is free")
    manifest = Manifest(
        corpus_fingerprint=corpus.fingerprint,
        n_documents=len(corpus.documents),
        n_questions=len(questions),
        source=str(corpus_dir),
        builder=builder,
        skipped=[SkippedRecord(path=s.path, reason=s.reason) for s in corpus.skipped],
        created_by=f"ragretrieval {__version__}",
    )
    write_dataset(out, corpus.documents, questions, manifest, force=force)
    if "llm" in generators:
        from ..llm.questions.generate import journal_for

        journal_for(out).remove()  # the dataset is complete: nothing left to resume
    click.echo(f"{len(corpus.documents)} documents, {len(questions)} questions, "
               f"{len(corpus.skipped)} files skipped -> {out}")
