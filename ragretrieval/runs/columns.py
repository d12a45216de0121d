"""Each stored run's per-question values as columns, kept apart from its report (schema 7).

Why: a comparison needs, of each run, its question ids, their failure classes and every metric's value per question.
Read from the report, that is a parse of megabytes of JSON (pydantic) and a walk over every question for every
metric: about two thirds of the web's first view of a 1,000-question comparison. Stored as columns it is one query
of ~130 short rows. So when a run is saved (or replaced by ``judge-answers``), the same transaction writes, per
(level, metric), one row whose ``data`` is the values of every question in the report's order as little-endian
float64 (NaN where a question lacks the metric: no such check, no relevant documents, a failed answer), and, at
level ``question``, the ids and the failure classes as JSON lists. The report stays the single source of truth:
the columns are `report_values` of it, the very function ``ragretrieval compare`` reads a report with, so the
figures are equal to the bit.

A run stored before schema 7 has no columns: `RunHistory.columns` computes them from its report the first time they
are asked for and keeps them (when the store can be written).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from ..analysis.compare import CompareError, report_values
from ..evaluation.report import ANSWER_LEVEL
from ..scoring import MetricError
from .schema import run_columns, runs

if TYPE_CHECKING:
    from .history import RunHistory

LEVELS = (ANSWER_LEVEL, "doc", "chunk")  # the levels a comparison tests
QUESTION_LEVEL = "question"  # the rows that hold the ids ("id") and the failure classes ("failure_class")
FLOAT64 = np.dtype("<f8")


@dataclass(frozen=True)
class RunColumns:
    """What a comparison needs of a run: its kind, its question ids in report order, each question's failure class
    (None in runs stored before 0.3) and, per level, each metric's per-question values (its mean's order kept)."""

    kind: str
    ids: list[str]
    classes: list[str | None]
    levels: dict[str, dict[str, np.ndarray]]


def columns_of(report) -> RunColumns:
    """A report's columns: every metric with a mean at a compared level (``pass_rate_*`` means have no per-question
    value), as `report_values` reads it. A metric it cannot read (an answer run where no question has it) is left
    out: no question could be paired on it."""
    levels = {}
    for level, means in report.means.items():
        if level not in LEVELS:
            continue
        levels[level] = {}
        for name in means:
            if name.startswith("pass_rate_"):
                continue
            try:
                levels[level][name] = report_values(report, name, level)
            except (CompareError, MetricError):
                continue
    return RunColumns(report.kind, [q.id for q in report.questions],
                      [getattr(q, "failure_class", None) for q in report.questions], levels)


def write_columns(conn: Connection, run_id: str, columns: RunColumns) -> None:
    """Replace `run_id`'s columns by `columns`, inside the caller's transaction."""
    rows = [dict(level=QUESTION_LEVEL, name="id", data=json.dumps(columns.ids).encode()),
            dict(level=QUESTION_LEVEL, name="failure_class", data=json.dumps(columns.classes).encode())]
    rows += [dict(level=level, name=name, data=np.asarray(values, dtype=FLOAT64).tobytes())
             for level, metrics in columns.levels.items() for name, values in metrics.items()]
    conn.execute(delete(run_columns).where(run_columns.c.run_id == run_id))
    conn.execute(insert(run_columns), [dict(run_id=run_id, position=i, **row) for i, row in enumerate(rows)])


def has_columns(conn: Connection, run_id: str) -> bool:
    return conn.execute(select(run_columns.c.run_id).where(
        run_columns.c.run_id == run_id, run_columns.c.level == QUESTION_LEVEL, run_columns.c.name == "id")
    ).first() is not None


def read_columns(conn: Connection, run_id: str) -> RunColumns | None:
    """`run_id`'s stored columns; None for a run stored before schema 7 (or not at all)."""
    c = run_columns.c
    rows = conn.execute(select(c.level, c.name, c.data).where(c.run_id == run_id).order_by(c.position)).all()
    texts = {row.name: json.loads(bytes(row.data)) for row in rows if row.level == QUESTION_LEVEL}
    kind = conn.execute(select(runs.c.kind).where(runs.c.id == run_id)).scalar()
    if "id" not in texts or kind is None:
        return None
    ids = texts["id"]
    levels: dict[str, dict[str, np.ndarray]] = {}
    for row in rows:
        if row.level != QUESTION_LEVEL:
            values = np.frombuffer(bytes(row.data), dtype=FLOAT64).astype(np.float64)  # a writable, native copy
            if len(values) != len(ids):
                return None  # not written by this module: read the report instead
            levels.setdefault(row.level, {})[row.name] = values
    return RunColumns(kind, ids, texts.get("failure_class") or [None] * len(ids), levels)


def stored_columns(history: RunHistory, run_id: str) -> RunColumns:
    """The columns of the run `run_id` (a full id): stored ones, or, for a run stored before schema 7, computed from
    its report and kept for the next time (unless the store is read-only, or the run changed meanwhile)."""
    with history.engine.connect() as conn:
        found = read_columns(conn, run_id)
        if found is not None:
            return found
        seen = conn.execute(select(runs.c.config_key, runs.c.means).where(runs.c.id == run_id)).first()
    found = columns_of(history.get(run_id).report)
    if not history.read_only and seen is not None:
        _keep(history, run_id, found, tuple(seen))
    return found


def _keep(history: RunHistory, run_id: str, columns: RunColumns, seen: tuple) -> None:
    """Store columns computed from a run's report, unless the run changed since its report was read (`update`
    wrote newer ones) or another reader stored them first: the run's index row is locked while that is checked."""
    try:
        with history._write() as conn:  # the history's own writing transaction (same room)
            now = conn.execute(select(runs.c.config_key, runs.c.means).where(runs.c.id == run_id)
                               .with_for_update()).first()
            if now is not None and tuple(now) == seen and not has_columns(conn, run_id):
                write_columns(conn, run_id, columns)
    except IntegrityError:
        pass  # another process stored the same columns at the same moment
