"""The verdicts of a stored answer run (judging.py runs the whole workflow, dry_run.py plans it): its stored answers and
contexts are judged as they are, nothing is generated again, and the report comes back with the judges' verdicts,
metrics and summaries added.

What changes and what does not: answers, contexts, citations, check values and retrieval metrics are kept as
stored; each question gains ``judges[name]`` and the judge's metric (and the agent-evaluation token counts when the
generator reported tokens), the configuration's ``scorers`` gains each judge's settings (so the run's configuration
key changes, as it would for an ``answer --judge`` run), the means, usage and ``judges`` summaries are recomputed,
the timings gain ``judging``, and a note says when the judges were added.

Verdicts already in the run from a judge with the same settings are kept and not asked again, except failures,
which are asked again. A judge already in the run with other settings (another model or prompt) is refused unless
`replace` (judge-answers ``--new-run``, which keeps the original run as it was): earlier verdicts are never lost
silently.

Resuming: each judged question is appended to a journal (llm/journal.py) under a key of the run and the judges'
settings, and every request is in the answer cache, so a judging killed halfway and started again sends no request
twice; a verdict that failed is not taken from the journal but asked again (its answer was never cached as good).
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel

from ..llm.journal import Journal
from ..work.options import SettingsError
from ..work.pool import parallel_map
from ..work.progress import as_progress
from .failures import UNKNOWN_SUPPORT_NOTE, ClassRules, classify_all, support_notes
from .judges.base import Judge, JudgeResult, record
from .judges.summary import failed_verdict, failure_notes
from .report import AnsweredQuestion, AnswerReport
from .settings import GENERATOR_CALLS
from .summary import summarize
from .usage import add_agent_metrics

JOURNAL_VERSION = 1
NOTE_PREFIX = "judges added by judge-answers"
# what a judge may read of a question: the judging's journal is keyed by them
JUDGED_FIELDS = {"id", "text", "question_type", "ground_truth", "answer", "contexts", "citations", "error", "relevant",
                 "relevant_grades"}


class JudgedQuestion(BaseModel):
    """One journal line: the verdicts given to one question of the run."""

    journal_version: Literal[1] = JOURNAL_VERSION
    key: str
    question_id: str
    verdicts: dict[str, dict]


def judging_key(report: AnswerReport, judges: list[Judge]) -> str:
    """What identifies one judging of one run: what the judges read of each question (its text, reference,
    answer, contexts and relevant documents) and the judges' settings. Two runs with the same configuration but other
    answers (a service that answers differently today) never share a journal."""
    read = [q.model_dump(mode="json", include=JUDGED_FIELDS) for q in report.questions]
    text = json.dumps([read, [(j.name, j.settings()) for j in judges]], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def settings_difference(before: dict, now: dict) -> str:
    """``base_url 'http://a/v1' (now 'http://b/v1')``, for each setting that differs, the prompt's file and hash
    together."""
    names = [n for n in dict.fromkeys([*before, *now]) if before.get(n) != now.get(n)]
    if "prompt" in names and "prompt_hash" in names:
        names.remove("prompt_hash")  # the same change, said once
    return "; ".join(f"{name} {before.get(name)!r} (now {now.get(name)!r})" for name in names)


def check_conflicts(report: AnswerReport, judges: list[Judge], replace: bool) -> None:
    for judge in judges:
        before = report.config.scorers.get(judge.name)
        if before is not None and before != judge.settings() and not replace:
            raise SettingsError(f"this run already has judge {judge.name!r} with other settings: "
                                f"{settings_difference(before, judge.settings())}; judge it into a new run "
                                "(new_run), which keeps this one as it is", ["new_run"])


def _kept(report: AnswerReport, judge: Judge, answered: AnsweredQuestion) -> bool:
    """The question already holds a verdict of this very judge (a failure is asked again)."""
    verdict = answered.judges.get(judge.name)
    if verdict is None or report.config.scorers.get(judge.name) != judge.settings():
        return False
    return not failed_verdict(verdict)


def pending(report: AnswerReport, judges: list[Judge], journal: Journal | None, key: str
            ) -> tuple[list[AnsweredQuestion], dict[str, list[Judge]], dict]:
    """A copy of the run's questions with the journal's verdicts of this judging (`key`) recorded, which judges each
    question still needs (neither journaled nor already in the run with the same settings), and the journal's
    entries."""
    questions = [q.model_copy(deep=True) for q in report.questions]
    done = {e.question_id: e.verdicts for e in journal.load() if e.key == key} if journal is not None else {}
    wanted: dict[str, list[Judge]] = {}
    for answered in questions:
        if answered.error is not None:
            continue
        for judge in judges:
            if judge.name in done.get(answered.id, {}) and not failed_verdict(done[answered.id][judge.name]):
                result = JudgeResult.model_validate(done[answered.id][judge.name])
                record(judge.name, judge.metric, answered, result)
            elif not _kept(report, judge, answered):
                wanted.setdefault(answered.id, []).append(judge)
    return questions, wanted, done


def judge_report(report: AnswerReport, judges: list[Judge], threads: int = GENERATOR_CALLS.concurrency,
                 journal_path=None, progress=None, stop=None, replace: bool = False) -> AnswerReport:
    """The run `report` with `judges`' verdicts added (the report itself is not changed)."""
    if not judges:
        raise SettingsError("name at least one judge (judges)", ["judges"])
    check_conflicts(report, judges, replace)
    progress = as_progress(progress)
    key = judging_key(report, judges)
    journal = Journal(journal_path, JudgedQuestion) if journal_path else None
    questions, wanted, done = pending(report, judges, journal, key)
    todo = [q for q in questions if q.id in wanted]
    if done:
        progress.note(f"resuming: {len(done)} questions were judged before (journal {journal_path})")

    def judge_one(answered: AnsweredQuestion) -> AnsweredQuestion:
        """Its verdicts, journaled as soon as they are had (the journal is thread-safe)."""
        for judge in wanted[answered.id]:
            record(judge.name, judge.metric, answered, judge.judge(answered))
        if journal is not None:
            journal.append(JudgedQuestion(key=key, question_id=answered.id, verdicts={
                j.name: answered.judges[j.name] for j in wanted[answered.id]}))
        return answered

    started = time.perf_counter()
    usage = next((u for j in judges if (u := getattr(j, "usage", None)) is not None), None)
    progress.stage("judging " + ", ".join(j.name for j in judges), total=len(todo), unit="question")
    for _ in parallel_map(judge_one, todo, threads, stop=stop, name="ragretrieval-judge-answers"):
        progress.advance(1, usage.status() if usage is not None else None)
    return rebuilt(report, questions, judges, time.perf_counter() - started)


def rebuilt(report: AnswerReport, questions: list[AnsweredQuestion], judges: list[Judge],
            seconds: float) -> AnswerReport:
    """The report with judged `questions`, the judges' settings in its configuration and everything recomputed."""
    scorers = {**report.config.scorers, **{j.name: j.settings() for j in judges}}
    config = report.config.model_copy(update={"scorers": scorers})
    for answered in questions:
        add_agent_metrics(answered)
    classes = classify_all(questions, ClassRules.of(config))  # a judge's verdict can change a question's class
    summary = summarize(questions)
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    notes = [n for n in report.notes if not n.startswith("judge ") and UNKNOWN_SUPPORT_NOTE not in n]
    notes += failure_notes(summary["judges"]) + support_notes(questions)
    notes.append(f"{NOTE_PREFIX} at {when}: {', '.join(j.name for j in judges)}")
    timings = {k: v for k, v in report.timings.items() if k != "total"}
    timings["judging"] = timings.get("judging", 0.0) + seconds
    timings["total"] = sum(timings.values())
    return report.model_copy(update={"config": config, "questions": questions, "notes": notes, "timings": timings,
                                     "failure_classes": classes, **summary})

