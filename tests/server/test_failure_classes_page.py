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
    assert '<dd class="failure-classes"><a href="/evaluations/' in page and 'data-class="correct"' in page
    assert '<code>retrieval_miss</code> 2</a>' in page and '<code>correct</code> 1</a>' in page
    # the legend says each class's meaning and why the Retrieval: miss filter may count otherwise
    assert 'id="class-legend"' in page and "no relevant context was shown to it" in page
    assert "so the two counts may differ" in page
    # each card names its class, and the class filters the cards (and the API's results)
    link = f'class="failure-class" href="/evaluations/{evaluation["id"]}?failure_class=retrieval_miss"'
    assert page.count(link) == 2
    only = api.client.get(f"/api/v1/evaluations/{evaluation['id']}?failure_class=retrieval_miss").json()
    assert only["results_total"] == 2
    filtered = api.client.get(f"/evaluations/{evaluation['id']}?failure_class=correct").text
    assert filtered.count('class="failure-class" href=') == 1
    refused = api.client.get(f"/api/v1/evaluations/{evaluation['id']}?failure_class=nope")
    assert refused.status_code == 400 and "failure_class must be one of" in refused.text
    zh = api.client.get(f"/evaluations/{evaluation['id']}", headers={"Accept-Language": "zh-CN"}).text
    assert "<code>检索未命中</code> 2" in zh and "各类别的含义" in zh
