"""Question sets through the API, on SQLite and on PostgreSQL: created whole, edited, their questions added, changed
and deleted, a dataset's questions opened as a set, and a set in use kept from deletion."""

from __future__ import annotations

import json

from ragretrieval.data.dataset import QuestionRecord, read_jsonl

from .conftest import CORPUS, new_evaluation, new_set

QUESTIONS = [
    {"question_type": "FACTUAL", "question_text": "红烧肉要炖多久？", "ground_truth": "小火炖 40 分钟"},
    {"question_type": "INFERENTIAL", "question_text": "Why brown the sugar first?", "ground_truth": "colour, taste"},
    {"question_text": "只有问题"},
]


def test_a_set_is_created_with_its_questions_and_read_back(api):
    created = api.post("/api/v1/question-sets", {"name": "菜谱", "description": "hand-written", "questions": QUESTIONS},
                       expect=201)
    assert created["id"].startswith("qs_") and len(created["id"]) == 19
    assert (created["name"], created["description"], created["question_count"]) == ("菜谱", "hand-written", 3)
    assert [q["question_text"] for q in created["questions"]] == [q["question_text"] for q in QUESTIONS]
    assert created["questions"][2]["question_type"] == "USER_DEFINED" and created["questions"][2]["ground_truth"] == ""
    assert all(q["id"].startswith("q_") for q in created["questions"])
    assert created["gmt_created"] == created["gmt_updated"] and created["gmt_created"].endswith("+00:00")
    assert api.get(f"/api/v1/question-sets/{created['id']}") == created
    listing = api.get("/api/v1/question-sets")
    assert listing["total"] == 1 and "questions" not in listing["items"][0]
    assert listing["items"][0]["question_count"] == 3 and listing["items"][0]["evaluations"] == 0


def test_questions_are_added_changed_and_deleted_one_by_one(api):
    created = new_set(api, 2)
    set_id = created["id"]
    added = api.post(f"/api/v1/question-sets/{set_id}/questions", {"questions": QUESTIONS[:2]}, expect=201)
    assert [q["question_text"] for q in added["questions"]] == [QUESTIONS[0]["question_text"],
                                                                QUESTIONS[1]["question_text"]]
    first = created["questions"][0]["id"]
    changed = api.put(f"/api/v1/question-sets/questions/{first}", {"ground_truth": "changed"})
    assert changed == {**created["questions"][0], "ground_truth": "changed"}
    api.delete(f"/api/v1/question-sets/questions/{created['questions'][1]['id']}")
    now = api.get(f"/api/v1/question-sets/{set_id}")
    assert now["question_count"] == 3 == len(now["questions"])
    assert [q["question_text"] for q in now["questions"]] == ["question 0", QUESTIONS[0]["question_text"],
                                                              QUESTIONS[1]["question_text"]]
    assert now["gmt_updated"] > created["gmt_updated"]
    api.delete(f"/api/v1/question-sets/questions/{first}x", expect=404)
    api.put("/api/v1/question-sets/questions/q_missing", {"ground_truth": "x"}, expect=404)
    api.post("/api/v1/question-sets/qs_missing/questions", {"questions": QUESTIONS[:1]}, expect=404)


def test_put_replaces_the_whole_list_in_one_transaction(api):
    created = new_set(api, 3)
    set_id, (a, b, c) = created["id"], created["questions"]
    new_list = [{**c, "question_text": "third, now first"}, {"question_text": "brand new"}, a]
    updated = api.put(f"/api/v1/question-sets/{set_id}", {"name": "renamed", "questions": new_list})
    assert updated["name"] == "renamed" and updated["question_count"] == 3
    assert [q["question_text"] for q in updated["questions"]] == ["third, now first", "brand new", "question 0"]
    assert updated["questions"][0]["id"] == c["id"] and updated["questions"][2]["id"] == a["id"]
    assert b["id"] not in {q["id"] for q in updated["questions"]}
    # a list naming a question of another set changes nothing at all, not even the name
    other = new_set(api, 1, name="other")
    refused = api.request("PUT", f"/api/v1/question-sets/{set_id}",
                          json={"name": "half", "questions": [{"id": other["questions"][0]["id"],
                                                               "question_text": "stolen"}]})
    assert refused.status_code == 400 and "is not in question set" in refused.json()["detail"]
    assert api.get(f"/api/v1/question-sets/{set_id}") == updated
    # metadata alone keeps the questions
    assert api.put(f"/api/v1/question-sets/{set_id}", {"description": "d"})["questions"] == updated["questions"]


def test_bad_input_is_refused_with_the_field_named(api):
    for body, where in [
        ({"questions": QUESTIONS}, ["body", "name"]),
        ({"name": "x", "questions": [{"question_text": "   "}]}, ["body", "questions", 0, "question_text"]),
        ({"name": "x", "questions": [{"question_text": "q", "question_type": "T" * 51}]},
         ["body", "questions", 0, "question_type"]),
        ({"name": "x", "api_key": "sk-123"}, ["body", "api_key"]),
    ]:
        response = api.request("POST", "/api/v1/question-sets", json=body)
        assert response.status_code == 422, body
        assert [problem["loc"] for problem in response.json()["detail"]] == [where]
        assert "sk-123" not in response.text
    unknown = api.request("POST", "/api/v1/question-sets", json={"name": "x", "dataset": "nope"})
    assert unknown.status_code == 400 and "no corpus 'nope'" in unknown.json()["detail"]
    assert api.get("/api/v1/question-sets")["total"] == 0
    api.get("/api/v1/question-sets/qs_0000000000000000", expect=404)


def test_a_datasets_questions_open_as_a_set_once(api, demo_dataset):
    records = read_jsonl(demo_dataset / "questions.jsonl", QuestionRecord)
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    assert opened["name"] == CORPUS and opened["dataset"] == CORPUS and opened["question_count"] == len(records)
    assert [q["question_text"] for q in opened["questions"]] == [r.text for r in records]
    first = opened["questions"][0]
    assert first["question_type"] == "USER_DEFINED"
    assert QuestionRecord.model_validate(first["source_record"]) == records[0]  # labels kept for answering
    again = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=200)
    assert again["id"] == opened["id"] and api.get("/api/v1/question-sets")["total"] == 1
    corpora = api.get("/api/v1/corpora")
    assert corpora == [{"name": CORPUS, "documents": json.loads((demo_dataset / "manifest.json").read_text())
                        ["n_documents"], "questions": len(records)}]


def test_a_set_in_use_cannot_be_deleted(api, rag_service):
    created = new_set(api, 2)
    evaluation = new_evaluation(api, created["id"], rag_service.url, name="uses it")
    refused = api.delete(f"/api/v1/question-sets/{created['id']}", expect=409)
    assert refused.json()["detail"] == (f"question set {created['id']!r} is used by 1 evaluation(s) ('uses it'); "
                                        "delete those evaluations first")
    assert api.get(f"/api/v1/question-sets/{created['id']}")["evaluations"] == 1
    # editing it is allowed: the evaluation keeps the questions as they were
    api.put(f"/api/v1/question-sets/questions/{created['questions'][0]['id']}", {"question_text": "edited"})
    api.delete(f"/api/v1/evaluations/{evaluation['id']}")
    api.delete(f"/api/v1/question-sets/{created['id']}")
    api.get(f"/api/v1/question-sets/{created['id']}", expect=404)
