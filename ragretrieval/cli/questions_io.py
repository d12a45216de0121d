"""``ragretrieval import-questions`` / ``export-questions``: question sets in the agent-evaluation JSONL format."""

from __future__ import annotations

from pathlib import Path

import click

from ..data.dataset import load_dataset, write_jsonl
from ..data.importers.agent_jsonl import export_record, import_questions
from ..io.atomic import atomic_writer


@click.command("import-questions")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path),
              help="Dataset whose corpus the doc_uris name.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("questions.jsonl"),
              show_default=True, help="questions.jsonl to write.")
@click.option("--format", "format_", type=click.Choice(["agent-eval", "agent-jsonl"]), default="agent-eval",
              show_default=True, help="The file's format (agent-jsonl is another name for agent-eval).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def import_command(file: Path, dataset_dir: Path, out: Path, format_: str, force: bool) -> None:
    """Turn an agent-evaluation JSONL file (request, expected_retrieved_context, expected_response) into a question
    set: the expected context labels retrieval, the expected response is the reference answer."""
    if out.exists() and not force:
        raise click.ClickException(f"{out}: already exists; pass --force to replace it")
    dataset = load_dataset(dataset_dir)
    questions = import_questions(file, dataset.documents)
    write_jsonl(out, questions)
    click.echo(f"{len(questions)} questions -> {out}; evaluate them with: "
               f"ragretrieval eval --dataset {dataset_dir} --questions {out}", err=True)


@click.command("export-questions")
@click.option("--dataset", "dataset_dir", required=True, type=click.Path(path_type=Path), help="Dataset folder.")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@click.option("--format", "format_", type=click.Choice(["agent-jsonl"]), default="agent-jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="File to write [default: stdout].")
def export_command(dataset_dir: Path, questions: Path | None, format_: str, out: Path | None) -> None:
    """Write a question set as agent-evaluation JSONL (request_id, request, expected_retrieved_context)."""
    dataset = load_dataset(dataset_dir, questions)
    documents = {d.id: d for d in dataset.documents}
    lines = (export_record(q, documents).model_dump_json(exclude_none=True) + "\n" for q in dataset.questions)
    if out is None:
        for line in lines:
            click.echo(line, nl=False)
        return
    with atomic_writer(out) as f:
        f.writelines(lines)
    click.echo(f"{len(dataset.questions)} questions -> {out}", err=True)
