"""``ragretrieval import-dataset``: a benchmark that brings its own corpus, written as a normal dataset folder."""

from __future__ import annotations

from pathlib import Path

import click

from .. import __version__
from ..answers.checks import check_expect
from ..data.build import trec_awkward, trec_ids_warning
from ..data.corpus import corpus_fingerprint
from ..data.dataset import DatasetError, Manifest, check_writable, write_dataset
from ..data.importers.beir import import_beir
from ..data.importers.legal_rag import import_legal_rag
from ..data.importers.rag_ifeval import import_rag_ifeval
from .progress import no_progress_option, terminal_progress

SHOWN = 20  # warning lines printed per kind


@click.command("import")
@click.argument("benchmark", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--format", "format_", type=click.Choice(["rag-ifeval", "legal-rag", "beir"]), required=True,
              help="The benchmark's layout (docs/answers/import.md; beir: docs/dataset-format.md).")
@click.option("--documents", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="rag-ifeval: documents.jsonl ({id, contents} per line).")
@click.option("--samples", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="rag-ifeval: samples.json (one JSON array of {id, question, context, expect}).")
@click.option("--source", "sources", multiple=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="legal-rag: the OCR'd Markdown transcript(s) the questions are about (repeatable).")
@click.option("--split", default=None, help="beir: the qrels/<split>.tsv to read [default: test].")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Dataset folder.")
@click.option("--strict", is_flag=True, help="Stop at the first bad record instead of skipping it.")
@click.option("--force", is_flag=True, help="Replace a dataset already in --out.")
@no_progress_option
def import_dataset_command(benchmark, format_, documents, samples, sources, split, out, strict, force,
                           no_progress) -> None:
    """Import a benchmark with its own corpus: a BEIR folder (BENCHMARK with corpus.jsonl, queries.jsonl,
    qrels/<split>.tsv), RAG-IFEval (--documents, --samples) or a legal RAG benchmark (BENCHMARK folder of JSON
    files, --source transcript.md)."""
    check_writable(out, force)
    if split is not None and format_ != "beir":
        raise click.UsageError("--split is for --format beir")
    if format_ == "beir":
        if benchmark is None or documents or samples or sources or strict:
            raise click.UsageError("--format beir takes the BEIR folder (and --split); not --documents, --samples, "
                                   "--source or --strict (a bad line always stops it)")
        _import_beir(benchmark, "test" if split is None else split, out, force, no_progress)
        return
    if format_ == "rag-ifeval":
        if not documents or not samples or benchmark or sources:
            raise click.UsageError("--format rag-ifeval takes --documents FILE and --samples FILE (no BENCHMARK, "
                                   "no --source)")
        imported = import_rag_ifeval(documents, samples, strict, check_expect)
    else:
        if benchmark is None or not sources or documents or samples:
            raise click.UsageError("--format legal-rag takes the BENCHMARK folder (or file) and --source FILE.md")
        imported = import_legal_rag(benchmark, sources, strict, check_expect)
    for kind, lines in (("skipped", imported.problems), ("warning", imported.warnings)):
        for line in lines[:SHOWN]:
            click.echo(f"{kind}: {line}", err=True)
        if len(lines) > SHOWN:
            click.echo(f"{kind}: ... and {len(lines) - SHOWN} more (the manifest lists them)", err=True)
    if not imported.questions:
        raise DatasetError(f"no usable question ({len(imported.problems)} bad records): nothing written")
    builder = {**imported.builder, "problems": imported.problems}
    manifest = Manifest(corpus_fingerprint=corpus_fingerprint(imported.documents),
                        n_documents=len(imported.documents), n_questions=len(imported.questions),
                        source=str(benchmark or samples), builder=builder, created_by=f"ragretrieval {__version__}")
    write_dataset(out, imported.documents, imported.questions, manifest, force=force)
    click.echo(f"{len(imported.documents)} documents, {len(imported.questions)} questions, "
               f"{len(imported.problems)} bad records skipped, {len(imported.warnings)} warnings -> {out}", err=True)


def _import_beir(folder: Path, split: str, out: Path, force: bool, no_progress: bool) -> None:
    imported = import_beir(folder, out, split, force, terminal_progress(no_progress), __version__)
    corpus = imported.corpus
    if corpus.with_metadata:
        click.echo(f"note: the metadata of {corpus.with_metadata} documents is not kept (a dataset's documents are "
                   "id, title and text)", err=True)
    awkward = trec_ids_warning(trec_awkward(corpus.ids), "change them in corpus.jsonl")
    if awkward:
        click.echo(f"warning: {awkward}", err=True)
    if imported.unjudged_queries:
        click.echo(f"note: {imported.unjudged_queries} queries are not judged in split {split!r} and were left out",
                   err=True)
    click.echo(f"{len(corpus.ids)} documents, {len(imported.questions)} questions ({split}) -> {out}", err=True)
