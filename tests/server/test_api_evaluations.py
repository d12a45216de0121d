"""Evaluations through the API, on SQLite and PostgreSQL: what is checked when one is started, the list and its
paging, the detail with its summary, a page of results and the score filter, pause, resume and delete."""

from __future__ import annotations

import pytest

from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult

from .conftest import CORPUS, new_evaluation, new_set

URL = "http://127.0.0.1:9/answer"  # never asked: these tests run no worker


def answer_all(db_url: str, scores: list[float | None]) -> None:
    """Store a result for each question in order, the way a worker does (claim, then finish), with these scores."""
    db = Database(db_url)
    try:
        for score in scores:
            claim = claims.claim(db, "test-worker", stale_after=60)
            number = claim.question.position
            result = ItemResult(rag_answer=f"answer {number}", llm_judge_score=score,
                                    llm_judge_reasoning=f"why {number}", checks={"include": number % 2, "cite": 0.5},
                                    metrics={"recall@5": 1.0}, input_tokens=10, output_tokens=5,
                                    latency=0.1 * (number + 1), cost=0.001)
            assert claims.finish(db, claim, "test-worker", result) in ("RUNNING", "COMPLETED")
    finally:
        db.close()


def test_an_evaluation_starts_pending_with_one_work_item_per_question(api):
    question_set = new_set(api, 3)
    created = new_evaluation(api, question_set["id"], URL, name="first", retriever="bm25",
                             options={"context_k": 3, "max_tokens": 200})
    assert created["id"].startswith("eval_")
    expected = {"name": "first", "status": "PENDING", "progress": 0, "total_questions": 3, "completed_questions": 0,
                "average_score": None, "error": None, "dataset": CORPUS, "question_set_id": question_set["id"],
                "generator": f"http:{URL}", "base_url": None, "retriever": "bm25", "judge": None,
                "judge_model": None, "judge_base_url": None,
                "options": {"context_k": 3, "max_tokens": 200}, "run_id": None, "started_at": None,
                "finished_at": None}
    assert {k: created[k] for k in expected} == expected
    shown = api.get(f"/api/v1/evaluations/{created['id']}")
    assert shown["results"] == [] and shown["results_total"] == 0 and shown["summary"]["pending"] == 3
    assert api.get(f"/api/v1/question-sets/{question_set['id']}")["evaluations"] == 1


@pytest.mark.parametrize("change, status, message", [
    ({"dataset": "missing"}, 400, "no corpus 'missing'"),
    ({"question_set_id": "qs_missing"}, 404, "no question set 'qs_missing'"),
    ({"retriever": "nope"}, 400, "unknown retriever 'nope'; known: "),
    ({"generator": "gpt-4"}, 400, "generator: unknown generator 'gpt-4'; known: extractive, "),
    ({"generator": "openai:"}, 400, "generator: unknown generator 'openai:'"),
    ({"generator": "file:/etc/passwd"}, 400, "generator file: reads answers from a file on the server"),
    ({"judge": "score5,nosuch"}, 400, "judge: unknown judge 'nosuch'; known: chunk_relevance, "),
    ({"options": {"context_k": 0}}, 422, '"loc":["body","options","context_k"],"msg":"Input should be greater than or equal to 1"'),
    ({"options": {"frobnicate": 1}}, 422, '"loc":["body","options","frobnicate"],"msg":"Extra inputs are not permitted"'),
    ({"options": {"lemmatizer": "fst:/etc/passwd"}}, 422, "fst: reads files on the server"),
    ({"options": {"generator_options": {"header.X": "${OPENAI_API_KEY}"}}}, 422, "'header.X' is not allowed here"),
    ({"options": {"generator_options": {"request": "messages"}}}, 422, "only an http: generator takes them"),
    ({"options": {"judge_samples": 3}}, 422, "options.judge_samples, options.judge_temperature: they need a judge"),
    ({"judge": "score5", "options": {"judge_samples": 3, "judge_temperature": 0}}, 422,
     '"loc":["body","options","judge_samples"],"msg":"judge_samples above 1 needs judge_temperature above 0'),
    ({"judge": "score5", "options": {"judge_samples": 10}}, 422,
     '"loc":["body","options","judge_samples"],"msg":"Input should be less than or equal to 9"'),
    ({"options": {"chunk_size": 100, "chunk_overlap": 100}}, 422,
     '"loc":["body","options","chunk_overlap"],"msg":"chunk_overlap must be smaller than chunk_size (100); got 100"'),
    ({"retriever": "bm25", "options": {"retriever_options": {"k1": "x"}}}, 422,
     '"loc":["body","options","retriever_options","k1"],"msg":"retriever bm25: retriever_options.k1: Input should be '
     'a valid number'),
    ({"retriever": "bm25", "options": {"retriever_options": {"k9": 1}}}, 422, "unknown option (known: k1, b)"),
    ({"options": {"embed": {"api_key_env": "HOME"}}}, 422, "api_key_env names a variable of the server's environment"),
    ({"retriever": "run-file"}, 400, "retriever 'run-file' is not offered here"),
    ({"generator": "http:ftp://x"}, 422, "must be an http:// or https:// URL"),
    ({"base_url": "https://user:secret@api.example.com/v1"}, 422, "must not carry credentials"),
    ({"options": {"openai_api_key": "sk-1"}}, 422, "looks like a secret"),
    ({"api_key": "sk-1"}, 422, "Extra inputs are not permitted"),
    ({"judge": "score5; drop table"}, 422, "judge must be judge names separated by commas"),
])
def test_what_cannot_work_is_refused_before_anything_is_stored(api, change, status, message):
    question_set = new_set(api, 1)
    body = {"name": "e", "dataset": CORPUS, "question_set_id": question_set["id"], "generator": "extractive",
            **change}
    response = api.request("POST", "/api/v1/evaluations", json=body)
    assert response.status_code == status and message in response.text, response.text
    assert "secret" not in response.text.replace("looks like a secret", "") and "sk-1" not in response.text
    assert api.get("/api/v1/evaluations")["total"] == 0


def test_an_empty_set_cannot_be_evaluated(api):
    empty = api.post("/api/v1/question-sets", {"name": "empty"}, expect=201)
    response = api.request("POST", "/api/v1/evaluations", json={
        "name": "e", "dataset": CORPUS, "question_set_id": empty["id"], "generator": "extractive"})
    assert response.status_code == 400 and response.json()["detail"] == f"question set {empty['id']!r} has no questions"


def test_the_list_pages_newest_first_and_filters_by_status(api):
    question_set = new_set(api, 1)
    ids = [new_evaluation(api, question_set["id"], URL, name=f"e{i}")["id"] for i in range(5)]
    page = api.get("/api/v1/evaluations?offset=1&limit=2")
    assert (page["total"], page["offset"], page["limit"]) == (5, 1, 2)
    assert [e["id"] for e in page["items"]] == [ids[3], ids[2]]
    assert "results" not in page["items"][0]
    api.post(f"/api/v1/evaluations/{ids[0]}/pause")
    paused = api.get("/api/v1/evaluations?status=PAUSED")
    assert [e["id"] for e in paused["items"]] == [ids[0]] and paused["total"] == 1
    assert api.request("GET", "/api/v1/evaluations?status=DONE").status_code == 400
    assert api.request("GET", "/api/v1/evaluations?limit=501").status_code == 422


def test_the_detail_has_a_summary_a_page_of_results_and_a_score_filter(api, db_url):
    question_set = new_set(api, 7)
    evaluation = new_evaluation(api, question_set["id"], URL)
    answer_all(db_url, [5, 4, 4, 1, None, 2.6, 5])
    shown = api.get(f"/api/v1/evaluations/{evaluation['id']}?offset=2&limit=3")
    assert (shown["status"], shown["progress"], shown["completed_questions"]) == ("COMPLETED", 100, 7)
    assert shown["average_score"] == pytest.approx((5 + 4 + 4 + 1 + 2.6 + 5) / 6)
    assert shown["started_at"] and shown["finished_at"] >= shown["started_at"]
    assert [r["question_text"] for r in shown["results"]] == ["question 2", "question 3", "question 4"]
    assert shown["results_total"] == 7 and (shown["offset"], shown["limit"]) == (2, 3)
    first = shown["results"][0]
    assert first == {
        "question_id": question_set["questions"][2]["id"], "position": 2, "question_type": "FACTUAL",
        "question_text": "question 2", "ground_truth": "truth 2", "rag_answer": "answer 2", "rag_answer_sources": [],
        "llm_judge_score": 4.0, "llm_judge_reasoning": "why 2", "checks": {"include": 0, "cite": 0.5},
        "metrics": {"recall@5": 1.0}, "input_tokens": 10, "output_tokens": 5, "latency": pytest.approx(0.3),
        "cost": 0.001, "error": None,
        # no relevance labels: no relevant documents, no recall; not reviewed
        "relevant_documents": [], "retrieval": None, "annotation": None}
    summary = shown["summary"]
    assert summary["scores"] == {"1": 1, "2": 0, "3": 1, "4": 2, "5": 2, "none": 1}
    assert summary["checks"] == {"cite": 0.5, "include": pytest.approx(3 / 7)} and summary["metrics"] == {"recall@5": 1}
    assert (summary["finished"], summary["pending"], summary["total_tokens"]) == (7, 0, 105)
    assert summary["cost"] == pytest.approx(0.007) and summary["latency_p50"] == pytest.approx(0.4)
    assert summary["latency_p95"] == pytest.approx(0.7)
    by_score = api.get(f"/api/v1/evaluations/{evaluation['id']}?score=4,none")
    assert [r["position"] for r in by_score["results"]] == [1, 2, 4] and by_score["results_total"] == 3
    assert [r["position"] for r in api.get(f"/api/v1/evaluations/{evaluation['id']}?score=3")["results"]] == [5]
    bad = api.request("GET", f"/api/v1/evaluations/{evaluation['id']}?score=6")
    assert bad.status_code == 400 and "scores 1-5 or 'none'" in bad.json()["detail"]


def test_pause_resume_and_delete_follow_the_status(api, db_url):
    question_set = new_set(api, 3)
    eval_id = new_evaluation(api, question_set["id"], URL)["id"]
    assert api.post(f"/api/v1/evaluations/{eval_id}/pause")["status"] == "PAUSED"
    assert api.post(f"/api/v1/evaluations/{eval_id}/pause")["status"] == "PAUSED"  # again: no harm
    db = Database(db_url)
    try:
        assert claims.claim(db, "w", stale_after=60) is None  # a paused evaluation gives no work
    finally:
        db.close()
    assert api.post(f"/api/v1/evaluations/{eval_id}/resume")["status"] == "PENDING"  # nothing answered yet
    answer_all(db_url, [3])
    assert api.post(f"/api/v1/evaluations/{eval_id}/pause")["status"] == "PAUSED"
    resumed = api.post(f"/api/v1/evaluations/{eval_id}/resume")
    assert resumed["status"] == "RUNNING" and resumed["completed_questions"] == 1
    answer_all(db_url, [3, 3])
    refused = api.request("POST", f"/api/v1/evaluations/{eval_id}/pause")
    assert refused.status_code == 409
    assert refused.json()["detail"] == (f"evaluation {eval_id!r} is COMPLETED; only a PENDING or RUNNING evaluation "
                                        "can be paused")
    assert api.request("POST", f"/api/v1/evaluations/{eval_id}/resume").status_code == 409
    api.delete(f"/api/v1/evaluations/{eval_id}")
    api.get(f"/api/v1/evaluations/{eval_id}", expect=404)
    api.delete(f"/api/v1/evaluations/{eval_id}", expect=404)
    api.request("POST", "/api/v1/evaluations/eval_missing/pause", expect=404)


def test_the_summary_means_count_numbers_booleans_and_verdicts_and_leave_out_the_rest():
    from ragretrieval.server.store.summary import _means

    documents = ['{"a": 1, "b": 0.5}', '{"a": 0, "b": 1.0}',  # the usual case: the same names, numbers
                 '{"a": true, "b": {"value": 0, "reasoning": "no"}, "c": "text", "d": null}',
                 '{"b": {"value": null, "error": "failed"}, "a": NaN, "e": [1]}', None, '{"c": false}']
    assert _means(documents) == {"a": pytest.approx(2 / 3), "b": pytest.approx(1.5 / 3), "c": 0.0}


def test_a_kept_summary_is_computed_again_when_a_result_comes_in(api, db_url):
    question_set = new_set(api, 3)
    eval_id = new_evaluation(api, question_set["id"], URL)["id"]
    answer_all(db_url, [4])
    assert api.get(f"/api/v1/evaluations/{eval_id}")["summary"]["finished"] == 1
    assert api.get(f"/api/v1/evaluations/{eval_id}")["summary"]["checks"] == {"cite": 0.5, "include": 0}
    answer_all(db_url, [2])
    summary = api.get(f"/api/v1/evaluations/{eval_id}")["summary"]
    assert summary["finished"] == 2 and summary["checks"] == {"cite": 0.5, "include": 0.5}
    assert summary["scores"]["2"] == summary["scores"]["4"] == 1
