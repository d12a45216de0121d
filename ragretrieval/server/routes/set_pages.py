"""The question-set pages: the list (with a name search and bulk delete) and the editor (a new set, or an existing
one; the file import and the Generate dialog live in its script, static/question_set.js)."""

from __future__ import annotations

import math

from fastapi import APIRouter, Query, Request

from ..corpora import find_corpora
from ..generate import default_prompt
from ..schemas import QUESTION_TYPES
from . import deps
from .pages import LIST_PAGE, MAX_PAGE, paged, render

router = APIRouter(include_in_schema=False)


@router.get("/evaluations/question-sets")
def question_set_list(request: Request, page: int = Query(1, ge=1, le=MAX_PAGE),
                      q: str | None = Query(None, max_length=255)):
    q = (q or "").strip() or None
    store = deps.question_sets(request)
    items, where = paged(lambda offset: store.list(offset, LIST_PAGE, q), page, LIST_PAGE)
    return render(request, "question_sets.html", sets=items, corpora=find_corpora(deps.settings(request).datasets),
                  q=q or "", **where)


EDITOR_PAGE = 100  # questions the editor shows at once: a set of 1,101 was one 540 KB page


def _editor(request: Request, question_set, paging: dict | None = None, numbers=()):
    """The editor; with `paging` (page, pages, matches, total, q), of one page of the set's questions, each with
    its number in the set (`numbers`), saved one question at a time (static/question_set.js)."""
    settings = deps.settings(request)
    questions = [q.model_dump(mode="json") for q in question_set.questions] if question_set else []
    for question, number in zip(questions, numbers):
        question["number"] = number
    return render(request, "question_set_edit.html", question_set=question_set, questions=questions,
                  corpora=find_corpora(settings.datasets), types=QUESTION_TYPES,
                  prompts={language: default_prompt(language) for language in ("zh", "en")},
                  max_upload=settings.max_body_bytes // 2, paging=paging)


@router.get("/evaluations/question-sets/new")
def question_set_new(request: Request):
    return _editor(request, None)


@router.get("/evaluations/question-sets/{set_id}")
def question_set_edit(request: Request, set_id: str, page: int = Query(1, ge=1, le=MAX_PAGE),
                      q: str | None = Query(None, max_length=255)):
    """A set that fits one page is edited whole (one save sends the list back); a longer one, or a search, a page
    at a time (`?page=`, `?q=`: a question's text or ground truth holds it, any case)."""
    q = (q or "").strip() or None
    store = deps.question_sets(request)
    fetch = lambda offset: store.page(set_id, offset, EDITOR_PAGE, q)  # noqa: E731
    found, numbers, matches = fetch((page - 1) * EDITOR_PAGE)
    if q is None and found.question_count <= EDITOR_PAGE:
        return _editor(request, found, numbers=numbers)
    pages = max(1, math.ceil(matches / EDITOR_PAGE))
    if page > pages:
        page = pages
        found, numbers, matches = fetch((page - 1) * EDITOR_PAGE)
    paging = {"page": page, "pages": pages, "matches": matches, "total": found.question_count, "q": q or ""}
    return _editor(request, found, paging, numbers)
