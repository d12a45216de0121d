"""``/api/v1/evaluations/{id}/results/{question_id}/annotation``: a reviewer's verdict on one answer (correct,
partly correct or incorrect, with a note), stored with the evaluation (store/annotations.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ..schemas import AnnotationIn, AnnotationOut
from ..store.annotations import Annotations
from . import deps

router = APIRouter(prefix="/api/v1/evaluations", tags=["annotations"])


@router.put("/{eval_id}/results/{question_id}/annotation", response_model=AnnotationOut)
def annotate(request: Request, eval_id: str, question_id: str, body: AnnotationIn):
    """Store the verdict (a new annotation, or its next version). With `version` (the one the reviewer saw; 0 for
    none), a change made meanwhile by someone else is a 409 instead of being overwritten."""
    return Annotations(deps.db(request)).put(eval_id, question_id, body)


@router.delete("/{eval_id}/results/{question_id}/annotation", status_code=204)
def take_back(request: Request, eval_id: str, question_id: str):
    """The answer is not reviewed any more."""
    Annotations(deps.db(request)).delete(eval_id, question_id)
