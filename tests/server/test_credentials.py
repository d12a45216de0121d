"""Credentials in the URLs a web client gives: refused when the evaluation is created, without
the refusal repeating them; and an evaluation stored by an older version with a token in its URL shows it on no page
and in no API answer."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from ragretrieval.runs.schema import evaluations
from ragretrieval.server.db import Database

from .conftest import CORPUS, new_evaluation, new_set

TOKEN = "sk-PLANTED-web-4b3a2c"


@pytest.mark.parametrize("field, value, where", [
    ("generator", f"http:https://rag.example.org/ask?token={TOKEN}", "query parameter 'token'"),
    ("generator", f"http:https://rag.example.org/ask?collection=a&api_key={TOKEN}", "query parameter 'api_key'"),
    ("generator", f"http:https://rag.example.org/ask?q={TOKEN}", "query parameter 'q'"),  # a key's shape
    ("generator", f"http:https://bob:{TOKEN}@rag.example.org/ask", "user info"),
    ("base_url", f"https://api.example.org/v1?key={TOKEN}", "query parameter 'key'"),
    ("judge_base_url", f"https://api.example.org/v1?sig={TOKEN}", "query parameter 'sig'"),
])
def test_a_url_with_a_credential_is_refused_without_repeating_it(api, field, value, where):
    question_set = new_set(api, 1)
    body = {"name": "e", "dataset": CORPUS, "question_set_id": question_set["id"], "generator": "openai:m",
            field: value}
    response = api.request("POST", "/api/v1/evaluations", json=body)
    assert response.status_code == 422 and f"must not carry credentials ({where})" in response.text
    assert TOKEN not in response.text
    assert api.get("/api/v1/evaluations")["total"] == 0


def test_a_url_without_credentials_is_kept_as_given(api):
    question_set = new_set(api, 1)
    created = new_evaluation(api, question_set["id"], "https://rag.example.org/ask?collection=recipes&max_tokens=5")
    assert created["generator"] == "http:https://rag.example.org/ask?collection=recipes&max_tokens=5"


def test_a_token_stored_by_an_older_version_is_shown_nowhere(api, db_url):
    question_set = new_set(api, 1)
    eval_id = new_evaluation(api, question_set["id"], "https://rag.example.org/ask")["id"]
    db = Database(db_url)
    try:
        with db.write() as conn:  # as version 0.2.0 stored it
            conn.execute(update(evaluations).where(evaluations.c.id == eval_id).values(
                generator=f"http:https://rag.example.org/ask?token={TOKEN}",
                error=f"question 1: POST https://rag.example.org/ask?token={TOKEN}: HTTP 500"))
    finally:
        db.close()
    shown = [api.client.get(path).text for path in ("/evaluations/list", f"/evaluations/{eval_id}",
                                                     f"/api/v1/evaluations/{eval_id}", "/api/v1/evaluations")]
    assert all(TOKEN not in text for text in shown)
    assert "ask?token=***" in shown[0] and "ask?token=***" in shown[2]
