"""``ragretrieval answer``: gather contexts, get answers, check them, store the run (docs/answers.md).

Every option but where the run goes and how it is shown is an `AnswerSettings` field (its default and help come from
there); a ``--config`` file gives the same fields, the options given here win.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.batch import AnswerLog, journaled, run_answers, run_key
from ..answers.dry_run import plan_answers
from ..answers.judges import check_references
from ..answers.judges.summary import check_judges
from ..answers.render import metric_table, question_line
from ..answers.session import AnswerSession
from ..answers.settings import AnswerSettings
from ..data.dataset import load_dataset
from ..embedders.cache import default_cache_dir
from ..evaluation.report import EvalConfig
from ..llm.budget import BudgetReached
from ..llm.replies import check_failures
from .cost_options import dry_run_option, stopped_by_budget
from .evaluate import retrieval_settings, run_options
from .fields import Setting, collect, config_option, given_settings, setting_options
from .judge_options import judge_settings, with_prompt_files
from .progress import no_progress_option, terminal_progress
from .runs import keep_report, open_history, save_options

SHOWN_FAILURES = 10


def _answer(*names: str, **help) -> list[Setting]:
    return [Setting(name, AnswerSettings, help.get(name)) for name in names]


ANSWER_SETTINGS = [
    *_answer("generator", "generator_options", "contexts", "context_k", "shuffle_context", "seed"),
    Setting("retrieval.ks", EvalConfig, "Cutoffs of the retrieval metrics [default: 1,3,5,10 and --context-k]."),
    Setting("retrieval.rel_level", EvalConfig),
    *_answer("system_message", "refusal_message", "temperature", "max_tokens", "threads", "sleep_time",
             "text_completion", "lemmatizer", "match", "citation_pattern", "unsafe_words"),
    Setting("cite_relevant", AnswerSettings, "Do not expect questions without expect.cite to cite their relevant "
                                             "documents."),
    *_answer("base_url", "api_key_env", "prompt_file", "language", "price_in", "price_out", "timeout",
             "max_retries", "max_cost"),
    *judge_settings(),
    *retrieval_settings("retrieval."),
]


@click.command("answer")
@click.option("--dataset", "dataset_dir", type=click.Path(path_type=Path),
              help="Dataset folder [required unless the --config file names one].")
@click.option("--questions", type=click.Path(path_type=Path), help="Another questions.jsonl for the same corpus.")
@config_option
@setting_options(ANSWER_SETTINGS)
@run_options
@click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Append one JSON line per question (id, question, answer, scores).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON report here.")
@click.option("-v", "--verbose", is_flag=True, help="One line per question (with --dry-run: per request).")
@dry_run_option
@no_progress_option
@save_options
def answer_command(dataset_dir, questions, config_file, executor_spec, index_dir, rebuild, log_file, out, verbose,
                   dry_run, no_progress, runs_db, name, tags, no_save, **given) -> None:
    """Answer every question of a dataset and score the answers: contexts (retrieved or given), an answer from the
    generator, its citations, the deterministic checks of each question, the LLM judges asked for (--judge), and
    the retrieval metrics of the same ranking. The run is stored in the runs history like an `eval`."""
    from ..embedders.executors import make_executor
    from ..retrieval.registry import BuildContext

    settings, dataset_dir, questions = given_settings("answer", config_file, collect(ANSWER_SETTINGS, given),
                                                      dataset_dir, questions, finish=with_prompt_files)
    model = str(settings.retrieval.model or "")
    if dry_run and settings.contexts == "retrieved" and model.startswith("openai:"):
        raise click.UsageError(f"--dry-run sends nothing, but retrieval would embed the corpus with {model} "
                               "through its API; dry-run with --contexts given, or a local retriever")
    history = None if no_save or dry_run else open_history(runs_db, saving=True)  # a bad or read-only store fails first
    progress = terminal_progress(no_progress)
    dataset = load_dataset(dataset_dir, questions)
    click.echo(f"loaded {len(dataset.questions)} questions over {len(dataset.documents)} documents", err=True)
    executor = make_executor(executor_spec)
    click.get_current_context().call_on_close(executor.close)
    context = BuildContext(progress=progress, executor=executor, index_dir=index_dir, rebuild=rebuild)
    session = AnswerSession(dataset, settings, progress=progress, context=context)
    references = [bool((q.ground_truth or "").strip()) for q in dataset.questions]
    for warning in check_references(settings.judges, references) if settings.judges else []:
        click.echo(f"warning: {warning}", err=True)
    key = run_key(session)
    journal = default_cache_dir() / "answers" / f"{key}.journal.jsonl"
    if dry_run:
        progress.close()
        return click.echo("\n".join(plan_answers(session, journal).lines(verbose)))
    log = AnswerLog(log_file) if log_file else None
    try:
        report = run_answers(session, settings.threads, journal, progress, on_answer=log)
    except BudgetReached as error:
        progress.close()
        kept = len(journaled(session, journal))
        raise stopped_by_budget(error, f"{kept} of {len(dataset.questions)} questions are answered and kept in "
                                       f"{journal}" if kept else "no question was finished, so no journal was "
                                                                 "written") from None
    finally:
        if log is not None:
            log.close()
    progress.close()
    failed = [q for q in report.questions if q.error is not None]
    check_failures([q.error for q in failed], len(report.questions), "questions",
                   f"the {len(report.questions) - len(failed)} answered are kept in {journal}")
    check_judges(report.judges, f"nothing is stored; the questions whose verdicts were all had are kept in {journal}")
    if verbose:
        for i, answered in enumerate(report.questions, start=1):
            click.echo(question_line(i, len(report.questions), answered))
    for answered in failed[:SHOWN_FAILURES]:
        click.echo(f"warning: no answer for {answered.id}: {answered.error}", err=True)
    if len(failed) > SHOWN_FAILURES:
        click.echo(f"warning: ... and {len(failed) - SHOWN_FAILURES} more questions without an answer", err=True)
    click.echo(metric_table(report))
    keep_report(report, out, history, name, tags)
    journal.unlink(missing_ok=True)
