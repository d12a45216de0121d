"""Export: ``GET /api/v1/evaluations/{id}/export?format=csv|json|jsonl`` streams every finished
result (the filters apply) with its annotation; the JSON Lines are agent-evaluation records ragretrieval reads back;
the CSV opens in a spreadsheet without running a formula; hostile requests are refused."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ragretrieval.data.importers.agent_jsonl import AgentRecord
from ragretrieval.data.importers.aperag import restore

from .review import reviewed_evaluation


def export(api, eval_id: str, query: str):
    response = api.request("GET", f"/api/v1/evaluations/{eval_id}/export?{query}")
    assert response.status_code == 200, response.text
    return response


def annotate_first(api, eval_id: str) -> dict:
    first = api.get(f"/api/v1/evaluations/{eval_id}")["results"][0]
    api.put(f"/api/v1/evaluations/{eval_id}/results/{first['question_id']}/annotation",
            {"verdict": "partly_correct", "note": "=1+1 and <b>more</b>", "version": 0})
    return first


def test_json_is_the_apis_results_with_the_summary(api, db_url):
    created = reviewed_evaluation(api, db_url)
    annotate_first(api, created["id"])
    response = export(api, created["id"], "format=json")
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-disposition"] == ('attachment; filename="to_review.json"; '
                                                       "filename*=UTF-8''to%20review.json")
    found = response.json()
    shown = api.get(f"/api/v1/evaluations/{created['id']}?limit=500")
    assert found["results"] == shown["results"]
    assert found["evaluation"]["id"] == created["id"] and found["summary"]["annotations"]["partly_correct"] == 1
    filtered = export(api, created["id"], "format=json&check=any:fail&sort=-score").json()
    assert [r["position"] for r in filtered["results"]] == [4, 1, 2]


def test_jsonl_records_are_agent_evaluation_records(api, db_url):
    created = reviewed_evaluation(api, db_url)
    annotate_first(api, created["id"])
    lines = export(api, created["id"], "format=jsonl").text.splitlines()
    assert len(lines) == 5
    records = [json.loads(line) for line in lines]
    for record in records:
        AgentRecord.model_validate(record)  # the shape ragretrieval (and agent evaluation tools) read
    first, second, _, failed, _ = records
    assert first["request"] == "question 0 <b>bold</b>" and first["expected_response"] == "truth 0"
    assert first["response"].startswith("answer 0")
    assert first["retrieved_context"] == [{"doc_uri": "a.md", "content": "text of a.md"},
                                          {"doc_uri": "b.md", "content": "text of b.md"}]
    assert first["expected_retrieved_context"] == [{"doc_uri": "a.md"}]
    assert first["metrics"]["llm_judge_score"] == 5.0 and first["metrics"]["correctness"] == 1
    assert first["metrics"]["annotation"] == 0.5 and first["annotation"]["note"] == "=1+1 and <b>more</b>"
    assert first["agent/input_token_count"] == 10 and first["agent/latency_seconds"] == 0.5
    assert second["expected_retrieved_context"] == [{"doc_uri": "a.md"}, {"doc_uri": "c.md"}]
    assert failed["response"] is None and failed["error"] == "HTTP 500 from the service"


def test_csv_opens_in_a_spreadsheet_and_runs_no_formula(api, db_url):
    created = reviewed_evaluation(api, db_url)
    annotate_first(api, created["id"])
    response = export(api, created["id"], "format=csv")
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    data = response.content
    assert data.startswith("\ufeff".encode()) and b"\r\n" in data
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    header, first = rows[0], dict(zip(rows[0], rows[1]))
    assert len(rows) == 6 and header[:4] == ["position", "question_id", "question_type", "question_text"]
    assert {"include", "correctness", "doc/recall@3"} <= set(header)
    assert first["answer"].startswith("answer 0 =HYPERLINK")  # inside the text: not a formula
    assert first["annotation_note"] == "'=1+1 and <b>more</b>"  # a leading = is neutralised
    assert restore(first["annotation_note"]) == "=1+1 and <b>more</b>"
    assert (first["judge_score"], first["recall"], first["mrr"], first["correctness"]) == ("5.0", "1.0", "1.0", "1")
    assert first["annotation"] == "partly_correct" and first["relevant_documents"] == "a.md"
    assert first["sources"] == "a.md; b.md" and first["cited"] == "a.md"
    second = dict(zip(header, rows[2]))
    assert second["missing_documents"] == "a.md" and second["include"] == "0"
    live = [cell for row in rows[1:] for cell in row if cell[:1] in ("=", "+", "@", "\t", "\r")
            or (cell[:1] == "-" and not cell[1:2].isdigit())]
    assert live == []


def test_a_large_evaluation_is_streamed_in_pieces(api, db_url):
    from ragretrieval.server.store import export as exporting

    created = reviewed_evaluation(api, db_url)
    with api.client.stream("GET", f"/api/v1/evaluations/{created['id']}/export?format=jsonl") as response:
        pieces = list(response.iter_raw())
    assert b"".join(pieces).count(b"\n") == 5
    assert exporting.BATCH < 1000  # a 1,000-question evaluation is read (and sent) in several batches


@pytest.mark.parametrize("query, status, words", [
    ("format=xlsx", 422, "format"),
    ("format=", 422, "format"),
    ("format=csv&check=nope", 422, "check must be NAME:pass"),
    ("format=csv&score=7", 400, "score filter"),
])
def test_hostile_exports_are_refused_before_anything_is_sent(api, db_url, query, status, words):
    created = reviewed_evaluation(api, db_url, answered=1)
    response = api.request("GET", f"/api/v1/evaluations/{created['id']}/export?{query}")
    assert response.status_code == status and words in response.text, response.text


def test_an_unknown_evaluation_is_a_404_and_a_name_cannot_break_the_header(api, db_url, make_client):
    response = api.request("GET", "/api/v1/evaluations/eval_0000000000000000/export?format=csv")
    assert response.status_code == 404 and "no evaluation" in response.text
    from ragretrieval.server.routes.export import attachment

    header = attachment('evil"\r\nSet-Cookie: x=1/../../etc', "csv")
    assert "\r" not in header and "\n" not in header and header.count('"') == 2
    assert 'filename="evil_Set-Cookie_x_1_etc.csv"' in header
    assert attachment("红烧肉", "json").startswith('attachment; filename="evaluation.json"; filename*=UTF-8\'\'%E7%BA')


def test_a_token_server_exports_with_the_bearer_token_only(make_client):
    token = "a-long-enough-test-token"
    client = make_client(token=token)
    assert client.get("/api/v1/evaluations/eval_0000000000000000/export").status_code == 401
    assert client.get("/api/v1/evaluations/eval_0000000000000000/export",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 404


def test_an_evaluation_still_running_exports_as_partial_in_every_format(api, db_url, tmp_path):
    """3 of 5 results stored: each format says RUNNING without changing its shape, and the file is NAME-partial."""
    from ragretrieval.data.corpus import Document
    from ragretrieval.data.importers.agent_jsonl import import_questions

    created = reviewed_evaluation(api, db_url, answered=3)
    assert api.get(f"/api/v1/evaluations/{created['id']}")["status"] == "RUNNING"
    response = export(api, created["id"], "format=json")
    assert response.headers["content-disposition"] == ('attachment; filename="to_review-partial.json"; '
                                                       "filename*=UTF-8''to%20review-partial.json")
    found = response.json()
    assert (found["status"], found["results_done"], found["results_total"]) == ("RUNNING", 3, 5)
    assert list(found) == ["evaluation", "summary", "status", "results_done", "results_total", "results"]
    assert len(found["results"]) == 3
    jsonl = export(api, created["id"], "format=jsonl")
    assert 'filename="to_review-partial.jsonl"' in jsonl.headers["content-disposition"]
    records = [json.loads(line) for line in jsonl.text.splitlines()]
    assert [r["evaluation_status"] for r in records] == ["RUNNING"] * 3
    (tmp_path / "partial.jsonl").write_text(jsonl.text, encoding="utf-8")
    documents = [Document(f"{c}.md", c, f"text of {c}.md") for c in "abcdef"]
    imported = import_questions(tmp_path / "partial.jsonl", documents)  # the field is ignored
    assert len(imported) == 3 and not any("evaluation_status" in q.metadata for q in imported)
    table = export(api, created["id"], "format=csv")
    assert 'filename="to_review-partial.csv"' in table.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(table.content.decode("utf-8-sig"), newline="")))
    assert rows[0][-1] == "evaluation_status" and len(rows) == 4
    assert [row[-1] for row in rows[1:]] == ["RUNNING"] * 3 and {len(row) for row in rows} == {len(rows[0])}


def test_a_completed_evaluation_exports_as_completed(api, db_url):
    created = reviewed_evaluation(api, db_url)
    response = export(api, created["id"], "format=json")
    assert "partial" not in response.headers["content-disposition"]
    found = response.json()
    assert (found["status"], found["results_done"], found["results_total"]) == ("COMPLETED", 5, 5)
    assert {json.loads(line)["evaluation_status"] for line in export(api, created["id"],
                                                                    "format=jsonl").text.splitlines()} == {"COMPLETED"}
    rows = list(csv.reader(io.StringIO(export(api, created["id"], "format=csv").content.decode("utf-8-sig"),
                                       newline="")))
    assert {row[-1] for row in rows[1:]} == {"COMPLETED"}


def test_token_counts_are_not_exported_as_check_columns(api, db_url):
    from ragretrieval.server.db import Database
    from ragretrieval.server.jobs import claims
    from ragretrieval.server.jobs.engine import ItemResult

    from .conftest import new_evaluation, new_set

    evaluation = new_evaluation(api, new_set(api, 1)["id"], "http://127.0.0.1:9/x")
    db = Database(db_url)
    try:
        claim = claims.claim(db, "w", 60)
        claims.finish(db, claim, "w", ItemResult(rag_answer="an answer", input_tokens=10, checks={
            "include": 1.0, "agent/input_token_count": 10, "agent/output_token_count": 3}))
    finally:
        db.close()
    header = export(api, evaluation["id"], "format=csv").content.decode("utf-8-sig").splitlines()[0].split(",")
    assert "include" in header and "input_tokens" in header
    assert not any(name.startswith("agent/") for name in header)
