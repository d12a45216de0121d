"""``ragretrieval judge-answers RUN --judge NAME[,NAME...]``: judge the stored answers and contexts of an answer run
without generating anything again, and add the verdicts to the run (docs/answers.md, "Judging a stored run")."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.dry_run import plan_judging
from ..answers.judges import JudgeError, JudgeOptions, build_judges, check_references
from ..answers.judges.audit import audit_judge, check_repeats
from ..answers.judges.stored import judge_report, judging_key
from ..answers.judges.summary import check_judges
from ..answers.prompt import pick_language
from ..answers.render import metric_table, question_line
from ..answers.report import ANSWER_REPORT, AnswerReport, load_report
from ..answers.settings import AnswerSettings, default
from ..embedders.cache import default_cache_dir
from ..evaluation.report import ReportError
from ..llm.budget import Budget, BudgetReached
from ..work.options import build_settings
from .aliases import renamed_option
from .cost_options import dry_run_option, show_plan, stopped_by_budget
from .fields import Setting, collect, setting_options
from .judge_options import judge_settings, with_prompt_files
from .progress import no_progress_option, terminal_progress
from .runs import history_errors, print_note, runs_db_option

JUDGE_SETTINGS = [*judge_settings("the run's generator's"),
                  Setting("max_cost", AnswerSettings, "Stop before the judges' spend at their prices would pass this "
                                                      "many dollars; 0: only cached verdicts.")]


def _stored(run: str, runs_db: str | None):
    """(report, the stored run or None): a report file, else a run of the history."""
    path = Path(run)
    if path.suffix == ".json" and path.is_file():
        return load_report(path, ANSWER_REPORT), None
    with history_errors(runs_db) as history:
        stored = history.get(run)
        history.check_writable()  # the verdicts are stored in it: refuse before any is asked for
    return stored.report, stored


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
                   "store the noise with the run (docs/answers.md, \"Judge noise\").")
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
    if labels_file is not None and repeats is None:
        raise click.UsageError("--labels is read by the audit: add --repeats N")
    if repeats is not None:
        try:
            check_repeats(repeats)
        except JudgeError as error:
            raise click.BadParameter(str(error).replace("repeats", "--repeats", 1), param_hint="--repeats") from None
    from ..analysis.calibrated_runs import read_values  # SciPy: loaded when judging, not for `--help`

    labels = read_values(labels_file) if labels_file is not None else None
    values = with_prompt_files(collect(JUDGE_SETTINGS, given))
    if not values.get("judges"):
        raise click.UsageError("Missing option '--judge'.")
    judging = build_settings(AnswerSettings, values)
    if (name or tags) and not new_run:
        raise click.UsageError("--name and --tag name a new run: add --new-run (or use `runs rename` / `runs tag`)")
    try:
        report, stored = _stored(run, runs_db)
    except ReportError as error:
        raise click.ClickException(str(error)) from None
    if not isinstance(report, AnswerReport):
        raise click.ClickException(f"{run} is a retrieval run: judge answers judges the answers of an answer run "
                                   "(`ragretrieval answer`); `ragretrieval judge chunks` grades retrieved chunks")
    if stored is None and out is None and not dry_run:
        raise click.UsageError("RUN is a report file: give --out for the judged report (the file is left as it is)")
    settings = report.config.generator_settings
    generator = report.config.generator
    budget = Budget(judging.max_cost) if judging.max_cost is not None else None
    options = JudgeOptions.from_settings(
        judging, pick_language([q.text for q in report.questions]), nuggets=judging.nuggets_file(report.dataset.path),
        budget=budget, generator=generator,
        base_url=settings.get("base_url") if generator.startswith("openai:") else None, api_key_env=None)
    names = judging.judges
    answered = [q for q in report.questions if q.error is None]
    for warning in check_references(names, [bool((q.ground_truth or "").strip()) for q in answered]):
        click.echo(f"warning: {warning}", err=True)
    built = build_judges(names, options)
    journal = default_cache_dir() / "answers" / f"judge-{judging_key(report, built)}.journal.jsonl"
    if dry_run:
        return show_plan(plan_judging(report, built, journal, replace=new_run, repeats=repeats or 1), verbose)
    progress = terminal_progress(no_progress)
    try:
        judged = judge_report(report, built, threads, journal, progress, replace=new_run)
        for judge in built if repeats else []:
            found = audit_judge(judge, judged.questions, repeats, labels, str(labels_file), threads, progress,
                                seed=seed)
            judged = judged.model_copy(update={"judge_noise": {**judged.judge_noise, judge.name: found}})
    except BudgetReached as error:
        raise stopped_by_budget(error, f"the questions judged so far are kept in {journal}") from None
    finally:
        progress.close()
    check_judges({n: s for n, s in judged.judges.items() if n in names},
                 f"nothing is stored or written; the verdicts that were had are kept in {journal}")
    if new_run and stored is not None:
        judged = judged.model_copy(update={"judged_from": stored.id})
    if verbose:
        for i, answered in enumerate(judged.questions, start=1):
            click.echo(question_line(i, len(judged.questions), answered))
    click.echo(metric_table(judged))
    if out:
        judged.save(out)
        click.echo(f"report written to {out}", err=True)
    if stored is not None:
        with history_errors(runs_db) as history:
            if new_run:
                new_name = name or (f"{stored.name}+judges" if stored.name else None)
                new_id = history.save(judged, name=new_name, tags=[*stored.tags, *tags], on_note=print_note)
                click.echo(f"run {new_id} saved to {history.display_url} (judged from {stored.id}, which is "
                           "unchanged)")
            else:
                history.update(stored.id, judged, expected_key=stored.config_key)
                click.echo(f"run {stored.id} updated in {history.display_url}: judges {', '.join(names)} added")
    journal.unlink(missing_ok=True)
