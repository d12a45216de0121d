"""``ragretrieval runs list | show | rm | export | tag | rename``: the runs history from the command line."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .aliases import renamed_option
from .fields import comma_separated

if TYPE_CHECKING:  # the history (SQLAlchemy) is imported where one is opened
    from ..runs import RunHistory

runs_db_option = click.option(
    "--runs-db", "runs_db", metavar="URL", default=None,
    help="Runs history: SQLAlchemy URL or SQLite file [default: ./.ragretrieval/runs.sqlite].  [env var: "
         "RAGRETRIEVAL_RUNS_URL]")  # the variable is read with the others (work/environment.py), when none is given


def open_history(url: str | None, saving: bool = False) -> RunHistory:
    """The runs history at `url`; with `saving`, one the command can store its run in (checked before the work)."""
    from ..runs import RunHistory

    history = RunHistory(url)
    if saving:
        history.check_writable()
    return history


@contextmanager
def history_errors(url: str | None):
    """The history, closed when the block ends (its errors reach the user as one line: cli/__init__.py)."""
    history = open_history(url)
    try:
        yield history
    finally:
        history.close()


def metric_columns(specs) -> list[str]:
    from ..runs.table import parse_metric_column  # the scorer's names (NumPy): loaded when a command runs

    for spec in specs:
        try:
            parse_metric_column(spec)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--metric") from None
    return list(specs)


@click.command("list")
@runs_db_option
@renamed_option("--with-tag", "--tag", "tag", default=None, help="Only runs with this tag.")
@click.option("-m", "--metric", "metrics", multiple=True, default=("recall@5", "mrr@10", "answer:score"),
              callback=comma_separated,
              show_default=True, help="Metric columns: recall@5 (document level), chunk:recall@5, or an answer "
                                      "run's answer:score, answer:cite_f1, ...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of a table.")
def list_command(runs_db, tag, metrics, as_json) -> None:
    """List runs, oldest first."""
    from ..answers.report import answered_label
    from ..runs.table import format_table, metric_value, number, retriever_cell

    metrics = metric_columns(metrics)
    with history_errors(runs_db) as history:
        summaries = history.list(tag=tag)
    if as_json:
        for summary in summaries:
            click.echo(summary.model_dump_json())
        return
    if not summaries:
        click.echo("no runs" + (f" tagged {tag!r}" if tag else ""), err=True)
        return
    headers = ["id", "name", "tags", "created", "retriever", "model", "store", "chunk", "generator", "questions",
               *metrics, "time"]
    rows = [[s.id, s.name or "", ",".join(s.tags), s.created_at.strftime("%Y-%m-%d %H:%M"), retriever_cell(s),
             s.model or "-", s.store if s.model else "-", f"{s.chunk_size}/{s.chunk_overlap}" if s.chunk_size else "-",
             s.generator or "-", str(s.n_questions) if s.n_answered is None else answered_label(s.n_answered,
                                                                                               s.n_questions),
             *(number(metric_value(s.means, m)) for m in metrics),
             f"{s.total_seconds:.1f}s"] for s in summaries]
    click.echo(format_table(headers, rows, right=set(range(9, len(headers)))))


@click.command("show")
@runs_db_option
@click.argument("run_id")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@click.option("--config", "config_format", is_flag=False, flag_value="toml", default=None,
              type=click.Choice(["toml", "yaml"]),
              help="Print only the run's settings file instead, in TOML (--config) or YAML (--config yaml): "
                   "`eval --config FILE` (or `answer --config FILE`) runs it again with the same configuration "
                   "key.")
def show_command(runs_db, run_id, verbose, config_format) -> None:
    """Show a run: labels, data fingerprints, configuration, package versions and the summary table."""
    from ..evaluation.render import question_line, summary_table

    with history_errors(runs_db) as history:
        run = history.get(run_id)
    report, ds = run.report, run.report.dataset
    if config_format:
        from ..runs.settings_file import run_settings, settings_text

        click.echo(settings_text(run_settings(report), config_format), nl=False)
        return
    click.echo(f"run       {run.id}" + (f"  ({run.name})" if run.name else ""))
    click.echo(f"tags      {', '.join(run.tags) or '-'}")
    click.echo(f"created   {run.created_at.isoformat(timespec='seconds')} (evaluated {report.created_at})")
    click.echo(f"dataset   {ds.path}: {ds.n_questions} questions, {ds.n_documents} documents, {ds.n_chunks} chunks")
    click.echo(f"           corpus {ds.corpus_fingerprint}, questions {run.questions_fingerprint}")
    click.echo(f"config    {report.config.model_dump_json()}")
    click.echo(f"           key {run.config_key}" + (f", embedder {report.embedder_identity}"
                                                      if report.embedder_identity else ""))
    click.echo(f"packages  {', '.join(f'{k} {v}' for k, v in run.packages.items())}")
    click.echo("")
    if run.kind == "answer":
        from ..answers.render import metric_table
        from ..answers.render import question_line as answer_line

        for i, answered in enumerate(report.questions if verbose else [], start=1):
            click.echo(answer_line(i, len(report.questions), answered))
        click.echo(metric_table(report))
        return
    if verbose:
        granularity = "doc" if "doc" in report.means else "chunk"
        for i, result in enumerate(report.questions, start=1):
            click.echo(question_line(i, len(report.questions), result, granularity, report.config.top_k))
    click.echo(summary_table(report))


@click.command("rm")
@runs_db_option
@click.argument("run_ids", nargs=-1, required=True)
def rm_command(runs_db, run_ids) -> None:
    """Delete runs (by id, unique id prefix or unique name)."""
    with history_errors(runs_db) as history:
        for run_id in run_ids:
            click.echo(f"removed {history.remove(run_id)}")


@click.command("tag")
@runs_db_option
@click.argument("run_id")
@click.argument("tags", nargs=-1, required=True)
@click.option("--remove", is_flag=True, help="Remove these tags instead of adding them.")
def tag_command(runs_db, run_id, tags, remove) -> None:
    """Add (or --remove) tags."""
    with history_errors(runs_db) as history:
        full_id = history.untag(run_id, *tags) if remove else history.tag(run_id, *tags)
        click.echo(f"{full_id}: {', '.join(history.get(full_id).tags) or 'no tags'}")


@click.command("rename")
@runs_db_option
@click.argument("run_id")
@click.argument("name")
def rename_command(runs_db, run_id, name) -> None:
    """Give a run a name (an empty name removes it); names work wherever an id does, when unique."""
    with history_errors(runs_db) as history:
        click.echo(f"{history.rename(run_id, name, on_note=print_note)}: {name or 'no name'}")


@click.command("export")
@runs_db_option
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["trec", "json"]), required=True)
@renamed_option("--granularity", "--level", "level", type=click.Choice(["doc", "chunk", "both"]), default="doc",
               show_default=True, help="TREC: which ranking; both writes OUT with .doc/.chunk before its suffix.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write [default: standard output].")
def export_command(runs_db, run_id, fmt, level, out) -> None:
    """Export a run as a TREC run file (qid Q0 docid rank score run-id) or as JSON (run + full report)."""
    from ..runs.export import to_json, write_json, write_trec  # the history's module: SQLAlchemy, not for --help

    with history_errors(runs_db) as history:
        run = history.get(run_id)
        if fmt == "json":
            if out:
                write_json(run, out)
            else:
                click.echo(to_json(run), nl=False)
        elif level == "both":
            if out is None:
                raise click.UsageError("--granularity both writes two files: give --out")
            for one in ("doc", "chunk"):
                write_trec(run, out.with_name(f"{out.stem}.{one}{out.suffix}"), one)
        elif out:
            write_trec(run, out, level)
        else:
            with tempfile.TemporaryDirectory() as folder:
                write_trec(run, Path(folder) / "run.trec", level)
                click.echo((Path(folder) / "run.trec").read_text(encoding="utf-8"), nl=False)
    if out:
        click.echo(f"{run.id} written to {out if level != 'both' or fmt == 'json' else out.parent}", err=True)


def print_note(note: str) -> None:
    """A note of the runs history (a run name that moved to the new run: runs/names.py), as one line."""
    click.echo(f"note: {note}", err=True)


def save_run(history: RunHistory, report, name: str | None = None, tags=()) -> str:
    """Store a finished evaluation (what `eval` does unless --no-save) and print its id; a `name` another run had
    moves to this run, which a note says (runs/names.py)."""
    run_id = history.save(report, name=name, tags=tags, on_note=print_note)
    click.echo(f"run {run_id} saved to {history.display_url}")
    return run_id


def keep_report(report, out, history: RunHistory | None, name: str | None, tags) -> None:
    """Write ``--out`` first (a store that fails never loses the result), then store the run unless --no-save."""
    if out:
        report.save(out)
        click.echo(f"report written to {out}", err=True)
    if history is not None:
        save_run(history, report, name, tags)


def save_options(command):
    """--runs-db, --name, --tag, --no-save: where and how `eval` stores its run."""
    for option in reversed([
        runs_db_option,
        click.option("--name", default=None, help="A name for the stored run (usable in place of its id)."),
        click.option("--tag", "tags", multiple=True, help="A tag for the stored run (repeatable)."),
        click.option("--no-save", is_flag=True, help="Do not store the run in the runs history."),
    ]):
        command = option(command)
    return command

