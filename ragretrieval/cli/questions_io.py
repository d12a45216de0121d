"""``ragretrieval import-questions`` / ``export-questions``: question sets in the agent-evaluation JSONL format and
the ApeRAG formats (``aperag-csv``, ``aperag-json``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..data.dataset import QuestionRecord, check_questions, load_dataset, read_jsonl, write_jsonl
from ..data.importers import aperag
from ..data.importers.agent_jsonl import export_record, import_questions
from ..io.atomic import atomic_writer
from ..io.replacing import refuse_to_replace

APERAG = ("aperag-csv", "aperag-json")


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path), default=None,
              help="Dataset whose corpus the doc_uris name (agent-eval; ApeRAG files name no documents).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("questions.jsonl"),
              show_default=True, help="questions.jsonl to write.")
@click.option("--format", "format_", type=click.Choice(["agent-eval", "agent-jsonl", *APERAG]), default="agent-eval",
              show_default=True, help="The file's format (agent-jsonl is another name for agent-eval).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def import_command(file: Path, dataset_dir: Path | None, out: Path, format_: str, force: bool) -> None:
    """Turn a question-set file into a questions.jsonl: agent-evaluation JSONL (request, expected_retrieved_context,
    expected_response: the expected context labels retrieval, the expected response is the reference answer), or an
    ApeRAG CSV / JSON file (question_type, question_text, ground_truth: questions judged on their answers)."""
    refuse_to_replace([out], force)
    if format_ in APERAG:
        questions, warnings = aperag.read_questions(file, format_)
        if dataset_dir is not None:
            check_questions(questions, load_dataset(dataset_dir).documents, str(file))
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
    elif dataset_dir is None:
        raise click.UsageError("--format agent-eval needs --dataset (the corpus its doc_uris name)")
    else:
        questions = import_questions(file, load_dataset(dataset_dir).documents)
    write_jsonl(out, questions)
    use = (f"ragretrieval eval --dataset {dataset_dir} --questions {out}" if format_ not in APERAG else
           f"ragretrieval answer --dataset DIR --questions {out} --generator ... --judge score5")
    click.echo(f"{len(questions)} questions -> {out}; evaluate them with: {use}", err=True)


@click.command("export")
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path), default=None,
              help="Dataset folder (for ApeRAG formats, --questions alone will do).")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@click.option("--format", "format_", type=click.Choice(["agent-jsonl", *APERAG]), default="agent-jsonl",
              show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="File to write [default: stdout].")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def export_command(dataset_dir: Path | None, questions: Path | None, format_: str, out: Path | None,
                   force: bool) -> None:
    """Write a question set as agent-evaluation JSONL (request_id, request, expected_retrieved_context), or as an
    ApeRAG CSV / JSON file (question_type, question_text, ground_truth)."""
    refuse_to_replace([out], force)
    if dataset_dir is None and (questions is None or format_ not in APERAG):
        raise click.UsageError("give --dataset (or, for the ApeRAG formats, --questions FILE alone)")
    if dataset_dir is None:
        records = read_jsonl(questions, QuestionRecord)
    else:
        dataset = load_dataset(dataset_dir, questions)
        records = list(dataset.questions)
    if format_ in APERAG:
        data = aperag.dump_questions(records, format_)
    else:
        documents = {d.id: d for d in dataset.documents}
        data = "".join(export_record(q, documents).model_dump_json(exclude_none=True) + "\n"
                       for q in records).encode("utf-8")
    if out is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)  # bytes as they are: a CSV's BOM and CRLF must reach the file unchanged
        sys.stdout.buffer.flush()
        return
    with atomic_writer(out, binary=True) as f:
        f.write(data)
    click.echo(f"{len(records)} questions -> {out}", err=True)
