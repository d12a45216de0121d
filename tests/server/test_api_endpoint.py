"""Correcting where a FAILED or PAUSED evaluation asks its model, judges or service before it is resumed
(``PATCH /api/v1/evaluations/{id}``), on SQLite and PostgreSQL: hostile inputs, the states it is refused in, and a
worker that failed against a dead service, resumed against the right one, answering every question there."""

from __future__ import annotations

from collections import Counter

import pytest

from ragretrieval.server.db import Database

from .conftest import new_evaluation, new_set, running_worker, wait_for

DEAD = "http://127.0.0.1:9/answer"  # nothing listens on port 9


def evaluation(api, **extra) -> dict:
    return new_evaluation(api, new_set(api, 2)["id"], DEAD, **extra)


def test_a_paused_evaluation_s_endpoint_is_corrected_and_only_what_was_given_changes(api):
    created = new_evaluation(api, new_set(api, 1)["id"], DEAD, judge="score5", judge_base_url="http://judge:1/v1")
    api.post(f"/api/v1/evaluations/{created['id']}/pause")
    changed = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={"generator": "http://127.0.0.1:8/b"},
                          expect=422)  # not an http: generator spec
    changed = api.request("PATCH", f"/api/v1/evaluations/{created['id']}",
                          json={"generator": "http:http://127.0.0.1:8/b"}, expect=200).json()
    assert changed["generator"] == "http:http://127.0.0.1:8/b" and changed["judge_base_url"] == "http://judge:1/v1"
    assert changed["status"] == "PAUSED" and changed["options"] == created["options"]
    cleared = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={"judge_base_url": None},
                          expect=200).json()
    assert cleared["judge_base_url"] is None and cleared["generator"] == "http:http://127.0.0.1:8/b"
    assert api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={}, expect=200).json()["id"]


@pytest.mark.parametrize("status", ["PENDING", "COMPLETED"])
def test_an_evaluation_that_is_not_failed_or_paused_keeps_its_endpoint(api, db_url, status):
    created = evaluation(api)
    if status == "COMPLETED":
        from sqlalchemy import update

        from ragretrieval.runs.schema import evaluations
        db = Database(db_url)
        with db.write() as conn:
            conn.execute(update(evaluations).where(evaluations.c.id == created["id"]).values(status="COMPLETED"))
        db.close()
    answer = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={"base_url": "http://x:1/v1"},
                         expect=409)
    assert answer.json()["detail"] == (f"evaluation {created['id']!r} is {status}; only a FAILED or PAUSED "
                                       "evaluation's endpoint can be changed (pause it first)")
    assert api.get(f"/api/v1/evaluations/{created['id']}?limit=0")["base_url"] is None


@pytest.mark.parametrize("body, status, text", [
    ({"base_url": "ftp://host/x"}, 422, "base_url must be an http:// or https:// URL"),
    ({"base_url": "http://user:sk-secret@host/v1"}, 422, "base_url must not carry credentials"),
    ({"judge_base_url": "/etc/passwd"}, 422, "judge_base_url must be an http:// or https:// URL"),
    ({"base_url": 42}, 422, "string"),
    ({"base_url": ["http://a"]}, 422, "string"),
    ({"generator": "openai:gpt-4o"}, 422, "only an http: service's URL can be corrected"),
    ({"generator": "file:/etc/passwd"}, 422, "only an http: service's URL can be corrected"),
    ({"generator": "http:" + "x" * 600}, 422, "at most 500 characters"),
    ({"generator": "http:javascript:alert(1)"}, 422, "must be an http:// or https:// URL"),
    ({"api_key": "sk-secret"}, 422, "Extra inputs are not permitted"),
    ({"model": "/root"}, 422, "Extra inputs are not permitted"),
    ({"options": {"context_k": 1}}, 422, "Extra inputs are not permitted"),
])
def test_hostile_corrections_are_refused_and_nothing_changes(api, body, status, text):
    created = evaluation(api)
    api.post(f"/api/v1/evaluations/{created['id']}/pause")
    answer = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json=body, expect=status)
    assert text in answer.text and "sk-secret" not in answer.text
    after = api.get(f"/api/v1/evaluations/{created['id']}?limit=0")
    assert (after["generator"], after["base_url"], after["judge_base_url"]) == (f"http:{DEAD}", None, None)


def test_a_model_generator_takes_a_base_url_not_a_service_url(api):
    question_set = new_set(api, 1)
    created = api.post("/api/v1/evaluations", {"name": "m", "dataset": "dataset", "question_set_id":
                                                question_set["id"], "generator": "openai:some-model"}, expect=201)
    api.post(f"/api/v1/evaluations/{created['id']}/pause")
    refused = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={"generator": "http:http://a:1/x"},
                          expect=400)
    assert "is answered by 'openai:some-model', not an http: service" in refused.json()["detail"]
    moved = api.request("PATCH", f"/api/v1/evaluations/{created['id']}", json={"base_url": "http://127.0.0.1:1/v1"},
                        expect=200).json()
    assert moved["base_url"] == "http://127.0.0.1:1/v1" and moved["generator"] == "openai:some-model"


def test_unknown_evaluation_and_the_same_origin_token(api):
    api.request("PATCH", "/api/v1/evaluations/eval_0000000000000000", json={"base_url": None}, expect=404)
    created = evaluation(api)
    api.post(f"/api/v1/evaluations/{created['id']}/pause")
    assert api.client.patch(f"/api/v1/evaluations/{created['id']}", json={"base_url": None}).status_code == 403


def test_a_failed_run_corrected_and_resumed_answers_at_the_new_endpoint(api, db_url, datasets, rag_service):
    question_set = new_set(api, 8)
    eval_id = new_evaluation(api, question_set["id"], DEAD, name="wrong port")["id"]
    with running_worker(db_url, datasets):
        failed = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] == "FAILED"
                          and e, what="FAILED")
        assert "127.0.0.1:9" in failed["error"]
        wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["summary"]["running"] == 0,
                 what="the questions in hand stored or given back")
        api.request("PATCH", f"/api/v1/evaluations/{eval_id}", json={"generator": f"http:{rag_service.url}"},
                    expect=200)
        api.post(f"/api/v1/evaluations/{eval_id}/resume")
        done = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}"))["status"] == "COMPLETED" and e,
                        what="COMPLETED")
    # the same worker had prepared the evaluation against the dead URL: it prepared it again for the new one
    assert done["summary"]["errors"] == 0 and done["generator"] == f"http:{rag_service.url}"
    assert rag_service.asked == Counter({q["question_text"]: 1 for q in question_set["questions"]})
    assert all(r["rag_answer"].startswith("answer to: question") for r in done["results"])


def test_a_worker_prepares_an_evaluation_again_when_its_endpoint_changed():
    from dataclasses import replace

    from ragretrieval.server.jobs.engine import EvaluationSettings
    from ragretrieval.server.jobs.runners import Runners
    from ragretrieval.work.stop import StopToken

    class Runner:
        def __init__(self, settings):
            self.settings, self.closed = settings, False

        def close(self):
            self.closed = True

    prepared = []
    runners = Runners(lambda settings, stop: prepared.append(Runner(settings)) or prepared[-1], StopToken())
    before = EvaluationSettings(id="eval_1", name="e", dataset="d", dataset_path=None, question_set_id="qs_1",
                                generator=f"http:{DEAD}")
    with runners.use(before) as first:
        pass
    with runners.use(before) as again:
        assert again is first  # kept while nothing changed
    after = replace(before, generator="http:http://127.0.0.1:8/answer")
    with runners.use(after) as second:
        assert second is not first and second.settings.generator == after.generator
    assert first.closed and not second.closed and len(prepared) == 2
    runners.retire("eval_1")
    assert second.closed
