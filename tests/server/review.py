"""Results made to order for the review tests (filters, annotations, export): an evaluation whose questions carry
relevance labels and whose results, stored the way a worker stores them (claim, then finish), hold chosen scores,
checks, judges' verdicts, sources and errors."""

from __future__ import annotations

from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult

from .conftest import CORPUS

SERVICE = "http://127.0.0.1:9/answer"  # never asked: no worker runs


def labels(*doc_ids: str, grade: int = 1) -> dict:
    return {"id": "unused", "relevant": [{"doc_id": d, "grade": grade, "spans": []} for d in doc_ids]}


def source(doc_id: str, position: int, cited: bool = False) -> dict:
    return {"position": position, "doc_id": doc_id, "content": f"text of {doc_id}", "cited": cited}


# (type, labels, sources, judge score, checks, error)
CASES = [
    ("FACTUAL", labels("a.md"), [source("a.md", 0, True), source("b.md", 1)], 5.0,
     {"include": True, "cite_f1": 1.0, "checks_score": 1.0, "correctness": {"value": 1, "reasoning": "right"}}, None),
    ("FACTUAL", labels("a.md", "c.md"), [source("b.md", 0), source("c.md", 1, True)], 2.0,
     {"include": False, "checks_score": 0.0, "correctness": {"value": 1, "reasoning": "fine"}}, None),
    ("INFERENTIAL", labels("d.md"), [source("b.md", 0)], None,
     {"include": True, "checks_score": 1.0, "correctness": {"value": 0, "reasoning": "wrong"}}, None),
    ("INFERENTIAL", None, [], None, {}, "HTTP 500 from the service"),
    ("USER_DEFINED", labels("e.md"), [source("e.md", 0), source("e.md", 1), source("f.md", 2)], 4.0,
     {"include": 0.5, "checks_score": 0.5, "correctness": {"value": 0, "reasoning": "half"}}, None),
]


def reviewed_evaluation(api, db_url: str, answered: int = len(CASES), **extra) -> dict:
    """An evaluation of the CASES' questions with the first `answered` results stored; its creation answer."""
    questions = [{"question_type": kind, "question_text": f"question {i} <b>bold</b>", "ground_truth": f"truth {i}",
                  **({"source_record": record} if record else {})}
                 for i, (kind, record, *_rest) in enumerate(CASES)]
    made = api.post("/api/v1/question-sets", {"name": "review", "questions": questions}, expect=201)
    body = {"name": "to review", "dataset": CORPUS, "question_set_id": made["id"], "generator": f"http:{SERVICE}",
            "judge": "score5,correctness", "judge_model": "judge", "judge_base_url": "http://127.0.0.1:9/v1", **extra}
    created = api.post("/api/v1/evaluations", body, expect=201)
    db = Database(db_url)
    try:
        for _ in range(answered):
            claim = claims.claim(db, "review-worker", stale_after=60)
            _kind, _record, sources, score, checks, error = CASES[claim.question.position]
            result = ItemResult(
                rag_answer=None if error else f"answer {claim.question.position} =HYPERLINK(\"http://x\")",
                rag_answer_sources=sources, llm_judge_score=score, llm_judge_reasoning="because" if score else None,
                checks=checks, metrics={} if error else {"doc/recall@3": 1.0}, latency=0.5, error=error,
                input_tokens=10, output_tokens=3)
            claims.finish(db, claim, "review-worker", result)
    finally:
        db.close()
    return created
