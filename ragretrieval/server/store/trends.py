"""Trends over a question set: each headline metric across the set's completed evaluations in time order (one point
per evaluation), with a marker where the paired test of ``compare`` found the change from the evaluation before
significant, and quality against cost and against answer latency with the Pareto front marked.

- **Headline metrics**: the average judge score (``score5``), the check score, document-level recall and MRR at the
  largest cutoff all the evaluations share, the mean answer latency (seconds) and the cost (the evaluation's total);
  a metric no evaluation has is left out.
- **Markers**: for each evaluation after the first, `comparing.compare_evaluations` of it against the one before
  (``compare``'s defaults: paired t-test, Holm over the level's metrics, its `alpha`), on the questions both
  answered; a metric whose corrected p-value is under that level is marked, up or down. Latency and cost are not
  tested (no stored per-question value in the run's metrics), and pairs that cannot be compared (no stored run, no
  question in common) are left unmarked with the reason kept.
- **Pareto front**: an evaluation no other one beats on both quality (higher better) and cost or latency (lower
  better); quality is the first of judge score, check score, recall that every evaluation of the chart has.
"""

from __future__ import annotations

from sqlalchemy import select

from ...errors import RagretrievalError
from ...runs.schema import evaluations
from ..db import Database
from ..views import CHECK_SCORE, headline
from .comparing import compare_evaluations, settings
from .summary import summaries

E = evaluations.c
HIGHER_BETTER = {"latency": False, "cost": False}


def _series(summary: dict) -> dict[str, float | None]:
    found = {"judge_score": summary.get("average_score"), "check_score": summary["checks"].get(CHECK_SCORE)}
    for name, value in headline(summary.get("metrics") or {}, ("recall", "mrr")):
        found[name] = value
    found["latency"] = summary.get("latency_mean")
    found["cost"] = summary.get("cost") if summary.get("cost") else None
    return found


def _compared_name(metric: str) -> tuple[str, str] | None:
    """(level, name) of a chart's metric in `compare`'s tables."""
    if metric == "judge_score":
        return "answer", "average_score"  # compare's name for the runs' mean score5
    if metric == "check_score":
        return "answer", CHECK_SCORE
    if metric.startswith("doc/"):
        return "doc", metric[len("doc/"):]
    return None


def pareto_front(points: list[tuple[float, float]]) -> set[int]:
    """Indices of the points (quality, cost) that no other point beats: quality as high or higher and cost as low or
    lower, one of them strictly."""
    front = set()
    for i, (q, c) in enumerate(points):
        if not any((q2 >= q and c2 <= c) and (q2 > q or c2 < c) for j, (q2, c2) in enumerate(points) if j != i):
            front.add(i)
    return front


def set_trends(db: Database, set_id: str) -> dict:
    with db.read() as conn:
        rows = conn.execute(select(evaluations).where(E.question_set_id == set_id, E.status == "COMPLETED")
                            .order_by(E.gmt_created, E.id)).all()
        points = [{"id": row.id, "name": row.name, "created": row.gmt_created, "kind": row.kind,
                   "values": _series(summaries.get(conn, row))} for row in rows]
    metrics = [m for m in ("judge_score", "check_score") if any(p["values"].get(m) is not None for p in points)]
    retrieval = {m for p in points for m in p["values"] if m.startswith("doc/")}
    metrics += sorted(retrieval, key=lambda m: ("mrr" in m, m))
    metrics += [m for m in ("latency", "cost") if any(p["values"].get(m) is not None for p in points)]
    markers, notes = _markers(db, points, metrics)
    return {"points": points, "metrics": metrics, "markers": markers, "notes": notes,
            "scatters": _scatters(points, metrics)}


def _markers(db: Database, points: list[dict], metrics: list[str]) -> tuple[dict, list[str]]:
    """metric -> {evaluation id: {"direction": "up"|"down", "p": p corrected}} for significant changes."""
    markers: dict[str, dict] = {m: {} for m in metrics}
    notes = []
    how = settings()
    for before, after in zip(points, points[1:]):
        try:
            compared = compare_evaluations(db, [before["id"], after["id"]], how, limit=0)
        except RagretrievalError as error:  # no stored run, no question in common, labels that clash
            notes.append(f"{before['name']} → {after['name']}: {error}")
            continue
        for metric in metrics:
            where = _compared_name(metric)
            row = compared["levels"].get(where[0], {}).get("metrics", {}).get(where[1]) if where else None
            if row and row.get("significant"):
                markers[metric][after["id"]] = {"direction": "up" if (row["diff"] or 0) > 0 else "down",
                                                "p": row["p_corrected"]}
    return markers, notes


def _scatters(points: list[dict], metrics: list[str]) -> list[dict]:
    quality = next((m for m in metrics if m not in HIGHER_BETTER
                    and all(p["values"].get(m) is not None for p in points)), None)
    found = []
    for axis in ("cost", "latency"):
        if quality is None or axis not in metrics:
            continue
        shown = [p for p in points if p["values"].get(axis) is not None]
        front = pareto_front([(p["values"][quality], p["values"][axis]) for p in shown])
        found.append({"x": axis, "y": quality, "points": [
            {"id": p["id"], "name": p["name"], "x": p["values"][axis], "y": p["values"][quality],
             "front": i in front} for i, p in enumerate(shown)]})
    return found
