"""The built-in engine's two translations: an evaluation's question into the answer session's `QuestionRecord`, and
the session's `AnsweredQuestion` into the result row's fields (`ItemResult`).

Questions. A question that came from a dataset or the question generator carries that record (``source_record``:
relevance labels, checks, given contexts); the session gets it with the text, ground truth and type the question
set holds now (a dataset question without a type keeps none: ``USER_DEFINED`` is only the set's placeholder for
it). It keeps the dataset's id, so the stored run pairs with ``ragretrieval answer`` runs on that dataset
in ``compare``, unless another question of the evaluation has the same one; a question typed by hand, or one whose
dataset id is not unique here, is known by its question-set id (``q_...``). Labels naming documents that are not in
the evaluation's corpus are dropped (a set made from another corpus), with a note in the stored run.

Results. ``rag_answer`` is the answer (None when the generator failed); ``rag_answer_sources`` the contexts the
generator saw, in order, each with its ``position`` (the number an answer cites) and ``cited``, and any cited
position outside them; ``checks`` the check values (``include``, ``cite_f1``, ..., the question's ``score``) and
the judges' verdicts (judging.py); ``metrics`` the retrieval metrics of the same ranking as ``doc/recall@5``,
``chunk/ndcg@10``, ...; tokens (None when the generator reports none), latency, cost and error as the run has them.
The whole `AnsweredQuestion` is kept as ``answer_record``, from which the stored run is made.
"""

from __future__ import annotations

from collections import Counter

from pydantic import ValidationError

from ...answers.report import ANSWER_LEVEL, AnsweredQuestion
from ...data.dataset import Provenance, QuestionRecord
from .contract import ItemResult, QuestionItem
from .judging import judge_fields

WEB_PROVENANCE = Provenance(generator="web")  # a question typed into a question set
UNTYPED = "USER_DEFINED"  # the type a question set gives a dataset question that has none


def _labels_in_corpus(source: dict, documents: set[str]) -> tuple[dict, bool]:
    """`source` without relevance labels or given contexts that name documents outside the corpus; whether any
    were dropped."""
    kept, dropped = dict(source), False
    for field in ("relevant", "context"):
        names = [item["doc_id"] if isinstance(item, dict) else item for item in source.get(field) or []]
        if any(name not in documents for name in names):
            kept[field], dropped = [], True
    return kept, dropped


def record_ids(questions: list[tuple[str, dict | None]]) -> dict[str, str]:
    """(question id, source record) of each question of an evaluation -> the id its record, and so its stored run,
    knows it by: the dataset's id when the question came from one and no other question has it, else its own."""
    source_ids = Counter((source or {}).get("id") for _, source in questions if source)
    found = {}
    for question_id, source in questions:
        own_id = (source or {}).get("id")
        found[question_id] = own_id if isinstance(own_id, str) and own_id and source_ids[own_id] == 1 else question_id
    return found


def question_records(items: list[QuestionItem], documents) -> tuple[dict[str, QuestionRecord], list[str]]:
    """Question id (``q_...``) -> the session's record, in question order; and notes for the stored run."""
    known = {document.id for document in documents}
    ids = record_ids([(item.question_id, item.source_record) for item in items])
    records: dict[str, QuestionRecord] = {}
    dropped = 0
    for item in items:
        source, lost = _labels_in_corpus(item.source_record or {}, known)
        dropped += lost
        record_id = ids[item.question_id]
        kind = source.get("question_type") if source and item.question_type == UNTYPED else item.question_type
        fields = {**source, "id": record_id, "text": item.question_text,
                  "ground_truth": item.ground_truth or source.get("ground_truth") or None,
                  "question_type": kind, "provenance": source.get("provenance") or WEB_PROVENANCE}
        try:
            records[item.question_id] = QuestionRecord.model_validate(fields)
        except ValidationError:  # nothing to score it by (no ground truth, labels or checks), or an odd record
            records[item.question_id] = QuestionRecord.model_construct(
                id=record_id, text=item.question_text, provenance=WEB_PROVENANCE, question_type=kind,
                ground_truth=item.ground_truth or None)
    notes = [f"{dropped} question(s) had relevance labels or contexts naming documents outside this corpus; "
             "they were dropped"] if dropped else []
    return records, notes


def sources(answered: AnsweredQuestion) -> list[dict]:
    """The contexts in the order the generator saw them, marked when cited, then cited positions beyond them."""
    cited = {citation.position for citation in answered.citations}
    found = []
    for position, context in enumerate(answered.contexts):
        source = {"position": position, "doc_id": context.doc_id, "chunk_id": context.chunk_id,
                  "title": context.title or None, "content": context.text, "score": context.score,
                  "cited": position in cited}
        found.append({key: value for key, value in source.items() if value is not None})
    found += [{"position": c.position, "cited": True} for c in answered.citations
              if c.position >= len(answered.contexts)]
    return found


def question_result(answered: AnsweredQuestion) -> ItemResult:
    score, reasoning, checks = judge_fields(answered)
    metrics = {f"{level}/{name}": value for level, values in sorted(answered.metrics.items())
               if level != ANSWER_LEVEL for name, value in values.items()}  # ItemResult drops NaN
    tokens = answered.input_tokens or answered.output_tokens
    return ItemResult(
        rag_answer=answered.answer if answered.error is None else None, rag_answer_sources=sources(answered),
        llm_judge_score=score, llm_judge_reasoning=reasoning, checks=checks, metrics=metrics,
        input_tokens=answered.input_tokens if tokens else None,
        output_tokens=answered.output_tokens if tokens else None, latency=answered.latency, cost=answered.cost,
        error=answered.error, answer_record=answered.model_dump(mode="json"))
