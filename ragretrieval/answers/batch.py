"""The batch runner: every question of a session on a thread pool, journaled, with progress and a stop token; then
one `AnswerReport`. ``ragretrieval answer`` uses it; the web app calls `AnswerSession.answer_one` itself.

Resuming: each answered question is appended to a JSON Lines journal (llm/journal.py: one fsynced line each, a torn
last line dropped) under the run's configuration key, so a run killed halfway and started again skips the questions
already answered and sends none of their requests again (the others' requests were cached by the LLM client as they
were answered). Questions whose generator or one of whose judges failed are not journaled: a re-run asks for them
again. The journal is removed by the caller once the report is safely written.

`--log FILE`: one JSON line per question as it finishes (id, question, answer, scores, error), appended and flushed,
so a long run can be watched with ``tail -f``; a resumed run first logs the questions its journal gives back, so the
log of every run holds every question. A disk that refuses a line is one error naming the log.

Retrieval runs for blocks of questions at once (`AnswerSession.retrieve_many`: one search, roll-up and scoring per
block, the same numbers as one question at a time); the questions of a block are then answered on the thread pool.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel

from ..data.dataset import questions_fingerprint
from ..io.redact import redact_urls
from ..io.storage import write_error
from ..llm.journal import Journal
from ..work.pool import parallel_map
from ..work.progress import as_progress
from .failures import ClassRules, classify_all, support_notes
from .judges.summary import failed_verdict, failure_notes
from .report import ANSWER_LEVEL, AnsweredQuestion, AnswerReport, answer_config_key
from .session import AnswerSession
from .settings import GENERATOR_CALLS
from .summary import summarize

JOURNAL_VERSION = 1
RETRIEVAL_BLOCK = 256  # questions retrieved for at once: one search and one scoring per block, memory bounded


class JournalEntry(BaseModel):
    journal_version: Literal[1] = JOURNAL_VERSION
    run_key: str
    answered: AnsweredQuestion


def run_key(session: AnswerSession) -> str:
    """The configuration key of the run `session` makes (the journal's and the runs store's)."""
    ds = session.dataset_info()
    questions = questions_fingerprint((q.id, q.text, [r.doc_id for r in q.relevant])
                                      for q in session.dataset.questions)
    return answer_config_key(session.config, ds.corpus_fingerprint, questions, ds.labels_fingerprint,
                             session.answer_labels_fingerprint)


class AnswerLog:
    """``--log FILE``: one line per finished question."""

    KEPT = "the lines written before are kept"

    def __init__(self, path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as error:
            raise write_error(self.path, error, self.KEPT) from None

    def __call__(self, answered: AnsweredQuestion) -> None:
        line = json.dumps({"id": answered.id, "question": answered.text, "answer": answered.answer,
                           "scores": answered.metrics.get(ANSWER_LEVEL, {}), "error": answered.error},
                          ensure_ascii=False)
        with self._lock:
            try:
                self._file.write(line + "\n")
                self._file.flush()
            except OSError as error:
                raise write_error(self.path, error, self.KEPT) from None

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass  # a line the disk refused was reported when it was written


def usage_status(session: AnswerSession) -> Callable[[], str | None]:
    """The progress bar's running bill: the generator's tokens and cost, then the judges' (they share one client)."""
    generator = getattr(session.generator, "usage", None)
    judges = list({id(u): u for s in session.scorers if (u := getattr(s, "usage", None)) is not None}.values())

    def status() -> str | None:
        parts = ([generator.status()] if generator is not None else []) + [f"judges {u.status()}" for u in judges]
        return "; ".join(parts) or None

    return status


def journaled(session: AnswerSession, journal_path, key: str | None = None) -> dict[str, AnsweredQuestion]:
    """The questions of this run that its journal holds (a run resumed skips them)."""
    if not journal_path:
        return {}
    key = key or run_key(session)
    wanted = {q.id for q in session.dataset.questions}
    return {e.answered.id: e.answered for e in Journal(journal_path, JournalEntry).load()
            if e.run_key == key and e.answered.id in wanted}


def run_answers(session: AnswerSession, threads: int = GENERATOR_CALLS.concurrency, journal_path=None, progress=None,
                stop=None,
                on_answer: Callable[[AnsweredQuestion], None] | None = None) -> AnswerReport:
    """Answer every question of the session (those in the journal are taken from it) and build the report."""
    progress = as_progress(progress)
    questions = session.dataset.questions
    key = run_key(session)
    journal = Journal(journal_path, JournalEntry) if journal_path else None
    done = journaled(session, journal_path, key)
    if done:
        progress.note(f"resuming: {len(done)} of {len(questions)} questions were answered before (journal "
                      f"{journal_path})")
    todo = [q for q in questions if q.id not in done]
    started = time.perf_counter()
    progress.stage(f"answering with {redact_urls(session.generator.spec)}", total=len(questions), unit="question")
    progress.advance(len(done))
    if on_answer is not None:  # what the journal gave back is part of this run: a log of it holds every question
        for question in questions:
            if question.id in done:
                on_answer(done[question.id])
    status = usage_status(session)
    for start in range(0, len(todo), RETRIEVAL_BLOCK):
        block = todo[start:start + RETRIEVAL_BLOCK]
        pairs = list(zip(block, session.retrieve_many(block)))
        for _, answered in parallel_map(lambda pair: session.answer_one(*pair), pairs, threads, stop=stop,
                                        name="ragretrieval-answer"):
            if journal is not None and answered.error is None and not any(map(failed_verdict,
                                                                              answered.judges.values())):
                journal.append(JournalEntry(run_key=key, answered=answered))
            done[answered.id] = answered
            if on_answer is not None:
                on_answer(answered)
            progress.advance(1, status())
    answering = time.perf_counter() - started
    return build_report(session, [done[q.id] for q in questions], {**session.timings, "answering": answering})


def build_report(session: AnswerSession, answered: list[AnsweredQuestion], timings: dict[str, float]
                 ) -> AnswerReport:
    """The report of a session's answered questions (in question order); the web app calls this too."""
    meta = session.meta()
    config = session.config
    classes = classify_all(answered, ClassRules.of(config))
    summary = summarize(answered)
    notes = list(meta.pop("notes"))
    if summary["failed"]:
        notes.append(f"{summary['failed']} of {len(answered)} questions got no answer (the generator failed); "
                     "they are left out of the answer metrics")
    notes += failure_notes(summary["judges"]) + support_notes(answered)
    skipped = sum(1 for q in answered if not q.relevant)
    if session.retrieval is not None and skipped:
        notes.append(f"{skipped} question(s) without relevant documents have no retrieval metrics")
    timings = {**timings, "total": sum(timings.values())}
    return AnswerReport(config=config, dataset=session.dataset_info(), settings=session.settings.recorded(),
                        answer_labels_fingerprint=session.answer_labels_fingerprint, language=session.language,
                        timings=timings, notes=notes,
                        questions=answered, failure_classes=classes, **meta, **summary)
