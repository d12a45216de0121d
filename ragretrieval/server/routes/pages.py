"""The evaluation pages, rendered on the server (templates/, every value escaped by Jinja2, every message in the
request's language: i18n.py) and brought to life by the small scripts in static/: the list, the new-evaluation
form, and an evaluation's detail with its live part (``/evaluations/{id}/live``: the summary of one snapshot, which
the detail page's script fetches again while the evaluation is not over)."""

from __future__ import annotations

import math

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse

from ..corpora import find_corpora
from ..jobs.options import web_retrievers
from ..schemas import MAX_OFFSET, STATUSES
from ..store import NotFound
from ..store.result_filter import ResultQuery
from ..views import (
    again_settings,
    annotation_line,
    card_checks,
    filter_checks,
    filter_query,
    form_defaults,
    judge_choices,
    judge_list,
    judge_reading,
    judges_line,
    metric_grids,
    summary_means,
)
from . import deps
from .evaluations import result_query

router = APIRouter(include_in_schema=False)
LIST_PAGE, RESULTS_PAGE = 50, 20
ACTIVE = ("PENDING", "RUNNING", "PAUSED")  # the live part is fetched again while the evaluation is one of these
MAX_PAGE = MAX_OFFSET // LIST_PAGE  # so that (page - 1) x page size stays a valid offset


def render(request: Request, name: str, **context):
    settings = deps.settings(request)
    context.update(csrf=request.state.csrf, logged_in=bool(settings.token))
    return request.app.state.templates.TemplateResponse(request, name, context)


def paged(fetch, page: int, size: int):
    """`fetch(offset) -> (items, total)` for page `page` (1-based), or for the last page when `page` is past it."""
    items, total = fetch((page - 1) * size)
    pages = max(1, math.ceil(total / size))
    if page > pages:
        page = pages
        items, total = fetch((page - 1) * size)
    return items, {"page": page, "pages": pages, "total": total}


@router.get("/")
@router.get("/evaluations")
def home():
    return RedirectResponse("/evaluations/list", status_code=303)


@router.get("/evaluations/list")
def evaluation_list(request: Request, page: int = Query(1, ge=1, le=MAX_PAGE), status: str | None = None,
                    q: str | None = Query(None, max_length=255)):
    status = status.upper() if status and status.upper() in STATUSES else None  # ?status=paused works too
    q = (q or "").strip() or None
    store = deps.evaluations(request)
    items, where = paged(lambda offset: store.list(offset, LIST_PAGE, status, q), page, LIST_PAGE)
    set_ids = sorted({e.question_set_id for e in items})
    names = deps.question_sets(request).names(set_ids)
    return render(request, "evaluations_list.html", evaluations=items, status=status, statuses=STATUSES, q=q or "",
                  set_names=names, pairing=deps.question_sets(request).pairing_keys(set_ids), **where)


@router.get("/evaluations/new")
def evaluation_new(request: Request, question_set: str | None = None, again: str | None = None):
    sets_store = deps.question_sets(request)
    sets, _ = sets_store.list(0, 500)
    corpora = find_corpora(deps.settings(request).datasets)
    defaults = form_defaults(deps.settings(request).allow_models)
    copied = None
    if again:
        evaluation = deps.evaluations(request).get(again, limit=0)
        copied = again_settings(evaluation, defaults)
        question_set = evaluation.question_set_id
    chosen = next((s for s in sets if s.id == question_set), sets[0] if sets else None)
    names = {c.name for c in corpora}
    if copied:
        corpus = evaluation.dataset
    else:
        corpus = chosen.dataset if chosen and chosen.dataset in names else (corpora[0].name if corpora else None)
    return render(request, "evaluation_new.html", corpora=corpora, sets=sets, chosen_set=chosen.id if chosen else None,
                  chosen_corpus=corpus, without_reference=sets_store.without_reference([s.id for s in sets]),
                  retrievers=web_retrievers(), judges=judge_choices(), defaults=defaults, again=copied)


def _detail_context(request: Request, evaluation, query: ResultQuery) -> dict:
    """What the live part of the detail page shows, all from one read of the evaluation (one snapshot)."""
    summary = evaluation.summary
    grids, other_metrics = metric_grids(summary["metrics"])
    set_name, set_corpus = deps.question_sets(request).names([evaluation.question_set_id]).get(
        evaluation.question_set_id, (None, None))
    means = summary_means(summary["checks"], evaluation.judge)
    filters = query.model_dump(exclude_defaults=True)
    return dict(evaluation=evaluation, grids=grids, other_metrics=other_metrics, means=means,
                judge_rows=judges_line(summary), judges=judge_list(evaluation.judge), set_name=set_name,
                set_corpus=set_corpus, live=evaluation.status in ACTIVE, score=query.score or "",
                reviewed=annotation_line(summary), filters=filters, check_names=filter_checks(means),
                keep=filter_query({k: str(v).lower() if isinstance(v, bool) else v for k, v in filters.items()},
                                  ("page", "score")))


@router.get("/evaluations/{eval_id}")
def evaluation_detail(request: Request, eval_id: str, page: int = Query(1, ge=1, le=MAX_PAGE),
                      query: ResultQuery = Depends(result_query), q: str = Query("", max_length=200)):
    store = deps.evaluations(request)
    if q and query == ResultQuery():  # a card's permalink (#q=ID, sent by permalink.js as ?q=ID): its page
        page = store.page_of(eval_id, q, RESULTS_PAGE) or page

    def fetch(offset):
        found = store.get(eval_id, offset, RESULTS_PAGE, query=query)
        return found, found.results_total

    evaluation, where = paged(fetch, page, RESULTS_PAGE)
    pairable = deps.question_sets(request).pairable_sets(evaluation.question_set_id)
    others = store.comparable(eval_id, evaluation.question_set_id, pairable=pairable)
    cards = [(result, card_checks(result.checks), judge_reading(result)) for result in evaluation.results]
    context = _detail_context(request, evaluation, query)
    filters = {k: str(v).lower() if isinstance(v, bool) else v for k, v in context["filters"].items()}
    classes = store.failure_classes_of(eval_id, [result.question_id for result in evaluation.results])
    return render(request, "evaluation_detail.html", cards=cards, types=store.question_types(eval_id), classes=classes,
                  others=others, query=filter_query(filters),
                  **context, **where)


@router.get("/evaluations/{eval_id}/live")
def evaluation_live(request: Request, eval_id: str, query: ResultQuery = Depends(result_query)):
    """The detail page's live part alone (its summary, the score filter), for its script to put in place."""
    try:
        evaluation = deps.evaluations(request).get(eval_id, 0, 0)
    except NotFound:
        return render(request, "_gone.html")
    return render(request, "_live.html", **_detail_context(request, evaluation, query))
