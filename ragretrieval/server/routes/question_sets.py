"""``/api/v1/question-sets``: question sets and their questions (docs/web.md has an example of each)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request, Response

from ...data.dataset import labels_fingerprint
from ...io.text_encoding import EncodingError, decode_text
from ..corpora import corpus_questions, question_fields
from ..generate import generate_questions
from ..schemas import (
    MAX_OFFSET,
    MAX_PAGE_SIZE,
    SETS_PAGE_SIZE,
    DecodedOut,
    Deleted,
    FromDatasetIn,
    GenerateIn,
    GenerateOut,
    IdsIn,
    Page,
    QuestionIn,
    QuestionOut,
    QuestionSetIn,
    QuestionSetOut,
    QuestionSetSummary,
    QuestionSetUpdate,
    QuestionsIn,
    QuestionUpdate,
)
from ..store import Invalid
from . import deps

router = APIRouter(prefix="/api/v1/question-sets", tags=["question sets"])


@router.get("", response_model=Page[QuestionSetSummary])
def list_sets(request: Request, offset: int = Query(0, ge=0, le=MAX_OFFSET),
              limit: int = Query(SETS_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE),
              q: str | None = Query(None, max_length=255, description="only the sets whose name holds this")):
    """Question sets, newest first, without their questions."""
    items, total = deps.question_sets(request).list(offset, limit, q)
    return Page(items=items, total=total, offset=offset, limit=limit)


@router.post("/delete", response_model=Deleted)
def delete_sets(request: Request, body: IdsIn):
    """Several sets at once, in one transaction: all, or none when one is unknown or used by an evaluation."""
    return Deleted(deleted=deps.question_sets(request).delete_many(body.ids))


@router.post("/decode", response_model=DecodedOut, openapi_extra={"requestBody": {
    "required": True, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
async def decode_file(request: Request, name: str = Query("the file", max_length=255)):
    """The text of a file a page imports that is not UTF-8 (a CSV saved as GBK by Excel on a Chinese Windows,
    UTF-16): its bytes as the body, its encoding detected and converted, or 400 asking for "CSV UTF-8" when the
    detection is not sure. Nothing is stored."""
    data = await request.body()
    if not data:
        raise Invalid(f"{name} is empty")
    try:
        decoded = decode_text(data, name)
    except EncodingError as error:
        raise Invalid(str(error)) from None
    return DecodedOut(text=decoded.text, encoding=decoded.encoding, converted=decoded.converted)


@router.post("", status_code=201, response_model=QuestionSetOut)
def create_set(request: Request, body: QuestionSetIn):
    """A new set with all its questions, in one transaction."""
    if body.dataset:
        deps.corpus(request, body.dataset)
    return deps.question_sets(request).create(body.name, body.description, body.questions, body.dataset)


@router.post("/generate", response_model=GenerateOut)
def generate(request: Request, body: GenerateIn):
    """Questions written by an LLM from the corpus's documents; returned, not stored."""
    return generate_questions(deps.corpus(request, body.dataset), body, deps.settings(request).api_key_env)


@router.post("/from-dataset", response_model=QuestionSetOut)
def from_dataset(request: Request, body: FromDatasetIn, response: Response):
    """The corpus's own questions (its questions.jsonl) as a question set; the same file gives the same set back."""
    corpus = deps.corpus(request, body.dataset)
    records = corpus_questions(corpus)
    source = f"dataset:{corpus.name}@{labels_fingerprint(records)}"
    sets = deps.question_sets(request)
    existing = sets.find_by_source(source)
    if existing:
        return sets.get(existing)
    response.status_code = 201
    items = [QuestionIn(**question_fields(record)) for record in records]
    return sets.create(corpus.name, f"the questions of dataset {corpus.name}", items, corpus.name, source)


@router.get("/{set_id}", response_model=QuestionSetOut)
def get_set(request: Request, set_id: str):
    return deps.question_sets(request).get(set_id)


@router.put("/{set_id}", response_model=QuestionSetOut)
def update_set(request: Request, set_id: str, body: QuestionSetUpdate):
    """New name, description or corpus; with ``questions``, the whole list (rows with an ``id`` are updated, rows
    without one added, questions left out deleted), in one transaction."""
    if body.dataset:
        deps.corpus(request, body.dataset)
    return deps.question_sets(request).update(set_id, body.name, body.description, body.dataset, body.questions)


@router.delete("/{set_id}", status_code=204)
def delete_set(request: Request, set_id: str):
    """Refused (409) while an evaluation uses the set."""
    deps.question_sets(request).delete(set_id)


@router.post("/{set_id}/questions", status_code=201)
def add_questions(request: Request, set_id: str, body: QuestionsIn) -> dict[str, list[QuestionOut]]:
    """Append questions to the set."""
    return {"questions": deps.question_sets(request).add_questions(set_id, body.questions)}


@router.put("/questions/{question_id}", response_model=QuestionOut)
def update_question(request: Request, question_id: str, body: QuestionUpdate):
    return deps.question_sets(request).update_question(question_id, **body.model_dump())


@router.delete("/questions/{question_id}", status_code=204)
def delete_question(request: Request, question_id: str):
    deps.question_sets(request).delete_question(question_id)
