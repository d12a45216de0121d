"""The lists' name search, ``?status=`` in any case, and deleting several evaluations or question sets at once
(all or nothing), on SQLite and PostgreSQL, with hostile inputs."""

from __future__ import annotations

import pytest

from .conftest import new_evaluation, new_set

URL = "http://127.0.0.1:9/answer"  # never asked: no worker runs here


def names(page: dict) -> list[str]:
    return [item["name"] for item in page["items"]]


@pytest.mark.databases  # LIKE with escapes, and deletes that cascade, differ between the back ends
def test_a_name_search_finds_any_case_and_takes_wildcards_as_plain_characters(api):
    question_set = new_set(api, 1)
    for name in ("Alpha one", "alpha_two", "beta", "100% alpha", "红烧肉 Alpha"):
        new_evaluation(api, question_set["id"], URL, name=name)
    assert sorted(names(api.get("/api/v1/evaluations?q=ALPHA"))) == ["100% alpha", "Alpha one", "alpha_two",
                                                                      "红烧肉 Alpha"]
    assert names(api.get("/api/v1/evaluations?q=%25")) == ["100% alpha"]  # % is a character, not "anything"
    assert names(api.get("/api/v1/evaluations?q=a_t")) == ["alpha_two"]  # _ too
    assert names(api.get("/api/v1/evaluations?q=红烧")) == ["红烧肉 Alpha"]
    assert api.get("/api/v1/evaluations?q=nothing-like-it") == {"items": [], "total": 0, "offset": 0, "limit": 50}
    found = api.get("/api/v1/evaluations?q=alpha&limit=2")
    assert found["total"] == 4 and len(found["items"]) == 2
    assert api.get("/api/v1/evaluations?q=")["total"] == 5  # empty: no filter
    api.request("GET", "/api/v1/evaluations", params={"q": "x" * 256}, expect=422)
    new_set(api, 1, name="Recipes Alpha")
    assert names(api.get("/api/v1/question-sets?q=recipes")) == ["Recipes Alpha"]


@pytest.mark.parametrize("status", ["paused", "Paused", "PAUSED"])
def test_status_is_read_in_any_case(api, status):
    question_set = new_set(api, 1)
    paused = new_evaluation(api, question_set["id"], URL, name="paused one")
    new_evaluation(api, question_set["id"], URL, name="pending one")
    api.post(f"/api/v1/evaluations/{paused['id']}/pause")
    assert names(api.get(f"/api/v1/evaluations?status={status}")) == ["paused one"]
    page = api.client.get(f"/evaluations/list?status={status}").text
    assert "paused one" in page and "pending one" not in page


@pytest.mark.parametrize("status", ["nope", "PAUSED;DROP TABLE rr_evaluations", "x" * 1000])
def test_an_unknown_status_is_refused(api, status):
    answer = api.request("GET", "/api/v1/evaluations", params={"status": status}, expect=400)
    assert answer.json()["detail"].startswith("status must be one of PENDING, RUNNING, PAUSED, COMPLETED, FAILED")


@pytest.mark.databases  # LIKE with escapes, and deletes that cascade, differ between the back ends
def test_several_evaluations_are_deleted_at_once_with_their_results(api):
    question_set = new_set(api, 2)
    first, second, kept = (new_evaluation(api, question_set["id"], URL, name=n)["id"] for n in ("a", "b", "c"))
    answer = api.post("/api/v1/evaluations/delete", {"ids": [first, second, first]})
    assert answer == {"deleted": [first, second]}
    assert names(api.get("/api/v1/evaluations")) == ["c"]
    api.get(f"/api/v1/evaluations/{first}", expect=404)
    assert api.get(f"/api/v1/evaluations/{kept}")["total_questions"] == 2


def test_an_unknown_id_deletes_nothing(api):
    question_set = new_set(api, 1)
    real = new_evaluation(api, question_set["id"], URL)["id"]
    answer = api.request("POST", "/api/v1/evaluations/delete", json={"ids": [real, "eval_0000000000000000"]},
                         expect=404)
    assert answer.json()["detail"] == "no evaluation 'eval_0000000000000000'"
    assert api.get(f"/api/v1/evaluations/{real}")["id"] == real  # the transaction rolled back


@pytest.mark.parametrize("body", [
    {}, {"ids": []}, {"ids": "eval_1"}, {"ids": [1, 2]}, {"ids": [None]}, {"ids": ["eval_1"] * 501},
    {"ids": ["../../etc/passwd"]}, {"ids": ["eval_1' OR '1'='1"]}, {"ids": ["x" * 100]}, {"ids": [""]},
    {"ids": ["eval_1"], "force": True}, {"ids": ["https://user:secret@host/x"]}, None])
def test_bulk_delete_refuses_what_is_not_a_list_of_ids(api, body):
    for path in ("/api/v1/evaluations/delete", "/api/v1/question-sets/delete"):
        answer = api.request("POST", path, json=body, expect=422)
        assert "secret" not in answer.text


@pytest.mark.databases  # LIKE with escapes, and deletes that cascade, differ between the back ends
def test_question_sets_in_use_are_not_deleted_and_neither_are_the_others(api):
    used, free = new_set(api, 1, name="used"), new_set(api, 1, name="free")
    new_evaluation(api, used["id"], URL, name="uses it")
    answer = api.request("POST", "/api/v1/question-sets/delete", json={"ids": [free["id"], used["id"]]}, expect=409)
    assert "is used by 1 evaluation(s) ('uses it')" in answer.json()["detail"]
    assert sorted(names(api.get("/api/v1/question-sets"))) == ["free", "used"]
    assert api.post("/api/v1/question-sets/delete", {"ids": [free["id"]]}) == {"deleted": [free["id"]]}
    assert names(api.get("/api/v1/question-sets")) == ["used"]


def test_bulk_delete_needs_the_same_origin_token(api):
    question_set = new_set(api, 1)
    answer = api.client.post("/api/v1/question-sets/delete", json={"ids": [question_set["id"]]})
    assert answer.status_code == 403
    assert api.get(f"/api/v1/question-sets/{question_set['id']}")["id"] == question_set["id"]


@pytest.mark.parametrize("path, status", [
    ("/evaluations/list?q=" + "x" * 256, 422), ("/evaluations/list?status=nope", 200),
    ("/evaluations/list?q=%25%27%22%3Cscript%3E", 200), ("/evaluations/question-sets?q=" + "x" * 256, 422),
    ("/evaluations/new?again=eval_0000000000000000", 404), ("/evaluations/new?question_set=qs_missing", 200),
    ("/evaluations/eval_0000000000000000/live", 200), ("/evaluations/eval_0000000000000000", 404)])
def test_pages_take_odd_queries_calmly(api, path, status):
    answer = api.client.get(path)
    assert answer.status_code == status, answer.text[:300]
    assert "<script>" not in answer.text.replace('<script type="', "")


@pytest.mark.databases  # LIKE with escapes, and deletes that cascade, differ between the back ends
def test_a_deleted_evaluation_s_live_part_says_so_and_stops(api):
    gone = api.client.get("/evaluations/eval_0000000000000000/live").text
    assert 'data-live="no"' in gone and "This evaluation was deleted." in gone
