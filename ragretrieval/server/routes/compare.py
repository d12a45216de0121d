"""Evaluations side by side: ``GET /api/v1/compare?ids=A,B[,C]``, its file ``GET /api/v1/compare/export`` and the
page ``/compare?ids=...`` (store/comparing.py): ``compare``'s statistics on their stored runs for every check, judge
and retrieval metric, then one row per paired question with each evaluation's answer, scores, sources and the
differences, filtered and ordered for triage (store/triage.py)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Literal

import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response

from ...analysis.settings import MAX_SEED, PAIRED
from ..schemas import MAX_OFFSET, MAX_PAGE_SIZE, PAGE_SIZE
from ..store import compare_export
from ..store.comparing import MAX_RESAMPLES, compare_evaluations, computed, parse_ids, settings
from ..store.triage import Triage, chosen
from . import deps
from .export import attachment
from .pages import MAX_PAGE, render

router = APIRouter()
ROWS_PAGE = 50
MOVED = 0.0000001  # a difference smaller than this is float noise, not a change

IDS = Query(..., max_length=2000, description="2 or 3 evaluation ids separated by commas; the first is the baseline")
TEST = Query(PAIRED.test, max_length=20, description="t, wilcoxon, permutation or bootstrap (as compare --test)")
CORRECTION = Query(PAIRED.correction, max_length=20, description="holm, bonferroni or none")
FILTER = Query("", max_length=20, description="all, changed (a tested metric differs), worse or better (the chosen "
               "metric is lower, or higher, than in A)")
ORDER = Query(Triage.order, max_length=20, description="questions (their order) or regressions (largest drop of the "
              "chosen metric first)")
METRIC = Query("", max_length=200, description="the metric that orders and filters (name, or level/name for a "
               "retrieval level); default: the judge's average score, else the first metric")
TRANSITION = Query("", max_length=200, description="only questions whose failure classes went this way, e.g. "
                   "'retrieval_miss -> correct'")


def _plain(value):
    """What `json.dumps` cannot write itself: numpy's scalars, else what FastAPI makes of it."""
    return value.item() if isinstance(value, np.generic) else jsonable_encoder(value)


def _json(found: dict) -> Response:
    """The comparison written at once: the JSON FastAPI would write, without its walk over every value first (a
    page of 50 paired questions with their answers and sources is ~300 KB: a third of a first view's time)."""
    body = json.dumps(found, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_plain)
    return Response(body.encode("utf-8"), media_type="application/json")


def _moved(items: list[dict]) -> dict[str, list[tuple[str, int, float]]]:
    """Each shown question's metrics that moved: (name, 1 for B or 2 for C, the difference), found here rather than
    in the template (64 metrics x 50 questions is slow in Jinja)."""
    return {item["id"]: [(name, other, d) for name, each in item["differences"].items()
                         for other, d in enumerate(each, start=1) if d is not None and abs(d) > MOVED]
            for item in items}


def _triage(filter: str, changed: bool, order: str, metric: str, transition: str) -> Triage:
    return Triage(filter=filter or ("changed" if changed else "all"), order=order, metric=metric,
                  transition=transition)


@router.get("/api/v1/compare", tags=["compare"])
def compare_api(request: Request, ids: str = IDS, changed: bool = Query(False, description="the same as "
                "filter=changed"), filter: str = FILTER, order: str = ORDER, metric: str = METRIC,
                transition: str = TRANSITION, offset: int = Query(0, ge=0, le=MAX_OFFSET),
                limit: int = Query(PAGE_SIZE, ge=0, le=MAX_PAGE_SIZE),
                test: str = TEST, correction: str = CORRECTION, alpha: float = Query(PAIRED.alpha, gt=0, lt=1),
                n_resamples: int = Query(PAIRED.n_resamples, ge=1, le=MAX_RESAMPLES),
                seed: int = Query(PAIRED.seed, ge=0, le=MAX_SEED)):
    """``compare``'s statistics per level (each as ``ragretrieval compare --json`` gives it), which questions are
    paired, and a page of the paired questions with each evaluation's result, the differences of every tested metric
    (B - A, and C - A) and the failure-class transition."""
    how = settings(test, correction, alpha, n_resamples, seed)
    return _json(compare_evaluations(deps.db(request), parse_ids(ids), how, False, offset, limit,
                                     _triage(filter, changed, order, metric, transition)))


@router.get("/api/v1/compare/export", tags=["compare"])
def compare_export_api(request: Request, ids: str = IDS, format: Literal["csv", "json"] = Query(
        "csv", description="csv (a spreadsheet) or json"), test: str = TEST, correction: str = CORRECTION):
    """One row per paired question and tested metric: each evaluation's value, B - A (and C - A), and each one's
    failure class; text cells neutralised against spreadsheet formulas."""
    chosen_ids = parse_ids(ids)
    body = compare_export.render(deps.db(request), chosen_ids, settings(test, correction), format)
    return Response(body, media_type=compare_export.FORMATS[format],
                    headers={"Content-Disposition": attachment("compare-" + "-".join(i[:8] for i in chosen_ids),
                                                               format)})


@router.get("/compare", include_in_schema=False)
def compare_page(request: Request, ids: str = Query("", max_length=2000), other: str = Query("", max_length=100),
                 changed: bool = False, filter: str = FILTER, order: str = ORDER, metric: str = METRIC,
                 transition: str = TRANSITION, q: str = Query("", max_length=200),
                 page: int = Query(1, ge=1, le=MAX_PAGE), test: str = TEST,
                 correction: str = CORRECTION):
    how = settings(test, correction)
    triage = _triage(filter, changed, order, metric, transition)
    chosen_ids = parse_ids(f"{ids},{other}" if other else ids)  # "Compare with" on a detail page sends the other apart
    db = deps.db(request)
    if q:  # a permalink (#q=ID, sent by the page's script as ?q=ID): the page that holds that question
        _, _, common, _, stats = computed(db, chosen_ids, how)
        order_ids = [common[i] for i in chosen(stats, triage)]
        if q not in order_ids and q in common:  # filtered out: shown among all the questions instead
            triage = replace(triage, filter="all", transition="")
            order_ids = [common[i] for i in chosen(stats, triage)]
        if q in order_ids:
            page = order_ids.index(q) // ROWS_PAGE + 1
    found = compare_evaluations(db, chosen_ids, how, False, (page - 1) * ROWS_PAGE, ROWS_PAGE, triage)
    pages = max(1, math.ceil(found["questions"]["total"] / ROWS_PAGE))
    if page > pages:
        page = pages
        found = compare_evaluations(db, chosen_ids, how, False, (page - 1) * ROWS_PAGE, ROWS_PAGE, triage)
    return render(request, "compare.html", compared=found, ids=",".join(chosen_ids), changed=triage.filter == "changed",
                  triage=found["triage"], test=test, correction=correction, page=page, pages=pages,
                  total=found["questions"]["total"], moved_of=_moved(found["questions"]["items"]))
