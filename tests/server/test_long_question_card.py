"""A question of thousands of characters starts collapsed on its card, in ordinary weight, not whole in bold."""

from __future__ import annotations

from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult

from .conftest import new_evaluation


def test_a_5000_character_question_is_collapsed(api, db_url):
    text = "Why " + "very " * 1000 + "long?"
    question_set = api.post("/api/v1/question-sets", {"name": "long", "questions": [
        {"question_type": "FACTUAL", "question_text": text, "ground_truth": ""}]}, expect=201)
    evaluation = new_evaluation(api, question_set["id"], "http://127.0.0.1:9/x")
    db = Database(db_url)
    try:
        claims.finish(db, claims.claim(db, "w", 60), "w", ItemResult(rag_answer="an answer"))
    finally:
        db.close()
    page = api.client.get(f"/evaluations/{evaluation['id']}").text
    assert '<div class="question long-question" role="heading" aria-level="3"><div class="collapsible">' in page
    assert f'<h3 class="question">{text}' not in page
