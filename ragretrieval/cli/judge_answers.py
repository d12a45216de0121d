"""``ragretrieval judge answers RUN --judge NAME[,NAME...]``: the flags of `ragretrieval.judge_answers`
(api/judging.py), which judges the stored answers of an answer run and adds the verdicts to it
(docs/answers/judge.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.render import metric_table, question_line
from ..answers.settings import AnswerSettings, default
from ..api.judging import judge_answers
from ..evaluation.report import ReportError
from ..llm.budget import BudgetReached
from .aliases import renamed_option
from .cost_options import dry_run_option, stopped_by_budget
from .fields import Setting, collect, setting_options
from .judge_options import judge_settings, with_prompt_files
from .progress import no_progress_option, terminal_progress
from .runs import runs_db_option

JUDGE_SETTINGS = [*judge_settings("the run's generator's"),
                  Setting("max_cost", AnswerSettings, "Stop before the judges' spend at their prices would pass this "
                                                      "many dollars; 0: only cached verdicts.")]


@click.command("answers")
@click.argument("run")
@setting_options(JUDGE_SETTINGS)
@renamed_option("--concurrency", "--threads", "threads", type=click.IntRange(min=1),
               default=default("threads"), show_default=True, help="Questions judged at once.")
@click.option("--new-run", is_flag=True,
              help="Store the judged run as a new run (linked by judged_from) and leave RUN as it is; needed to "
                   "judge again with other settings.")
@click.option("--name", default=None, help="--new-run: its name [default: RUN's name with '+judges'].")
@click.option("--tag", "tags", multiple=True, help="--new-run: a tag for it, besides RUN's (repeatable).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the judged report here (required when RUN is a report file).")
@click.option("--repeats", type=int, default=None, metavar="N",
              help="Audit the judges: ask every verdict N times in all, and of shuffled contexts and a padded answer; "
                   "store the noise with the run (docs/answers/judge.md, \"Judge noise\").")
@click.option("--labels", "labels_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="--repeats: a person's labels ({\"question_id\", \"value\"} per line) to measure agreement with.")
@click.option("--seed", type=int, default=0, show_default=True, help="--repeats: seed of the shuffles and intervals.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question (with --dry-run: per request).")
@dry_run_option
@no_progress_option
@runs_db_option
def judge_answers_command(run, threads, new_run, name, tags, out, repeats, labels_file, seed, verbose, dry_run,
                          no_progress, runs_db, **given) -> None:
    """Judge the stored answers of an answer run (a run id or name of the history, or an `answer --out` report
    file) and add the judges' verdicts and metrics to it. Nothing is generated again. With --repeats, also audit
    the judges' noise and biases and store it with the run."""
    values = with_prompt_files(collect(JUDGE_SETTINGS, given))
    progress = terminal_progress(no_progress)
    try:
        judged = judge_answers(run, runs_db=runs_db, new_run=new_run, name=name, tags=tags, out=out, repeats=repeats,
                               labels=labels_file, seed=seed, dry_run=dry_run,
                               progress=progress, on_note=_say, threads=threads, **values)
    except ReportError as error:
        raise click.ClickException(str(error)) from None
    except BudgetReached as error:
        raise stopped_by_budget(error, f"the questions judged so far are kept in {error.journal}") from None
    finally:
        progress.close()
    if dry_run:
        return click.echo("\n".join(judged.lines(verbose)))
    if verbose:
        for i, answered in enumerate(judged.questions, start=1):
            click.echo(question_line(i, len(judged.questions), answered))
    click.echo(metric_table(judged))


def _say(line: str) -> None:
    """The library's lines: where the run was stored on stdout, warnings and notes on stderr."""
    click.echo(line, err=not line.startswith("run "))
