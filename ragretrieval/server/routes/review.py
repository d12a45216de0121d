"""The review mode: ``/evaluations/{id}/review`` (one answer at a time, verdicts by keyboard; static/review_mode.js)
and its API, ``/api/v1/evaluations/{id}/review/...`` (store/review.py: the order, and the calibrated mean that
stays unbiased although uncertain answers are reviewed first)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Request, Response

from ...analysis.calibration import FEW_LABELS
from ..store.review import DEFAULT_ORDER, Review
from . import deps
from .pages import render

router = APIRouter(tags=["review"])
Order = Literal["uncertain", "uniform"]
def question_id():
    """A question id parameter (a new one each time: FastAPI keeps the name on the object it is given)."""
    return Query(None, max_length=24, pattern=r"^[A-Za-z0-9_-]+$")


@router.get("/api/v1/evaluations/{eval_id}/review/next")
def review_next(request: Request, eval_id: str, order: Order = DEFAULT_ORDER, after: str | None = question_id()):
    """The next answer nobody reviewed, in the review order (`uncertain`: a draw with known probabilities that
    favours answers whose judges are unsure or disagree; `uniform`: a uniform random order), after `after` when
    given; 204 when every answer is reviewed."""
    found = Review(deps.db(request)).next(eval_id, order, after)
    return found if found is not None else Response(status_code=204)


@router.get("/api/v1/evaluations/{eval_id}/review/items/{question_id}")
def review_item(request: Request, eval_id: str, question_id: str, order: Order = DEFAULT_ORDER):
    """One answer in review (with its annotation) and its neighbours in the order."""
    return Review(deps.db(request)).item(eval_id, question_id, order)


@router.get("/api/v1/evaluations/{eval_id}/review/summary")
def review_summary(request: Request, eval_id: str):
    """Agreement between the reviewers (Cohen's kappa for two, Krippendorff's alpha for more), each judge's kappa
    against the verdicts and each reviewer, and each judge's calibrated mean over the answers reviewed in order
    (inverse-probability weighted: active statistical inference)."""
    return Review(deps.db(request)).summary(eval_id)


def _card(request: Request, eval_id: str, item: dict | None, order: str):
    return dict(item=item, order=order, eval_id=eval_id,
                readings=_readings(item["result"]) if item else [])


def _readings(result: dict) -> list[dict]:
    from types import SimpleNamespace

    from ..views import judge_reading

    return judge_reading(SimpleNamespace(llm_judge_score=result["llm_judge_score"], checks=result["checks"]))


@router.get("/evaluations/{eval_id}/review", include_in_schema=False)
def review_page(request: Request, eval_id: str, order: Order = DEFAULT_ORDER, q: str | None = question_id()):
    review = Review(deps.db(request))
    evaluation = deps.evaluations(request).get(eval_id, 0, 0)
    item = review.item(eval_id, q, order) if q else review.next(eval_id, order)
    return render(request, "review.html", evaluation=evaluation, summary=review.summary(eval_id), few=FEW_LABELS,
                  **_card(request, eval_id, item, order))


@router.get("/evaluations/{eval_id}/review/card", include_in_schema=False)
def review_card(request: Request, eval_id: str, order: Order = DEFAULT_ORDER, q: str | None = question_id(),
                after: str | None = question_id()):
    """The card alone (one answer; the next unreviewed one after `after` without `q`), for the script to put in
    place, with the summary as it is now."""
    review = Review(deps.db(request))
    item = review.item(eval_id, q, order) if q else review.next(eval_id, order, after)
    return render(request, "_review_card.html", summary=review.summary(eval_id), few=FEW_LABELS,
                  **_card(request, eval_id, item, order))
