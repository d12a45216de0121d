"""A completed evaluation as a run in the runs history (``kind="answer"``, as ``ragretrieval answer`` stores one), so
``ragretrieval runs list``, ``compare`` and ``report`` work on it like on any run.

`store_run` is called by the worker that stores the evaluation's last result, inside that transaction (claims.py,
`finish`): it reads every question's ``answer_record`` in question order, has the runner make the report
(`AnswerRunner.report`: `build_report`, as the command line does), and saves it through the same connection, named
after the evaluation and tagged ``web`` and with the evaluation's id. The run is committed with the evaluation's
COMPLETED status or not at all.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

from sqlalchemy import select
from sqlalchemy.engine import Connection

from ...answers.report import current_question
from ...runs.history import RunHistory
from ...runs.schema import evaluation_results, evaluations
from .engine import EngineError, EvaluationSettings

E, R = evaluations.c, evaluation_results.c
log = logging.getLogger("ragretrieval.server.jobs")  # a run name that moved to this run (runs/names.py) is logged
RUN_TAG = "web"


def _seconds_since(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    return max(0.0, (datetime.now(timezone.utc) - datetime.fromisoformat(stamp)).total_seconds())


def store_run(conn: Connection, history: RunHistory, evaluation: EvaluationSettings, runner) -> str:
    """Save the evaluation's answer run through `conn`; its run id."""
    rows = conn.execute(select(R.question_id, R.answer_record).where(R.evaluation_id == evaluation.id)
                        .order_by(R.position)).all()
    missing = [row.question_id for row in rows if not row.answer_record]
    if missing:
        raise EngineError(f"{len(missing)} result(s) have no answer record (answered by another engine?), e.g. "
                          f"{missing[0]}")
    started = conn.execute(select(E.started_at).where(E.id == evaluation.id)).scalar()
    # a record stored before the checks' aggregates were renamed is read under today's names
    records = [current_question(json.loads(row.answer_record)) for row in rows]
    report = runner.report(records, {"answering": _seconds_since(started)})
    return history.save(report, name=evaluation.name, tags=(RUN_TAG, evaluation.id), conn=conn, on_note=log.info)
