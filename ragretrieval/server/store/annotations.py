"""Reviewers' annotations: a verdict on one answer, correct, partly correct or incorrect, with a
note, kept in ``rr_annotations`` beside the evaluation's results; and what the summary says of them.

Concurrent edits. The write locks the question's result row (PostgreSQL: ``FOR UPDATE``; SQLite has one writer), so
two reviewers saving at once are applied one after the other and the row always holds one of them whole. A client
sends the ``version`` it saw (required; 0 when it saw none) and is refused with 409 when the annotation changed
since, and shown the current one, instead of overwriting a colleague's verdict unseen.

The summary. Counts by verdict; for each judge that gave verdicts on annotated answers, the agreement with the
reviewers (Cohen's kappa over the three verdicts, `analysis.agreement.cohen_kappa`) and the judge's calibrated mean
(`analysis.calibration.calibrated_mean`: PPI++, the judge's verdicts on every answer corrected by the reviewers'
on the annotated ones). Both need a common scale, chosen here and written in docs/web.md:

- a reviewer's verdict is 1 (correct), 0.5 (partly correct) or 0 (incorrect);
- a judge's verdict is put on 0-1: ``score5``'s 1-5 as (score - 1) / 4, a yes/no judge's 0/1 as it is, any other
  value clipped to [0, 1]; for kappa it is then a verdict: correct from 0.75 (score5: 4 or 5), incorrect up to
  0.25 (score5: 1 or 2), partly correct between (score5: 3).

So the calibrated mean estimates the reviewers' mean verdict over every answered question, with a 95% interval.
"""

from __future__ import annotations

import json
import math

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection

from ...analysis.agreement import cohen_kappa
from ...analysis.calibration import CalibrationError, calibrated_mean
from ...runs.schema import SCORE_JUDGE, annotations, evaluation_results, evaluations, reviewer_verdicts
from ..db import Database, utc_now
from ..schemas import AnnotationIn, AnnotationOut
from . import Conflict, NotFound

A, R, E, V = annotations.c, evaluation_results.c, evaluations.c, reviewer_verdicts.c
LABELS = {"correct": 1.0, "partly_correct": 0.5, "incorrect": 0.0}


def annotation_out(row) -> AnnotationOut:
    return AnnotationOut(question_id=row.question_id, verdict=row.verdict, note=row.note, version=row.version,
                         reviewer=row.reviewer or "", gmt_created=row.gmt_created, gmt_updated=row.gmt_updated)


def annotated(conn: Connection, eval_id: str, question_ids: list[str] | None = None) -> dict[str, AnnotationOut]:
    """The evaluation's annotations by question id (those of `question_ids` only, when given)."""
    query = select(annotations).where(A.evaluation_id == eval_id)
    if question_ids is not None:
        if not question_ids:
            return {}
        query = query.where(A.question_id.in_(question_ids))
    return {row.question_id: annotation_out(row) for row in conn.execute(query)}


class Annotations:
    def __init__(self, db: Database):
        self.db = db

    def put(self, eval_id: str, question_id: str, body: AnnotationIn) -> AnnotationOut:
        """Store a reviewer's verdict on the question's answer (a new one, or a new version of it)."""
        now = utc_now()
        with self.db.write() as conn:
            self._answered(conn, eval_id, question_id)
            current = conn.execute(select(annotations).where(A.evaluation_id == eval_id,
                                                             A.question_id == question_id)).first()
            seen = current.version if current else 0
            if body.version != seen:
                now_is = current.verdict if current else "none"
                raise Conflict(f"question {question_id!r} was annotated by someone else meanwhile (version {seen}, "
                               f"you saw {body.version}): its annotation is now {now_is}; reload to see it")
            values = {"verdict": body.verdict, "note": body.note, "reviewer": body.reviewer, "gmt_updated": now}
            if body.reviewer:
                self._own_verdict(conn, eval_id, question_id, body.reviewer, body.verdict, now)
            if current:
                conn.execute(update(annotations).where(A.evaluation_id == eval_id, A.question_id == question_id)
                             .values(version=current.version + 1, **values))
            else:
                conn.execute(insert(annotations).values(evaluation_id=eval_id, question_id=question_id, version=1,
                                                        gmt_created=now, **values))
            return annotation_out(conn.execute(select(annotations).where(
                A.evaluation_id == eval_id, A.question_id == question_id)).one())

    @staticmethod
    def _own_verdict(conn: Connection, eval_id: str, question_id: str, reviewer: str, verdict: str, now: str) -> None:
        """The reviewer's own last verdict on the answer (what the reviewers' agreement is measured on)."""
        where = (V.evaluation_id == eval_id, V.question_id == question_id, V.reviewer == reviewer)
        if conn.execute(select(V.verdict).where(*where)).first():
            conn.execute(update(reviewer_verdicts).where(*where).values(verdict=verdict, gmt_updated=now))
        else:
            conn.execute(insert(reviewer_verdicts).values(evaluation_id=eval_id, question_id=question_id,
                                                          reviewer=reviewer, verdict=verdict, gmt_created=now,
                                                          gmt_updated=now))

    def delete(self, eval_id: str, question_id: str) -> None:
        """Take a verdict back (the answer is not reviewed any more)."""
        with self.db.write() as conn:
            self._answered(conn, eval_id, question_id)
            conn.execute(delete(annotations).where(A.evaluation_id == eval_id, A.question_id == question_id))

    @staticmethod
    def _answered(conn: Connection, eval_id: str, question_id: str) -> None:
        """The question's result row, locked for this transaction; refused when there is no answer to review."""
        kind = conn.execute(select(E.kind).where(E.id == eval_id)).scalar()
        if kind is None:
            raise NotFound(f"no evaluation {eval_id!r}")
        if kind == "retrieval":
            raise Conflict(f"evaluation {eval_id!r} evaluates retrieval alone: it has no answers to annotate")
        row = conn.execute(select(R.state, R.error).where(R.evaluation_id == eval_id, R.question_id == question_id)
                           .with_for_update()).first()
        if row is None:
            raise NotFound(f"no question {question_id!r} in evaluation {eval_id!r}")
        if row.state != "DONE":
            raise Conflict(f"question {question_id!r} has no answer yet ({row.state}): annotate it once it is "
                           "answered")
        if row.error is not None:
            raise Conflict(f"question {question_id!r} got no answer (its request failed): there is nothing to "
                           "annotate")


# ------------------------------------------------------------------------------------------------------ the summary
def judge_scale(name: str, value) -> float | None:
    """A judge's verdict on 0-1 (the module's text); None when it gave none."""
    if isinstance(value, dict):
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if name == SCORE_JUDGE:
        return min(1.0, max(0.0, (value - 1) / 4))
    return min(1.0, max(0.0, float(value)))


def constant_verdict(name: str, scaled: list[float]) -> float | None:
    """The judge's one value (on its own scale: score5 1-5) when it gave every answer the same verdict, else None.
    Its kappa is then undefined: it would read 0.00, as if the judge agreed by chance only, when nothing can be
    told."""
    if not scaled or len(set(scaled)) > 1:
        return None
    return 1 + 4 * scaled[0] if name == SCORE_JUDGE else scaled[0]


def kappa_reason(name: str, scaled: list[float]) -> str | None:
    """Why a judge's kappa is undefined (no common answer, a judge that never varied), or None."""
    if not scaled:
        return "no reviewed answer has this judge's verdict"
    constant = constant_verdict(name, scaled)
    return None if constant is None else f"kappa undefined: the judge gave every answer {constant:g}"


def as_verdict(value: float) -> str:
    return "correct" if value >= 0.75 else "incorrect" if value <= 0.25 else "partly_correct"


def judge_values(conn: Connection, eval_id: str, judges: list[str]) -> dict[str, dict[str, float]]:
    """Judge name -> question id -> its verdict on 0-1, over the finished results."""
    found: dict[str, dict[str, float]] = {name: {} for name in judges}
    rows = conn.execute(select(R.question_id, R.llm_judge_score, R.checks).where(
        R.evaluation_id == eval_id, R.state == "DONE", R.error.is_(None)))
    for row in rows:
        checks = json.loads(row.checks or "{}")
        for name in judges:
            value = row.llm_judge_score if name == SCORE_JUDGE else checks.get(name)
            scaled = judge_scale(name, value)
            if scaled is not None:
                found[name][row.question_id] = scaled
    return found


def annotation_summary(conn: Connection, eval_id: str, judges: list[str]) -> dict:
    """Counts by verdict and, per judge, its agreement with the reviewers and its calibrated mean."""

    labels = {qid: a.verdict for qid, a in annotated(conn, eval_id).items()}
    counts = {verdict: sum(1 for v in labels.values() if v == verdict) for verdict in LABELS}
    summary = {"annotated": len(labels), **counts, "judges": {}}
    if not labels or not judges:
        return summary
    for name, values in judge_values(conn, eval_id, judges).items():
        both = [qid for qid in labels if qid in values]
        if not both:
            continue
        kappa = cohen_kappa([labels[q] for q in both], [as_verdict(values[q]) for q in both]).as_dict()
        entry = {"kappa": kappa["value"], "agreement": kappa.get("observed"), "n": kappa["n"], "calibrated": None,
                 "reason": None}
        constant = constant_verdict(name, [values[q] for q in both])
        if constant is not None:  # a judge that never varied: kappa is undefined, not 0
            entry.update(kappa=None, constant=constant, kappa_reason=kappa_reason(name, [values[q] for q in both]))
        try:
            entry["calibrated"] = calibrated_mean(values, {q: LABELS[v] for q, v in labels.items()},
                                                  metric=name).to_json()
        except CalibrationError as error:
            entry["reason"] = str(error)
        summary["judges"][name] = entry
    return summary
