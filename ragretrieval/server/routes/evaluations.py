"""``/api/v1/evaluations``: start, list, show (with a page of results), pause, resume and delete evaluations."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from ..jobs.engine import EngineError
from ..jobs.judging import check_judges_apply
from ..jobs.options import check_evaluation, check_retrieval
from ..schemas import (
    MAX_OFFSET,
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    STATUSES,
    Deleted,
    EndpointIn,
    EvaluationDetail,
    EvaluationIn,
    EvaluationOut,
    IdsIn,
    Page,
)
from ..store import Invalid
from ..store.result_filter import ResultQuery
from . import deps

router = APIRouter(prefix="/api/v1/evaluations", tags=["evaluations"])


def status_filter(status: str | None) -> str | None:
    """``?status=`` in any case (``paused``, ``Paused``); an unknown one is refused."""
    if status is None or status == "":
        return None
    if status.upper() not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)} (any case); got {status[:40]!r}")
    return status.upper()


@router.get("", response_model=Page[EvaluationOut])
def list_evaluations(request: Request, offset: int = Query(0, ge=0, le=MAX_OFFSET),
                     limit: int = Query(PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE),
                     status: str | None = Query(None, description="only evaluations with this status (any case)"),
                     q: str | None = Query(None, max_length=255, description="only those whose name holds this")):
    """Evaluations, newest first, without their results."""
    items, total = deps.evaluations(request).list(offset, limit, status_filter(status), q)
    return Page(items=items, total=total, offset=offset, limit=limit)


@router.post("/delete", response_model=Deleted)
def delete_evaluations(request: Request, body: IdsIn):
    """Several evaluations and their results at once, in one transaction: all, or none when one is unknown."""
    return Deleted(deleted=deps.evaluations(request).delete_many(body.ids))


@router.post("", status_code=201, response_model=EvaluationOut)
def create_evaluation(request: Request, body: EvaluationIn):
    """A new evaluation, PENDING, with one work item per question of the set; a worker starts on it at once. The
    generator, retriever and judges are checked against ragretrieval's registries, `options` against the engine's,
    and a judge that needs reference answers against the set (refused when no question has one)."""
    deps.corpus(request, body.dataset)
    options = body.options.model_dump(exclude_unset=True)
    try:
        if body.kind == "retrieval":
            check_retrieval(body.retriever, options, deps.settings(request).allow_models)
        else:
            check_evaluation(body.generator, body.retriever, body.judge, options, deps.settings(request).allow_models)
            if body.judge:
                check_judges_apply(body.judge, deps.question_sets(request).get(body.question_set_id).questions)
    except EngineError as error:
        raise Invalid(str(error)) from None
    return deps.evaluations(request).create(body)


def result_query(score: str | None = Query(None, description="judge scores: 5, 1,2 or none (no score)"),
                 type: str | None = Query(None, description="question types, e.g. FACTUAL,INFERENTIAL"),
                 check: str | None = Query(None, description="NAME:pass|fail|part, several separated by commas, or "
                                                             "any:fail"),
                 failed: str | None = Query(None, description="true: only questions with no answer; false: only "
                                                              "answered ones"),
                 retrieval: str | None = Query(None, description="hit or miss: a relevant document among the "
                                                                 "sources, or none"),
                 annotation: str | None = Query(None, description="correct, partly_correct, incorrect, none (not "
                                                                  "reviewed) or any"),
                 failure_class: str | None = Query(None, description="a failure class, e.g. retrieval_miss"),
                 sort: str | None = Query(None, description="position (default), score, -score, check_score, "
                                                            "-check_score, recall or -recall")) -> ResultQuery:
    """The results' filters and order from the query string (store/result_filter.py); a bad one is a 422 naming
    its parameter. An empty parameter is no filter (a page's form sends its empty fields)."""
    given = {name: value for name, value in dict(score=score, type=type, check=check, failed=failed,
                                                  retrieval=retrieval, annotation=annotation, sort=sort,
                                                  failure_class=failure_class).items()
             if value not in (None, "")}
    try:
        query = ResultQuery(**given)
    except ValidationError as error:
        raise RequestValidationError([{**e, "loc": ("query", *e["loc"])} for e in error.errors()]) from None
    query.conditions()  # a bad score list is a 400 now, not in the middle of an export's stream
    return query


@router.get("/{eval_id}", response_model=EvaluationDetail)
def get_evaluation(request: Request, eval_id: str, offset: int = Query(0, ge=0, le=MAX_OFFSET),
                   limit: int = Query(PAGE_SIZE, ge=0, le=MAX_PAGE_SIZE), query: ResultQuery = Depends(result_query)):
    """The evaluation, its summary, and `limit` of its finished results from `offset`: in question order, or as
    the filters and `sort` say (docs/web.md, "Finding the bad answers")."""
    return deps.evaluations(request).get(eval_id, offset, limit, query=query)


@router.delete("/{eval_id}", status_code=204)
def delete_evaluation(request: Request, eval_id: str):
    deps.evaluations(request).delete(eval_id)


@router.patch("/{eval_id}", response_model=EvaluationOut)
def correct_endpoint(request: Request, eval_id: str, body: EndpointIn):
    """Correct where a FAILED or PAUSED evaluation asks its model, judges or service (then resume it); 409 while it
    runs or once it is COMPLETED."""
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    return deps.evaluations(request).correct_endpoint(eval_id, changes)


@router.post("/{eval_id}/pause", response_model=EvaluationOut)
def pause(request: Request, eval_id: str):
    """Workers take no more of its questions; a question being answered is finished and stored."""
    return deps.evaluations(request).pause(eval_id)


@router.post("/{eval_id}/resume", response_model=EvaluationOut)
def resume(request: Request, eval_id: str):
    """A paused or failed evaluation goes on with the questions left."""
    return deps.evaluations(request).resume(eval_id)
