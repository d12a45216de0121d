"""``ragretrieval judge-answers RUN --judge NAME[,NAME...]``: judge the stored answers and contexts of an answer run
without generating anything again, and add the verdicts to the run (docs/answers.md, "Judging a stored run")."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.judges import build_judges
from ..answers.judges.stored import judge_report, judging_key
from ..answers.prompt import pick_language
from ..answers.render import metric_table, question_line
from ..answers.report import AnswerReport, load_report
from ..embedders.cache import default_cache_dir
from ..evaluation.report import ReportError
from .judge_options import judge_options, judge_settings
from .progress import no_progress_option, terminal_progress
from .runs import history_errors, runs_db_option


def _stored(run: str, runs_db: str | None):
    """(report, the stored run or None): a report file, else a run of the history."""
    path = Path(run)
    if path.suffix == ".json" and path.is_file():
        return load_report(path), None
    with history_errors(runs_db) as history:
        stored = history.get(run)
    return stored.report, stored


@click.command("judge-answers")
@click.argument("run")
@judge_options(required=True, fallbacks="the run's generator's")
@click.option("--threads", type=click.IntRange(min=1), default=4, show_default=True, help="Questions judged at once.")
@click.option("--new-run", is_flag=True,
              help="Store the judged run as a new run (linked by judged_from) and leave RUN as it is; needed to "
                   "judge again with other settings.")
@click.option("--name", default=None, help="--new-run: its name [default: RUN's name with '+judges'].")
@click.option("--tag", "tags", multiple=True, help="--new-run: a tag for it, besides RUN's (repeatable).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the judged report here (required when RUN is a report file).")
@click.option("-v", "--verbose", is_flag=True, help="One line per question.")
@no_progress_option
@runs_db_option
def judge_answers_command(run, judges, judge_samples, judge_temperature, judge_prompts, judge_nuggets,
                          judge_nugget_batch, judge_model, judge_base_url,
                          judge_api_key_env, judge_language, judge_price_in, judge_price_out, judge_timeout,
                          judge_max_retries, threads, new_run, name, tags, out, verbose, no_progress,
                          runs_db) -> None:
    """Judge the stored answers of an answer run (a run id or name of the history, or an `answer --out` report
    file) and add the judges' verdicts and metrics to it. Nothing is generated again."""
    if (name or tags) and not new_run:
        raise click.UsageError("--name and --tag name a new run: add --new-run (or use `runs rename` / `runs tag`)")
    try:
        report, stored = _stored(run, runs_db)
    except ReportError as error:
        raise click.ClickException(str(error)) from None
    if not isinstance(report, AnswerReport):
        raise click.ClickException(f"{run} is a retrieval run: judge-answers judges the answers of an answer run "
                                   "(`ragretrieval answer`); `ragretrieval judge` grades retrieved chunks")
    if stored is None and out is None:
        raise click.UsageError("RUN is a report file: give --out for the judged report (the file is left as it is)")
    settings = report.config.generator_settings
    generator = report.config.generator
    names, options = judge_settings(
        judges, judge_samples, judge_temperature, judge_prompts, judge_nuggets, judge_nugget_batch, judge_model,
        judge_base_url, judge_api_key_env, judge_language, judge_price_in, judge_price_out, judge_timeout,
        judge_max_retries, generator=generator,
        base_url=settings.get("base_url") if generator.startswith("openai:") else None, api_key_env=None,
        data_language=pick_language([q.text for q in report.questions]), dataset_dir=report.dataset.path)
    built = build_judges(names, options)
    journal = default_cache_dir() / "answers" / f"judge-{judging_key(report, built)}.journal.jsonl"
    progress = terminal_progress(no_progress)
    judged = judge_report(report, built, threads, journal, progress, replace=new_run)
    progress.close()
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
                new_id = history.save(judged, name=new_name, tags=[*stored.tags, *tags])
                click.echo(f"run {new_id} saved to {history.display_url} (judged from {stored.id}, which is "
                           "unchanged)")
            else:
                history.update(stored.id, judged, expected_key=stored.config_key)
                click.echo(f"run {stored.id} updated in {history.display_url}: judges {', '.join(names)} added")
    journal.unlink(missing_ok=True)
