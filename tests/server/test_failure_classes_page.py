"""Failure classes in the web app: counted inside the database from each result's stored record (SQLite and
PostgreSQL), given by the API's summary and shown on the detail page."""

from __future__ import annotations

import pytest

from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult

from .conftest import new_evaluation, new_set

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: JSON fields read in SQL


def test_the_summary_counts_each_class(api, db_url):
    evaluation = new_evaluation(api, new_set(api, 4)["id"], "http://127.0.0.1:9/x")
    db = Database(db_url)
    try:
        for kind in ("retrieval_miss", "correct", "retrieval_miss", None):
            claim = claims.claim(db, "w", 60)
            record = {"id": "q", "text": "?", **({"failure_class": kind} if kind else {})}
            claims.finish(db, claim, "w", ItemResult(rag_answer="an answer", answer_record=record))
    finally:
        db.close()
    found = api.client.get(f"/api/v1/evaluations/{evaluation['id']}").json()
    assert found["summary"]["failure_classes"] == {"retrieval_miss": 2, "correct": 1}
    page = api.client.get(f"/evaluations/{evaluation['id']}").text
    assert '<dd class="failure-classes"><code>retrieval_miss</code> 2 · <code>correct</code> 1</dd>' in page
