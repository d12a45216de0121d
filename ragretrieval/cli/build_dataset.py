"""``ragretrieval build-dataset DIR``: corpus + questions + manifest, written atomically."""

from __future__ import annotations

from pathlib import Path

import click

from .. import __version__
from ..corpus import CorpusError, load_corpus
from ..dataset import DatasetError, Manifest, SkippedRecord, write_dataset
from ..questions import DEFAULT_TEMPLATE, TemplateError, check_template, filename_questions


@click.command("build-dataset")
@click.argument("corpus_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Dataset folder to write [default: ./<DIR name>-dataset].")
@click.option("--template", default=DEFAULT_TEMPLATE, show_default=True,
              help="Question template; placeholders {name}, {title}, {folder}.")
@click.option("--strict", is_flag=True, help="Stop at the first unreadable, binary, non-UTF-8 or empty file.")
@click.option("--force", is_flag=True, help="Replace a dataset already in --out.")
def build_dataset(corpus_dir: Path, out: Path | None, template: str, strict: bool, force: bool) -> None:
    """Build a dataset (corpus.jsonl, questions.jsonl, manifest.json) from a folder of Markdown files."""
    out = out or Path(f"{corpus_dir.resolve().name}-dataset")
    try:
        check_template(template)
        corpus = load_corpus(corpus_dir, strict=strict,
                             on_skip=lambda s: click.echo(f"warning: skipped {s.path}: {s.reason}", err=True))
        questions = filename_questions(corpus.documents, template)
        manifest = Manifest(
            corpus_fingerprint=corpus.fingerprint,
            n_documents=len(corpus.documents),
            n_questions=len(questions),
            source=str(corpus_dir),
            builder={"generators": ["filename"], "template": template, "strict": strict},
            skipped=[SkippedRecord(path=s.path, reason=s.reason) for s in corpus.skipped],
            created_by=f"ragretrieval {__version__}",
        )
        write_dataset(out, corpus.documents, questions, manifest, force=force)
    except (CorpusError, DatasetError, TemplateError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{len(corpus.documents)} documents, {len(questions)} questions, "
               f"{len(corpus.skipped)} files skipped -> {out}")
