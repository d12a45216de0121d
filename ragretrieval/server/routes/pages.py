"""The pages, rendered on the server (templates/, every value escaped by Jinja2) and brought to life by the small
scripts in static/: the evaluation list, the new-evaluation form, an evaluation's detail, and the question sets."""

from __future__ import annotations

import math

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse

from ..corpora import find_corpora
from ..generate import default_prompt
from ..jobs.judging import available_judges
from ..jobs.options import DEFAULT_RETRIEVER, web_retrievers
from ..schemas import QUESTION_TYPES, STATUSES
from . import deps

router = APIRouter(include_in_schema=False)
LIST_PAGE, RESULTS_PAGE = 50, 20


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
def evaluation_list(request: Request, page: int = Query(1, ge=1), status: str | None = None):
    status = status if status in STATUSES else None
    store = deps.evaluations(request)
    items, where = paged(lambda offset: store.list(offset, LIST_PAGE, status), page, LIST_PAGE)
    return render(request, "evaluations_list.html", evaluations=items, status=status, statuses=STATUSES, **where)


@router.get("/evaluations/new")
def evaluation_new(request: Request, question_set: str | None = None):
    sets, _ = deps.question_sets(request).list(0, 500)
    return render(request, "evaluation_new.html", corpora=find_corpora(deps.settings(request).datasets),
                  sets=sets, chosen_set=question_set, retrievers=web_retrievers(),
                  judges=available_judges(), default_retriever=DEFAULT_RETRIEVER)


@router.get("/evaluations/question-sets")
def question_set_list(request: Request, page: int = Query(1, ge=1)):
    store = deps.question_sets(request)
    items, where = paged(lambda offset: store.list(offset, LIST_PAGE), page, LIST_PAGE)
    return render(request, "question_sets.html", sets=items, corpora=find_corpora(deps.settings(request).datasets),
                  **where)


def _editor(request: Request, question_set):
    settings = deps.settings(request)
    questions = [q.model_dump(mode="json") for q in question_set.questions] if question_set else []
    return render(request, "question_set_edit.html", question_set=question_set, questions=questions,
                  corpora=find_corpora(settings.datasets), types=QUESTION_TYPES,
                  prompts={language: default_prompt(language) for language in ("zh", "en")},
                  max_upload=settings.max_body_bytes // 2)


@router.get("/evaluations/question-sets/new")
def question_set_new(request: Request):
    return _editor(request, None)


@router.get("/evaluations/question-sets/{set_id}")
def question_set_edit(request: Request, set_id: str):
    return _editor(request, deps.question_sets(request).get(set_id))


def metric_grids(metrics: dict[str, float]) -> tuple[dict, dict]:
    """Retrieval means named ``level/family@k`` as one grid per level (families by cutoffs), and any others."""
    grids: dict[str, dict] = {}
    others = {}
    for name, value in metrics.items():
        level, _, rest = name.partition("/")
        family, _, k = rest.partition("@")
        if not (level and family and k.isdigit()):
            others[name] = value
            continue
        grid = grids.setdefault(level, {"ks": set(), "rows": {}})
        grid["ks"].add(int(k))
        grid["rows"].setdefault(family, {})[int(k)] = value
    for grid in grids.values():
        grid["ks"] = sorted(grid["ks"])
    order = {"doc": 0, "chunk": 1}  # documents first, as `eval` prints them
    return dict(sorted(grids.items(), key=lambda item: (order.get(item[0], 2), item[0]))), others


@router.get("/evaluations/{eval_id}")
def evaluation_detail(request: Request, eval_id: str, page: int = Query(1, ge=1), score: str | None = None):
    store = deps.evaluations(request)

    def fetch(offset):
        found = store.get(eval_id, offset, RESULTS_PAGE, score)
        return found, found.results_total

    evaluation, where = paged(fetch, page, RESULTS_PAGE)
    grids, other_metrics = metric_grids(evaluation.summary["metrics"])
    return render(request, "evaluation_detail.html", evaluation=evaluation, score=score or "", grids=grids,
                  other_metrics=other_metrics, **where)
