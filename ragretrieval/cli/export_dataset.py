"""``ragretrieval export-dataset``: a dataset written in another tool's layout (BEIR), to hand it to BEIR, MTEB or
pyserini tooling."""

from __future__ import annotations

from pathlib import Path

import click

from ..data.dataset import load_dataset
from ..data.importers.beir import export_beir


@click.command("export")
@click.argument("dataset_dir", metavar="DATASET", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--format", "format_", type=click.Choice(["beir"]), required=True,
              help="beir: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (docs/dataset-format.md).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Folder to write.")
@click.option("--questions", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Another questions.jsonl for the dataset's corpus [default: its own].")
@click.option("--split", default="test", show_default=True, help="The qrels file's name: qrels/<split>.tsv.")
@click.option("--force", is_flag=True, help="Replace the files already in --out.")
def export_dataset_command(dataset_dir: Path, format_: str, out: Path, questions: Path | None, split: str,
                           force: bool) -> None:
    """Write DATASET as a BEIR folder: every document, every question (as a query; what BEIR has no field for is
    kept in its metadata.ragretrieval), and the graded judgements. import-dataset --format beir reads it back."""
    written = export_beir(load_dataset(dataset_dir, questions), out, split, force)
    click.echo(f"{written['documents']} documents, {written['queries']} queries, {written['judgements']} "
               f"judgements ({written['qrels']}) -> {out}", err=True)
