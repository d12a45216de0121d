"""A card shows its first three sources; the others are folded in a ``<details>`` that opens without a script (a
retrieval card of ten snippets was a screen tall)."""

from __future__ import annotations

import re

from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult

from .conftest import new_evaluation


def test_sources_beyond_the_third_are_folded(api, db_url):
    question_set = api.post("/api/v1/question-sets", {"name": "ten", "questions": [
        {"question_type": "FACTUAL", "question_text": "which?", "ground_truth": ""}]}, expect=201)
    evaluation = new_evaluation(api, question_set["id"], "http://127.0.0.1:9/x")
    sources = [{"position": i, "doc_id": f"doc-{i}.md", "content": f"snippet {i}", "cited": i == 7}
               for i in range(10)]
    db = Database(db_url)
    try:
        claims.finish(db, claims.claim(db, "w", 60), "w", ItemResult(rag_answer="an answer [7]",
                                                                     rag_answer_sources=sources))
    finally:
        db.close()
    page = api.client.get(f"/evaluations/{evaluation['id']}").text
    card = page[page.index('<details class="sources"'):]
    shown, folded = card.split('<details class="more-sources">', 1)
    assert re.findall(r"<code>(doc-\d)", shown) == ["doc-0", "doc-1", "doc-2"]
    assert "<summary>7 more sources</summary>" in folded
    assert re.findall(r"<code>(doc-\d)", folded.split("</details>", 1)[0]) == [f"doc-{i}" for i in range(3, 10)]
    assert '<span class="position">[7]</span> <code>doc-7.md</code> <span class="cited-mark">' in folded
    chinese = api.client.get(f"/evaluations/{evaluation['id']}", headers={"Accept-Language": "zh"}).text
    assert "另外 7 个来源" in chinese
