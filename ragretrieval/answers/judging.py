"""``ragretrieval judge answers`` and `ragretrieval.judge_answers` in the library: the judges built from the settings,
the journal, the verdicts (stored_judging.py), the audit and the check that every judge answered; the faces only
load the run, call `judge_stored_run` and store what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..work.options import SettingsError
from .report import AnswerReport
from .settings import GENERATOR_CALLS, AnswerSettings
from .stored_judging import judge_report, judging_key


@dataclass
class JudgedRun:
    """What judging a stored run gave: the judged report, or with `dry_run` only the plan of its requests; the
    warnings (references missing for a judge that needs them) and the journal that made it resumable."""

    report: AnswerReport | None
    plan: object | None = None
    warnings: list[str] = field(default_factory=list)
    journal: Path | None = None


def judge_stored_run(report: AnswerReport, settings: AnswerSettings, *, threads: int = GENERATOR_CALLS.concurrency,
                     replace: bool = False, repeats: int | None = None, labels: dict | None = None,
                     labels_source: str = "", seed: int = 0, dry_run: bool = False, progress=None,
                     stop=None) -> JudgedRun:
    """The whole of ``judge answers`` on one report: the judges built from `settings` (their model defaults to the
    run's generator's), a journal keyed by the run and the judges, the verdicts, the audit with `repeats`, and the
    check that every judge gave verdicts. A `BudgetReached` is raised as it comes (what was judged is in the
    journal); a judge that failed on every answer is a `JudgeError` naming the journal."""
    from ..embedders.cache import default_cache_dir
    from ..llm.budget import Budget, BudgetReached
    from .dry_run import plan_judging
    from .judges import JudgeOptions, build_judges, check_references
    from .judges.audit import audit_judge, check_repeats
    from .judges.summary import check_judges

    if not settings.judges:
        raise SettingsError("name at least one judge (judges)", ["judges"])
    if repeats is not None:
        check_repeats(repeats)
    run_settings, generator = report.config.generator_settings, report.config.generator
    budget = Budget(settings.max_cost) if settings.max_cost is not None else None
    options = JudgeOptions.from_settings(
        settings, report.language or "en", nuggets=settings.nuggets_file(report.dataset.path),
        budget=budget, generator=generator,
        base_url=run_settings.get("base_url") if generator.startswith("openai:") else None, api_key_env=None)
    answered = [q for q in report.questions if q.error is None]
    warnings = check_references(settings.judges, [bool((q.ground_truth or "").strip()) for q in answered])
    judges = build_judges(settings.judges, options)
    journal = default_cache_dir() / "answers" / f"judge-{judging_key(report, judges)}.journal.jsonl"
    if dry_run:
        plan = plan_judging(report, judges, journal, replace=replace, repeats=repeats or 1)
        return JudgedRun(None, plan, warnings, journal)
    kept = f"nothing is stored or written; the verdicts that were had are kept in {journal}"
    try:
        judged = judge_report(report, judges, threads, journal, progress, stop=stop, replace=replace)
        # a judge that failed on every answer stops here, before its audit asks anything
        check_judges({n: s for n, s in judged.judges.items() if n in settings.judges}, kept)
        for judge in judges if repeats else []:
            found = audit_judge(judge, judged.questions, repeats, labels, labels_source, threads, progress, seed=seed)
            judged = judged.model_copy(update={"judge_noise": {**judged.judge_noise, judge.name: found}})
    except BudgetReached as error:
        error.journal = journal  # what was judged before the limit is there
        raise
    return JudgedRun(judged, None, warnings, journal)
