"""Evaluations side by side: ``GET /api/v1/compare?ids=A,B[,C]`` and the page ``/compare?ids=...``
(store/comparing.py): ``compare``'s statistics on their stored runs for every check, judge and retrieval metric,
then one row per paired question with each evaluation's answer, scores and sources."""

from __future__ import annotations

import math

from fastapi import APIRouter, Query, Request

from ...analysis.settings import MAX_SEED, PAIRED
from ..schemas import MAX_OFFSET
from ..store.comparing import MAX_RESAMPLES, compare_evaluations, parse_ids, settings
from . import deps
from .pages import MAX_PAGE, render

router = APIRouter()
ROWS_PAGE = 50

IDS = Query(..., max_length=2000, description="2 or 3 evaluation ids separated by commas; the first is the baseline")
TEST = Query(PAIRED.test, max_length=20, description="t, wilcoxon, permutation or bootstrap (as compare --test)")
CORRECTION = Query(PAIRED.correction, max_length=20, description="holm, bonferroni or none")


@router.get("/api/v1/compare", tags=["compare"])
def compare_api(request: Request, ids: str = IDS, changed: bool = Query(False, description="only the questions "
                "where a metric differs"), offset: int = Query(0, ge=0, le=MAX_OFFSET),
                limit: int = Query(50, ge=0, le=500),
                test: str = TEST, correction: str = CORRECTION, alpha: float = Query(PAIRED.alpha, gt=0, lt=1),
                n_resamples: int = Query(PAIRED.n_resamples, ge=1, le=MAX_RESAMPLES),
                seed: int = Query(PAIRED.seed, ge=0, le=MAX_SEED)):
    """``compare``'s statistics per level (each as ``ragretrieval compare --json`` gives it), which questions are
    paired, and a page of the paired questions with each evaluation's result."""
    how = settings(test, correction, alpha, n_resamples, seed)
    return compare_evaluations(deps.db(request), parse_ids(ids), how, changed, offset, limit)


@router.get("/compare", include_in_schema=False)
def compare_page(request: Request, ids: str = Query("", max_length=2000), other: str = Query("", max_length=100),
                 changed: bool = False,
                 page: int = Query(1, ge=1, le=MAX_PAGE), test: str = TEST,
                 correction: str = CORRECTION):
    how = settings(test, correction)
    chosen = parse_ids(f"{ids},{other}" if other else ids)  # "Compare with" on a detail page sends the other apart
    found = compare_evaluations(deps.db(request), chosen, how, changed, (page - 1) * ROWS_PAGE, ROWS_PAGE)
    pages = max(1, math.ceil(found["questions"]["total"] / ROWS_PAGE))
    if page > pages:
        page = pages
        found = compare_evaluations(deps.db(request), chosen, how, changed, (page - 1) * ROWS_PAGE, ROWS_PAGE)
    return render(request, "compare.html", compared=found, ids=",".join(chosen), changed=changed, test=test,
                  correction=correction, page=page, pages=pages, total=found["questions"]["total"])
