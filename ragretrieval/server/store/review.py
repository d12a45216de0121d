"""The review mode: one answer at a time, in an order that favours the answers whose label helps most, and what the
labels say once the judge is calibrated by them.

The order. Every answered question gets an uncertainty in [0, 1], the largest of: how near a judge's verdict is to
its pass threshold (on the 0-1 scale of annotations.py, threshold 0.5: 1 - 2 |v - 0.5|; score5's 3 is 1, its 1 or 5
is 0), whether the samples of one judge request disagreed (1), and how far two judges' verdicts lie apart (max - min).
An answer no judge scored is 1. ``order=uncertain`` (the default) reviews in `analysis.active_inference.draw_order`
of the weights `sampling_weights(uncertainty)` with keys hashed from the evaluation's and the question's ids: a
random draw with known probabilities that favours uncertain answers, the same for every reviewer and every server
process. ``order=uniform`` gives every answer weight 1: a uniform random order.

The estimate. Answers reviewed in the draw order are a priority sample: after the first k of the order, each answer's
probability of having been reviewed is known (`inclusion_probabilities`), and `active_mean` weighs the labels by its
inverse, so the judge's calibrated mean stays unbiased although the uncertain answers were labelled first. Labels
given off that prefix (a reviewer who jumped ahead with ``j``) are left out of it, and counted. Of the two orders the
one whose reviewed prefix is longer is used (ties: uncertain), and named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Connection

from ...analysis.active_inference import (
    active_mean,
    draw_order,
    inclusion_probabilities,
    sampling_weights,
    uniform_keys,
)
from ...analysis.agreement import cohen_kappa, krippendorff_alpha
from ...analysis.calibration import CalibrationError
from ...runs.schema import SCORE_JUDGE, evaluation_results, evaluations, reviewer_verdicts
from ..db import Database
from . import Conflict, NotFound
from .annotations import LABELS, annotated, as_verdict, constant_verdict, judge_scale, judge_values, kappa_reason
from .evaluations import SHOWN, rel_level_of, result_out

E, R, V = evaluations.c, evaluation_results.c, reviewer_verdicts.c
ORDERS = ("uncertain", "uniform")
DEFAULT_ORDER = ORDERS[0]  # the order a review starts in, for the page, the API and the store
THRESHOLD = 0.5  # a verdict's pass threshold on the 0-1 scale (score5: 3)


def _sample_spread(name: str, value) -> float:
    """1 when one judge request's samples disagreed, else the spread of its samples on 0-1 (0 without samples)."""
    if not isinstance(value, dict):
        return 0.0
    if value.get("disagreement"):
        return 1.0
    scaled = [s for s in (judge_scale(name, v) for v in value.get("samples") or []) if s is not None]
    return max(scaled) - min(scaled) if len(scaled) > 1 else 0.0


def uncertainty(judge_score, checks: dict, judges: list[str]) -> float:
    """The answer's uncertainty (module text) from its stored judge score and checks."""
    values, spread = [], 0.0
    for name in judges:
        raw = judge_score if name == SCORE_JUDGE else checks.get(name)
        if name == SCORE_JUDGE and isinstance(checks.get(name), dict):
            spread = max(spread, _sample_spread(name, checks[name]))
        scaled = judge_scale(name, raw)
        if scaled is not None:
            values.append(scaled)
        spread = max(spread, _sample_spread(name, raw))
    if not values:
        return 1.0
    near = max(1 - 2 * abs(v - THRESHOLD) for v in values)
    return float(max(near, spread, max(values) - min(values)))


@dataclass
class Draw:
    """An evaluation's answered questions in review order, with what the estimate needs."""

    ids: list[str]  # answered question ids, in draw order
    weights: np.ndarray  # in the same order
    keys: np.ndarray
    order: str


def _judges(conn: Connection, eval_id: str) -> tuple[str, list[str]]:
    row = conn.execute(select(E.kind, E.judge).where(E.id == eval_id)).first()
    if row is None:
        raise NotFound(f"no evaluation {eval_id!r}")
    if row.kind == "retrieval":
        raise Conflict(f"evaluation {eval_id!r} evaluates retrieval alone: it has no answers to review")
    return row.kind, [n for n in (row.judge or "").split(",") if n]


def draw(conn: Connection, eval_id: str, order: str = DEFAULT_ORDER) -> Draw:
    _, judges = _judges(conn, eval_id)
    rows = conn.execute(select(R.question_id, R.llm_judge_score, R.checks).where(
        R.evaluation_id == eval_id, R.state == "DONE", R.error.is_(None)).order_by(R.position)).all()
    ids = [r.question_id for r in rows]
    if order == "uniform":
        weights = np.ones(len(rows))
    else:
        weights = sampling_weights([uncertainty(r.llm_judge_score, json.loads(r.checks or "{}"), judges)
                                    for r in rows])
    keys = uniform_keys(ids, eval_id)
    ranked = draw_order(weights, keys) if ids else np.array([], dtype=np.int64)
    return Draw([ids[i] for i in ranked], weights[ranked], keys[ranked], order)


def _item(conn: Connection, eval_id: str, found: Draw, index: int, reviewed: dict) -> dict:
    question_id = found.ids[index]
    row = conn.execute(select(*SHOWN).where(R.evaluation_id == eval_id, R.question_id == question_id)).one()
    level = rel_level_of(conn.execute(select(E.options).where(E.id == eval_id)).one())
    result = result_out(row, level, reviewed.get(question_id)).model_dump(mode="json")
    return {"order": found.order, "index": index, "total": len(found.ids), "reviewed": len(reviewed),
            "previous": found.ids[index - 1] if index > 0 else None,
            "next": found.ids[index + 1] if index + 1 < len(found.ids) else None,
            "weight": float(found.weights[index]), "result": result}


class Review:
    def __init__(self, db: Database):
        self.db = db

    def next(self, eval_id: str, order: str = DEFAULT_ORDER, after: str | None = None) -> dict | None:
        """The first answer of the draw order (after `after`, when given, wrapping round) that nobody reviewed;
        None when every answer is reviewed."""
        with self.db.read() as conn:
            found = draw(conn, eval_id, order)
            reviewed = annotated(conn, eval_id)
            start = found.ids.index(after) + 1 if after in found.ids else 0
            for step in range(len(found.ids)):
                index = (start + step) % len(found.ids)
                if found.ids[index] not in reviewed:
                    return _item(conn, eval_id, found, index, reviewed)
        return None

    def item(self, eval_id: str, question_id: str, order: str = DEFAULT_ORDER) -> dict:
        """One answer in review, with its neighbours in the draw order."""
        with self.db.read() as conn:
            found = draw(conn, eval_id, order)
            if question_id not in found.ids:
                raise NotFound(f"no answered question {question_id!r} in evaluation {eval_id!r}")
            return _item(conn, eval_id, found, found.ids.index(question_id), annotated(conn, eval_id))

    def summary(self, eval_id: str) -> dict:
        """Reviewers' agreement with one another and with each judge, and each judge's calibrated mean over the
        reviewed prefix of the draw order (inverse-probability weighted)."""
        with self.db.read() as conn:
            _, judges = _judges(conn, eval_id)
            labels = {qid: a.verdict for qid, a in annotated(conn, eval_id).items()}
            own = conn.execute(select(V.question_id, V.reviewer, V.verdict).where(V.evaluation_id == eval_id)).all()
            draws = {order: draw(conn, eval_id, order) for order in ORDERS}
            judged = judge_values(conn, eval_id, judges)
        return {"reviewed": len(labels), "reviewers": reviewer_agreement(own), "judges": {
            name: judge_agreement(name, judged[name], labels, own, draws) for name in judges}}


def _prefix(ids: list[str], labels: dict) -> int:
    k = 0
    while k < len(ids) and ids[k] in labels:
        k += 1
    return k


def reviewer_agreement(own) -> dict:
    """Agreement between named reviewers: Cohen's kappa for two, Krippendorff's alpha (nominal) for more."""
    by_reviewer: dict[str, dict[str, str]] = {}
    for row in own:
        by_reviewer.setdefault(row.reviewer, {})[row.question_id] = row.verdict
    names = sorted(by_reviewer)
    entry = {"names": names, "statistic": None, "value": None, "n": 0, "reason": None}
    if len(names) < 2:
        entry["reason"] = "one reviewer so far" if names else "no named reviewer yet"
        return entry
    if len(names) == 2:
        a, b = (by_reviewer[n] for n in names)
        both = [q for q in a if q in b]
        found = cohen_kappa([a[q] for q in both], [b[q] for q in both])
    else:
        questions = sorted({q for verdicts in by_reviewer.values() for q in verdicts})
        found = krippendorff_alpha([[v[q] for v in by_reviewer.values() if q in v] for q in questions])
    entry.update(statistic=found.statistic, n=found.n, value=found.as_dict()["value"])
    if entry["value"] is None:
        entry["reason"] = ("no answer was reviewed by two of them" if found.n == 0
                           else "undefined: every verdict is the same")
    return entry


def judge_agreement(name: str, values: dict[str, float], labels: dict[str, str], own, draws: dict) -> dict:
    """Kappa of the judge against the shared verdicts and against each reviewer, and its active calibrated mean."""
    entry: dict = {"kappa": None, "n": 0, "reason": None, "by_reviewer": {}, "active": None, "active_reason": None}
    both = [q for q in labels if q in values]
    found = cohen_kappa([labels[q] for q in both], [as_verdict(values[q]) for q in both])
    entry.update(kappa=found.as_dict()["value"], n=found.n, agreement=found.as_dict().get("observed"))
    entry["reason"] = kappa_reason(name, [values[q] for q in both])
    entry["constant"] = constant_verdict(name, [values[q] for q in both])
    if entry["reason"]:
        entry["kappa"] = None
    for reviewer in sorted({row.reviewer for row in own}):
        mine = {row.question_id: row.verdict for row in own if row.reviewer == reviewer and row.question_id in values}
        if mine:
            kappa = cohen_kappa(list(mine.values()), [as_verdict(values[q]) for q in mine]).as_dict()
            constant = constant_verdict(name, [values[q] for q in mine])
            entry["by_reviewer"][reviewer] = {"kappa": None if constant is not None else kappa["value"],
                                              "n": kappa["n"], "constant": constant}
    prefixes = {order: _prefix(found_draw.ids, labels) for order, found_draw in draws.items()}
    order = max(draws, key=lambda o: (prefixes[o], o == "uncertain"))
    chosen, k = draws[order], prefixes[order]
    kept = [i for i, qid in enumerate(chosen.ids) if qid in values]
    try:
        pi = inclusion_probabilities(chosen.weights, chosen.keys, k)
        y = np.array([LABELS[labels[chosen.ids[i]]] if i < k else np.nan for i in kept])
        estimate = active_mean([values[chosen.ids[i]] for i in kept], y, pi[kept]).to_json()
        estimate.update(order=order, off_order=len(labels) - k)
        entry["active"] = estimate
    except CalibrationError as error:
        entry["active_reason"] = (f"{error} (in the {order} order's reviewed prefix: {k} of {len(labels)} "
                                  "reviewed answers)")
    return entry
