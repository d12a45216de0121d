"""Regression triage on a comparison: which paired questions to show and in which order, and what changed on each.

A comparison (store/comparing.py) keeps every tested metric's per-question values of every run as one column
(``columns[(level, metric)]``: runs x paired questions). From them:

- ``filter``: ``all``, ``changed`` (some tested metric differs from A: the old ``changed=true``), ``worse`` or
  ``better`` (the chosen metric is lower, or higher, in B, or in C, than in A);
- ``order``: ``questions`` (the question order) or ``regressions`` (the largest drop of the chosen metric first; with
  three evaluations the larger of B's and C's drops; questions without the metric last);
- ``transition``: only the questions whose failure classes went that way (``retrieval_miss -> correct``);
- each question's differences (B - A, and C - A) of every tested metric, and its class transition.

The chosen metric is ``metric`` (a name, or ``level/name`` for a retrieval level), by default the judge's average
score when every run has one, else the first metric of the first level."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...analysis.stats import TIE_TOLERANCE
from . import Invalid

FILTERS = ("all", "changed", "worse", "better")
ORDERS = ("questions", "regressions")
PREFERRED = ("llm_judge_score", "judge_score5", "score", "checks_score")


@dataclass(frozen=True)
class Triage:
    filter: str = "all"
    order: str = "questions"
    metric: str = ""
    transition: str = ""

    def __post_init__(self):
        if self.filter not in FILTERS:
            raise Invalid(f"filter must be one of {', '.join(FILTERS)}; got {self.filter[:40]!r}")
        if self.order not in ORDERS:
            raise Invalid(f"order must be one of {', '.join(ORDERS)}; got {self.order[:40]!r}")


def metric_key(columns: dict, metric: str) -> tuple[str, str] | None:
    """The (level, metric) `metric` names (``name`` or ``level/name``), else the default; None with no metric."""
    if not columns:
        return None
    if metric:
        level, _, name = metric.rpartition("/")
        found = [key for key in columns if key[1] == name and (not level or key[0] == level)]
        if not found:
            raise Invalid(f"metric {metric[:60]!r} is not among the compared metrics (e.g. "
                          f"{', '.join(shown_name(k) for k in list(columns)[:4])})")
        return found[0]
    for name in PREFERRED:
        for key in columns:
            if key[1] == name:
                return key
    return next(iter(columns))


def shown_name(key: tuple[str, str]) -> str:
    level, name = key
    return name if level == "answer" else f"{level}/{name}"


def _drops(column: np.ndarray) -> np.ndarray:
    """Per question, the largest drop from A among the other runs (B - A, C - A; negative is worse), NaN if none."""
    differences = column[1:] - column[0]
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(differences).all(axis=0), np.nan, np.nanmin(np.where(
            np.isnan(differences), np.inf, differences), axis=0))


def _rises(column: np.ndarray) -> np.ndarray:
    differences = column[1:] - column[0]
    return np.where(np.isnan(differences).all(axis=0), np.nan, np.nanmax(np.where(
        np.isnan(differences), -np.inf, differences), axis=0))


def chosen(stats: dict, triage: Triage) -> list[int]:
    """The indexes (into the paired questions) to show, in the order asked."""
    count = len(stats["changed"])
    key = metric_key(stats["columns"], triage.metric)
    keep = np.ones(count, dtype=bool)
    if triage.filter == "changed":
        keep = stats["changed"].copy()
    elif triage.filter in ("worse", "better") and key is not None:
        column = stats["columns"][key]
        keep = (_drops(column) < -TIE_TOLERANCE) if triage.filter == "worse" else (_rises(column) > TIE_TOLERANCE)
    if triage.transition:
        keep &= np.array([t == triage.transition for t in stats["transitions"]], dtype=bool)
    picked = np.flatnonzero(keep)
    if triage.order == "regressions" and key is not None and len(picked):
        drops = _drops(stats["columns"][key])[picked]
        picked = picked[np.lexsort((picked, np.where(np.isnan(drops), np.inf, drops)))]
    return [int(i) for i in picked]


def differences(stats: dict, index: int) -> dict[str, list[float | None]]:
    """Every tested metric's B - A (and C - A) for one paired question, by shown name (None where one lacks it)."""
    found = {}
    for key, column in stats["columns"].items():
        values = column[:, index]
        found[shown_name(key)] = [None if math.isnan(v - values[0]) else float(v - values[0]) for v in values[1:]]
    return found


def transition_counts(stats: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in stats["transitions"]:
        if t is not None:
            counts[t] = counts.get(t, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
