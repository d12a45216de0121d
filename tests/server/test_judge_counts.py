"""Judges on the server say how they did: the evaluation's summary holds each judge's judged,
failed and skipped counts with the first failure's reason, the page shows them as plain text, and a judge that needs
reference answers is refused when the question set has none."""

from __future__ import annotations

import re

import pytest

from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply

from .conftest import CORPUS, wait_for

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: counts in SQL


@pytest.fixture
def worker(monkeypatch, in_process_worker):
    """The worker, with the key its judges read (when it prepares an evaluation, after this)."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    return in_process_worker


def judged_evaluation(api, url: str, truths: list[str], judge: str = "score5") -> dict:
    questions = [{"question_type": "FACTUAL", "question_text": f"如何做清蒸鲈鱼？ {i}", "ground_truth": truth}
                 for i, truth in enumerate(truths)]
    question_set = api.post("/api/v1/question-sets", {"name": "s", "questions": questions}, expect=201)
    body = {"name": "judged", "dataset": CORPUS, "question_set_id": question_set["id"], "generator": "extractive",
            "retriever": "bm25", "judge": judge, "judge_model": "judge-model", "judge_base_url": url,
            "options": {"max_retries": 0}}
    return api.request("POST", "/api/v1/evaluations", json=body)


def page_text(api, evaluation) -> str:
    """The evaluation's page as a reader sees it: its text, without markup."""
    return re.sub(r"<[^>]+>", "", api.client.get(f"/evaluations/{evaluation['id']}").text)


def finished(api, eval_id):
    return wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] in
                    ("COMPLETED", "FAILED") and e, what="the evaluation to end")


def test_a_judge_whose_every_verdict_failed_says_so_in_the_summary_and_the_page(api, worker):
    with ChatServer(lambda request: Reply("I'd rather not score this.")) as server:
        created = judged_evaluation(api, server.url, ["大火蒸 8 分钟"] * 6)
        assert created.status_code == 201, created.text
        ended = finished(api, created.json()["id"])
    assert ended["status"] == "COMPLETED" and ended["average_score"] is None
    counts = ended["summary"]["judges"]["score5"]
    assert (counts["judged"], counts["failed"], counts["skipped"]) == (0, 6, 0)
    assert counts["reason"].startswith("malformed JSON after one repair request")
    assert "score5: 0 of 6 judged, 6 failed: malformed JSON after one repair request" in page_text(api, ended)


def test_a_judge_that_mostly_works_counts_its_skips_and_failures(api, worker):
    replies = iter(['{"score": 4, "reasoning": "ok"}'] * 3 + ["no"] * 2)

    with ChatServer(lambda request: Reply(next(replies, '{"score": 4}'))) as server:
        created = judged_evaluation(api, server.url, ["大火蒸 8 分钟", "大火蒸 8 分钟", "", "大火蒸 8 分钟"])
        ended = finished(api, created.json()["id"])
    counts = ended["summary"]["judges"]["score5"]
    assert counts["judged"] + counts["failed"] == 3 and counts["skipped"] == 1
    assert ended["summary"]["scores"]["none"] == 1 + counts["failed"]
    page = page_text(api, ended)
    assert f"score5: {counts['judged']} of 4 judged" in page and "1 not applicable (no reference answer" in page


@pytest.mark.parametrize("judge", ["score5", "correctness,safety", "context_sufficiency"])
def test_a_judge_needing_references_is_refused_on_a_set_without_any(api, judge):
    response = judged_evaluation(api, "http://127.0.0.1:9/v1", ["", "  "], judge)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("judge: judge ") and "needs reference answers" in response.text
    assert api.get("/api/v1/evaluations")["total"] == 0
    assert judged_evaluation(api, "http://127.0.0.1:9/v1", ["", ""], "safety").status_code == 201
