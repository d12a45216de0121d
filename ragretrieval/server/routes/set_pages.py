"""The question-set pages: the list (with a name search and bulk delete) and the editor (a new set, or an existing
one; the file import and the Generate dialog live in its script, static/question_set.js)."""

from __future__ import annotations

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
