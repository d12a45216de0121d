"""``ragretrieval import-traces``: production traces (OTLP JSON with OpenInference attributes, or MLflow traces)
as an agent-evaluation JSONL file that `eval --retriever run-file` and `answer --generator file:` score."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..data.dataset import load_dataset
from ..data.importers.traces.importer import FORMATS, import_traces, read_traces
from ..errors import InputError, RagretrievalError
from ..io.atomic import atomic_writer, write_text_atomic
from ..io.replacing import refuse_to_replace

SHOWN = 20  # trace ids printed per kind


class TracesError(RagretrievalError):
    """Options of import-traces that cannot work together."""


def _write(path: Path, records: list[dict]) -> None:
    with atomic_writer(path) as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def _tell(kind: str, what: str, ids: list[str]) -> None:
    if ids:
        shown = "; ".join(ids[:SHOWN]) + (f"; ... and {len(ids) - SHOWN} more (--report FILE lists all)"
                                          if len(ids) > SHOWN else "")
        click.echo(f"{kind}: {len(ids)} trace(s) {what}: {shown}", err=True)


@click.command("import-traces")
@click.argument("file", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "format_", type=click.Choice(FORMATS), required=True,
              help="otlp: OTLP JSON as the OpenTelemetry Collector's file exporter writes it (OpenInference "
                   "attributes); mlflow: MLflow traces, one JSON per line, one trace, or a folder of them.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The agent-evaluation JSONL to write (with --dataset: the traces of its questions).")
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Match requests to this dataset's questions by text (exact, then normalised).")
@click.option("--questions", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="With --dataset: another questions.jsonl to match against.")
@click.option("--unmatched", type=click.Path(dir_okay=False, path_type=Path),
              help="With --dataset: write the requests that match no question here (judge them on their answers).")
@click.option("--report", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full account (every trace id left out or incomplete) as JSON.")
@click.option("--force", is_flag=True, help="Replace --out (and --unmatched, --report) if they exist.")
def import_traces_command(file: Path, format_: str, out: Path, dataset_dir: Path | None, questions: Path | None,
                          unmatched: Path | None, report: Path | None, force: bool) -> None:
    """Read production traces and write one agent-evaluation record per trace: request, response, the last
    retriever's documents as retrieved_context, token counts and latency. Traces without a retriever span or an
    output are written and reported; traces without a readable request are reported and left out."""
    if (questions or unmatched) and dataset_dir is None:
        raise click.UsageError("--questions and --unmatched go with --dataset")
    targets = [p for p in (out, unmatched, report) if p is not None]
    if len({p.resolve() for p in targets}) != len(targets) or file.resolve() in {p.resolve() for p in targets}:
        raise InputError("--out, --unmatched, --report and FILE must be four different files")
    refuse_to_replace(targets, force)
    traces = read_traces(file, format_)
    if not traces:
        raise TracesError(f"{file}: no traces found")
    known = load_dataset(dataset_dir, questions).questions if dataset_dir is not None else None
    result = import_traces(traces, known)
    _write(out, result.records)
    if unmatched is not None:
        _write(unmatched, result.unmatched)
    if report is not None:
        write_text_atomic(report, json.dumps(result.summary(), ensure_ascii=False, indent=1) + "\n")
    _tell("skipped", "have no readable request (not written)", result.no_request)
    _tell("note", "have no RETRIEVER span (retrieved_context written empty)", result.no_retriever)
    _tell("note", "have no output (no response written; answer fails their question)", result.no_output)
    _tell("note", "repeat a question a later trace asks too (the latest is kept)", result.repeats)
    _tell("note", "name several questions of the same text (left unmatched)", result.ambiguous)
    line = f"{result.traces} traces -> {len(result.records)} records in {out}"
    if known is not None:
        line += (f" ({result.matched['exact']} traces matched a question exactly, {result.matched['normalised']} "
                 f"after normalising; {len(result.unmatched)} unmatched"
                 + (f" -> {unmatched})" if unmatched else ", not written: --unmatched FILE keeps them)"))
    click.echo(line, err=True)
