"""Claims on questions: how several workers share evaluations without answering a question twice or losing one.

Each evaluation's questions are rows of ``rr_evaluation_results`` with a ``state``: PENDING -> RUNNING (claimed by
one worker, which moves the row's ``heartbeat`` every few seconds while it works) -> DONE (the result is stored).

- **Claim** (`claim`): in one transaction, the first PENDING row of the oldest evaluation that is PENDING or RUNNING,
  or a RUNNING row whose heartbeat is older than `stale_after` seconds (its worker died: the row is taken over). On
  PostgreSQL the row is read with ``FOR UPDATE SKIP LOCKED``, so workers never wait for each other and never take the
  same row; on SQLite the transaction holds the database's one write lock (``BEGIN IMMEDIATE``).
- **Finish** (`finish`): the result is written only if this worker still holds the claim (``worker`` is its id and
  the state is RUNNING), in the same transaction that recounts the evaluation's progress under a lock on its row. A
  worker that was taken over, or whose evaluation was deleted, writes nothing. With the unique constraint on
  (evaluation, question), a question is stored once.
- **Heartbeat** (`heartbeat`): one statement for all of a worker's claims, on the database's clock.
- **Completion**: the transaction that stores an evaluation's last result also marks it COMPLETED and, through the
  worker's `complete` callback, stores its answer run (stored_run.py), so the run exists exactly when the
  evaluation completed, and a worker that dies before committing leaves its question to be taken over. Unless most
  questions got no answer (`llm.replies.mostly_failed`, the rule `ragretrieval answer` exits 1 by): then it ends
  FAILED with the count and the first causes, and no run is stored; a resume asks the failed questions again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import Callable

from sqlalchemy import and_, or_, select, update
from sqlalchemy.engine import Connection

from ...llm.replies import failure_message, mostly_failed
from ...runs.schema import evaluation_results, evaluations
from ..db import Database, utc_now
from ..store.summary import recount
from .engine import EvaluationSettings, ItemResult, QuestionItem

E, R = evaluations.c, evaluation_results.c
OPEN = ("PENDING", "RUNNING")  # evaluations whose questions may be claimed


@dataclass(frozen=True)
class Claim:
    result_id: str
    evaluation: EvaluationSettings
    question: QuestionItem


def _settings(row, dataset_path, questions) -> EvaluationSettings:
    return EvaluationSettings(
        id=row.id, name=row.name, dataset=row.dataset, dataset_path=dataset_path, question_set_id=row.question_set_id,
        generator=row.generator, base_url=row.base_url, retriever=row.retriever, judge=row.judge,
        judge_model=row.judge_model, judge_base_url=row.judge_base_url, options=json.loads(row.options or "{}"),
        kind=row.kind, questions=questions)


def _question(row) -> QuestionItem:
    return QuestionItem(question_id=row.question_id, position=row.position, question_type=row.question_type,
                        question_text=row.question_text, ground_truth=row.ground_truth,
                        source_record=json.loads(row.source_record) if row.source_record else None)


QUESTION_COLUMNS = (R.question_id, R.position, R.question_type, R.question_text, R.ground_truth, R.source_record)


def questions_of(db: Database, eval_id: str) -> list[QuestionItem]:
    """Every question of the evaluation, in order, as it was when the evaluation was created."""
    with db.read() as conn:
        rows = conn.execute(select(*QUESTION_COLUMNS).where(R.evaluation_id == eval_id).order_by(R.position)).all()
    return [_question(row) for row in rows]


def claim(db: Database, worker: str, stale_after: float, locate=lambda name: None) -> Claim | None:
    """The next question for `worker`, claimed; None when there is no work. `locate(dataset name)` gives the dataset
    folder on this machine."""
    with db.write() as conn:
        now = db.clock(conn)
        open_ids = conn.execute(select(E.id).where(E.status.in_(OPEN)).order_by(E.gmt_created, E.id)
                                .limit(100)).scalars().all()
        for eval_id in open_ids:
            claimable = or_(R.state == "PENDING", and_(R.state == "RUNNING", R.heartbeat < now - stale_after))
            row = conn.execute(select(R.id, R.attempts, *QUESTION_COLUMNS).where(R.evaluation_id == eval_id, claimable)
                               .order_by(R.position).limit(1).with_for_update(skip_locked=True)).first()
            if row is None:
                continue
            evaluation = conn.execute(select(evaluations).where(E.id == eval_id)).first()
            if evaluation is None or evaluation.status not in OPEN:  # paused or deleted since the list was read
                continue
            conn.execute(update(evaluation_results).where(R.id == row.id).values(
                state="RUNNING", worker=worker, heartbeat=now, attempts=row.attempts + 1))
            if evaluation.status == "PENDING":
                _mark_running(conn, eval_id)
            settings = _settings(evaluation, locate(evaluation.dataset), partial(questions_of, db, eval_id))
            return Claim(row.id, settings, _question(row))
    return None


def _mark_running(conn: Connection, eval_id: str) -> None:
    """PENDING -> RUNNING, unless another transaction holds the evaluation's row (then `finish` does it): a claim
    never waits for a lock, so it cannot deadlock with a delete or a pause."""
    if conn.execute(select(E.id).where(E.id == eval_id, E.status == "PENDING")
                    .with_for_update(skip_locked=True)).first():
        stamp = utc_now()
        conn.execute(update(evaluations).where(E.id == eval_id).values(status="RUNNING", started_at=stamp,
                                                                       gmt_updated=stamp))


def heartbeat(db: Database, worker: str) -> int:
    """Move the heartbeat of every question `worker` holds; how many it holds."""
    with db.write() as conn:
        now = db.clock(conn)
        return conn.execute(update(evaluation_results).where(R.worker == worker, R.state == "RUNNING")
                            .values(heartbeat=now)).rowcount


def _lock_evaluation(conn: Connection, eval_id: str):
    return conn.execute(select(E.status, E.total_questions, E.started_at).where(E.id == eval_id)
                        .with_for_update()).first()


def finish(db: Database, claim: Claim, worker: str, result: ItemResult,
           complete: Callable[[Connection], dict] | None = None) -> str | None:
    """Store the result if `worker` still holds the claim; the evaluation's status after it, or None when the claim
    was lost (taken over after a stale heartbeat, released, or the evaluation deleted): nothing is written then.
    When this result completes the evaluation, `complete(conn)` runs in the same transaction and gives more values
    for the evaluation's row (``run_id``, or an ``error``)."""
    stamp = utc_now()
    with db.write() as conn:
        evaluation = _lock_evaluation(conn, claim.evaluation.id)
        if evaluation is None:
            return None
        values = result.model_dump()
        values["rag_answer_sources"] = json.dumps(values["rag_answer_sources"], ensure_ascii=False)
        values["checks"] = json.dumps(values["checks"], ensure_ascii=False)
        values["metrics"] = json.dumps(values["metrics"], ensure_ascii=False)
        if values["answer_record"] is not None:
            values["answer_record"] = json.dumps(values["answer_record"], ensure_ascii=False)
        stored = conn.execute(update(evaluation_results).where(
            R.id == claim.result_id, R.worker == worker, R.state == "RUNNING"
        ).values(state="DONE", heartbeat=None, gmt_updated=stamp, **values)).rowcount  # `worker` stays: who answered
        if stored != 1:
            return None
        counters = recount(conn, claim.evaluation.id, evaluation.total_questions)
        status = "COMPLETED" if counters["completed_questions"] >= evaluation.total_questions else evaluation.status
        extra = {"finished_at": stamp, "error": None} if status == "COMPLETED" else {}
        failed = _failures(conn, claim.evaluation.id) if status == "COMPLETED" else []
        if mostly_failed(len(failed), evaluation.total_questions):
            status = "FAILED"
            extra["error"] = (f"{failure_message(failed, evaluation.total_questions, 'questions')}; no run is "
                              "stored: resume asks the failed questions again")[:10_000]
        elif status == "COMPLETED" and complete is not None:
            extra.update(complete(conn))
        if evaluation.status == "PENDING":  # its claim could not mark it (jobs/claims.py `_mark_running`)
            status = "RUNNING" if status == "PENDING" else status
            extra["started_at"] = evaluation.started_at or stamp
        conn.execute(update(evaluations).where(E.id == claim.evaluation.id).values(
            **counters, status=status, gmt_updated=stamp, **extra))
        return status


def _failures(conn: Connection, eval_id: str) -> list[str]:
    """The errors of the evaluation's finished questions that got no answer, in question order."""
    return list(conn.execute(select(R.error).where(R.evaluation_id == eval_id, R.state == "DONE",
                                                   R.error.is_not(None)).order_by(R.position)).scalars())


def release(db: Database, worker: str, result_id: str | None = None) -> int:
    """Give back `worker`'s claim on `result_id` (or all its claims): the questions are PENDING again."""
    with db.write() as conn:
        where = [R.worker == worker, R.state == "RUNNING"] + ([R.id == result_id] if result_id else [])
        return conn.execute(update(evaluation_results).where(*where)
                            .values(state="PENDING", worker=None, heartbeat=None)).rowcount


def fail(db: Database, eval_id: str, error: str) -> None:
    """The evaluation cannot go on: FAILED with `error` (a PAUSED or finished one keeps its status)."""
    stamp = utc_now()
    with db.write() as conn:
        conn.execute(update(evaluations).where(E.id == eval_id, E.status.in_(OPEN)).values(
            status="FAILED", error=error[:10_000], gmt_updated=stamp, finished_at=stamp))


def is_open(db: Database, eval_id: str) -> bool:
    with db.read() as conn:
        return conn.execute(select(E.status).where(E.id == eval_id)).scalar() in OPEN
