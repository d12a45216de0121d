"""An evaluation's summary, computed from its finished results when it is shown: counts (``answered``: finished
without an error; the means are over those), the average judge score and how the scores spread, each judge's
verdicts (``judges``: judged, failed, skipped, and the first failure's reason), the mean of every check and retrieval
metric, tokens, cost and latency.

Why computed on read: results arrive one by one from several workers; a summary kept in a column would be one more
thing to keep right under concurrency. Reading 1,000 finished results and averaging their checks and retrieval
metrics (56 a question with the default cutoffs) takes tens of milliseconds, so the server keeps the last summaries
it computed, each under the evaluation's state when it was computed (`gmt_updated`, which every stored result,
pause and resume moves, and the counters): a finished evaluation is summarised once, a running one again only when
a result has come in.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections import OrderedDict

import numpy as np
from sqlalchemy import case, cast, false, func, select
from sqlalchemy.engine import Connection

from ...runs.schema import SCORE_JUDGE, evaluation_results, evaluations
from ...scoring.answer_metrics import current_names

R, E = evaluation_results.c, evaluations.c


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` in 0..1) of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _number(value) -> float | None:
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, (bool, int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return None


def _means(documents: list[str | None]) -> dict[str, float]:
    """The mean of each numeric value over the JSON objects in `documents` (a boolean counts as 0 or 1, a
    ``{"value": v}`` as v; NaN and other values are left out). Objects with the same names in the same order (the
    usual case: every question has the same metrics) are averaged as one numeric array."""
    groups: dict[tuple, list[list]] = {}
    for document in documents:
        found = current_names(json.loads(document or "{}"))  # a result stored under the former names too
        groups.setdefault(tuple(found), []).append(list(found.values()))
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for names, rows in groups.items():
        try:
            values = np.array(rows, dtype=float)  # booleans are 0 and 1; dicts, strings and None do not convert
        except (TypeError, ValueError):
            values = np.array([[_number(v) for v in row] for row in rows], dtype=float)  # None -> NaN
        present = ~np.isnan(values)
        for name, total, count in zip(names, np.where(present, values, 0.0).sum(axis=0), present.sum(axis=0)):
            if count:
                sums[name] = sums.get(name, 0.0) + float(total)
                counts[name] = counts.get(name, 0) + int(count)
    return {name: sums[name] / counts[name] for name in sorted(sums)}


def recount(conn: Connection, eval_id: str, total: int) -> dict:
    """The evaluation's counters from its finished results: completed questions, progress in percent, average
    judge score (what a worker writes after each result, and a resume after putting failed questions back)."""
    done, average = conn.execute(select(func.count(), func.avg(R.llm_judge_score)).where(
        R.evaluation_id == eval_id, R.state == "DONE")).one()
    return {"completed_questions": done, "progress": done * 100 // total, "average_score": average}


def failure_classes(conn: Connection, eval_id: str) -> dict[str, int]:
    """Finished questions per failure class (answers/failures.py), read inside the database from each stored
    ``answer_record`` (kilobytes a row: only the one field leaves the database)."""
    from ...answers.failures import CLASSES

    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import JSONB

        kind = cast(R.answer_record, JSONB)["failure_class"].astext
    else:
        kind = func.json_extract(R.answer_record, "$.failure_class")
    found = dict(conn.execute(select(kind, func.count()).where(
        R.evaluation_id == eval_id, R.state == "DONE", R.answer_record.is_not(None)).group_by(kind)).all())
    return {name: found[name] for name in CLASSES if found.get(name)}
def failed_counts(conn: Connection, eval_ids: list[str]) -> dict[str, int]:
    """Evaluation id -> its finished questions that got no answer (an ``error``): the API's ``failed_questions``."""
    if not eval_ids:
        return {}
    rows = conn.execute(select(R.evaluation_id, func.count()).where(
        R.evaluation_id.in_(eval_ids), R.state == "DONE", R.error.is_not(None)).group_by(R.evaluation_id)).all()
    return dict(rows)


def _verdict_parts(conn: Connection, name: str):
    """SQL expressions of judge `name`'s verdict in a result's ``checks``: its JSON type, value and skipped reason."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import JSONB

        found = cast(R.checks, JSONB)[name]
        return func.jsonb_typeof(found), found["value"].astext, found["skipped"].astext
    path = '$."' + name + '"'
    return (func.json_type(R.checks, path), func.json_extract(R.checks, path + ".value"),
            func.json_extract(R.checks, path + ".skipped"))


def judges_failed_everywhere(conn: Connection, rows) -> dict[str, list[str]]:
    """Evaluation id -> the judges (of its ``judge``) that failed on every answered question so far: not one
    verdict, and at least one failure (a judge that only did not apply, no reference answer anywhere, is not among
    them). Counted inside the database, for a whole list page at once: the API's ``failed_judges``."""
    found: dict[str, list[str]] = {}
    by_judge: dict[str, list[str]] = {}
    for row in rows:
        for name in (row.judge or "").split(","):
            if name and '"' not in name and "\\" not in name:
                by_judge.setdefault(name, []).append(row.id)
    answered = [R.state == "DONE", R.error.is_(None)]
    for name, ids in by_judge.items():
        kind, value, skipped = _verdict_parts(conn, name)
        judged = value.is_not(None) | (R.llm_judge_score.is_not(None) if name == SCORE_JUDGE else false())
        failed = (kind == "object") & value.is_(None) & skipped.is_(None)
        counts = conn.execute(select(R.evaluation_id, func.sum(case((judged, 1), else_=0)),
                                     func.sum(case((failed, 1), else_=0)))
                              .where(R.evaluation_id.in_(ids), *answered).group_by(R.evaluation_id)).all()
        for eval_id, judged_count, failed_count in counts:
            if not judged_count and failed_count:
                found.setdefault(eval_id, []).append(name)
    return found


def judge_counts(names: list[str], rows) -> dict[str, dict]:
    """Judge name -> ``{"judged", "failed", "skipped", "reason"}`` over the answered questions among `rows` (in
    question order): a verdict with a value is judged, one without is skipped (the judge does not apply: no reference
    answer) or failed, and `reason` is the first failure's (None without failures)."""
    found = {name: {"judged": 0, "failed": 0, "skipped": 0, "reason": None} for name in names}
    for row in rows:
        if row.error is not None:
            continue  # no answer: nothing was judged
        checks = json.loads(row.checks or "{}")
        for name, counts in found.items():
            verdict = checks.get(name)
            if name == SCORE_JUDGE and row.llm_judge_score is not None:
                counts["judged"] += 1
            elif isinstance(verdict, dict) and verdict.get("value") is not None:
                counts["judged"] += 1
            elif isinstance(verdict, dict) and verdict.get("skipped"):
                counts["skipped"] += 1
            elif isinstance(verdict, dict):
                counts["failed"] += 1
                counts["reason"] = counts["reason"] or str(verdict.get("error") or "no verdict")
    return found


def summarize(conn: Connection, eval_id: str) -> dict:
    states = dict(conn.execute(select(R.state, func.count()).where(R.evaluation_id == eval_id)
                               .group_by(R.state)).all())
    rows = conn.execute(select(R.llm_judge_score, R.checks, R.metrics, R.input_tokens, R.output_tokens, R.latency,
                               R.cost, R.error).where(R.evaluation_id == eval_id, R.state == "DONE")
                        .order_by(R.position)).all()
    judges = [n for n in (conn.execute(select(E.judge).where(E.id == eval_id)).scalar() or "").split(",") if n]
    scores = [r.llm_judge_score for r in rows if r.llm_judge_score is not None]
    spread = {str(s): 0 for s in range(1, 6)}
    for score in scores:
        spread[str(min(5, max(1, int(score + 0.5))))] += 1
    latencies = [r.latency for r in rows if r.latency is not None]
    tokens_in = sum(r.input_tokens or 0 for r in rows)
    tokens_out = sum(r.output_tokens or 0 for r in rows)
    errors = sum(1 for r in rows if r.error is not None)
    return {
        "finished": len(rows), "pending": states.get("PENDING", 0), "running": states.get("RUNNING", 0),
        "errors": errors, "answered": len(rows) - errors, "judges": judge_counts(judges, rows),
        "average_score": sum(scores) / len(scores) if scores else None,
        "scores": {**spread, "none": len(rows) - len(scores)},
        "checks": _means([r.checks for r in rows]),
        "metrics": _means([r.metrics for r in rows]),
        "input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
        "cost": sum(r.cost or 0.0 for r in rows),
        "latency_mean": sum(latencies) / len(latencies) if latencies else None,
        "latency_p50": percentile(latencies, 0.5), "latency_p95": percentile(latencies, 0.95),
        "failure_classes": failure_classes(conn, eval_id),
    }


class SummaryCache:
    """The last `size` summaries, by the evaluation's state; safe to share between the server's threads."""

    def __init__(self, size: int = 32):
        self.size = size
        self._found: OrderedDict[tuple, dict] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conn: Connection, evaluation) -> dict:
        """The summary of `evaluation` (its row), computed unless it is kept under the same state."""
        key = (evaluation.id, evaluation.gmt_updated, evaluation.status, evaluation.completed_questions)
        with self._lock:
            found = self._found.get(key)
            if found is not None:
                self._found.move_to_end(key)
                return copy.deepcopy(found)
        found = summarize(conn, evaluation.id)
        with self._lock:
            self._found[key] = found
            while len(self._found) > self.size:
                self._found.popitem(last=False)
        return copy.deepcopy(found)

    def clear(self) -> None:
        with self._lock:
            self._found.clear()


summaries = SummaryCache()
