"""One failure rule for the command line, the server and its workers: a service that answers
400, 400, 200 in a cycle leaves 10 of 30 questions answered; `answer` exits 1 and stores nothing, and a web
evaluation, answered by a worker thread or a `ragretrieval worker` process, ends FAILED with the count and the first
cause and stores no run. Below the rule the run completes and every table says how many answered."""

from __future__ import annotations

import itertools
import threading

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.llm.replies import mostly_failed
from ragretrieval.runs.history import RunHistory

from .conftest import new_evaluation, new_set, wait_for
from .processes import Worker
from .rag_service import RagService, default_respond

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: workers


def cycling(*statuses):
    """A `respond` answering with `statuses` in turn, request after request (200: an answer)."""
    turns, lock = itertools.cycle(statuses), threading.Lock()

    def respond(request):
        with lock:
            status = next(turns)
        return default_respond(request) if status == 200 else status

    return respond


@pytest.fixture
def service():
    with RagService(cycling(400, 400, 200)) as running:
        yield running


def settled(api, eval_id):
    return wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] in
                    ("COMPLETED", "FAILED") and e, what="the evaluation to end")


def test_the_rule_is_more_than_half():
    assert [mostly_failed(f, 30) for f in (15, 16, 30)] == [False, True, True]
    assert mostly_failed(2, 2) and not mostly_failed(1, 2) and not mostly_failed(0, 0)


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_command_line_exits_1_and_stores_nothing(demo_dataset, tmp_path, service, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    db = tmp_path / "runs.sqlite"
    result = run_cli("answer", "--dataset", demo_dataset, "--generator", f"http:{service.url}", "--generator-option",
                     "retries=0", "--runs-db", db, "--no-progress", "--threads", 1)
    assert result.exit_code == 1 and "20 of 30 questions got no usable answer (first reasons: POST " in result.output
    with RunHistory(db) as history:
        assert history.list() == []


def test_below_the_rule_every_table_says_how_many_answered(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    db = tmp_path / "runs.sqlite"
    with RagService(cycling(400, 200, 200)) as service:
        result = run_cli("answer", "--dataset", demo_dataset, "--generator", f"http:{service.url}",
                         "--generator-option", "retries=0", "--runs-db", db, "--no-progress", "--name", "two-thirds")
    assert result.exit_code == 0, result.output
    assert "20 of 30 answered; generator http:" in result.output and "answers (20 of 30 answered)" in result.output
    listed = run_cli("runs", "list", "--runs-db", db).output
    assert "20 of 30 answered" in listed.splitlines()[2]
    assert "answers (20 of 30 answered)" in run_cli("runs", "show", "--runs-db", db, "two-thirds").output
    assert run_cli("runs", "report", "two-thirds", "--runs-db", db, "--html", tmp_path / "r.html").exit_code == 0
    assert "<td class=\"num\">20 of 30 answered</td>" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_web_evaluation_that_mostly_failed_ends_failed_without_a_run(api, db_url, service, in_process_worker):
    question_set = new_set(api, 30)
    eval_id = new_evaluation(api, question_set["id"], service.url, name="mostly failed")["id"]
    ended = settled(api, eval_id)
    assert ended["status"] == "FAILED" and ended["run_id"] is None
    assert ended["error"].startswith("20 of 30 questions got no usable answer (first reasons: POST http://127.0.0.1:")
    assert "HTTP 400" in ended["error"] and ended["error"].endswith("resume asks the failed questions again")
    assert (ended["completed_questions"], ended["failed_questions"], ended["answered_questions"]) == (30, 20, 10)
    assert ended["summary"]["answered"] == 10
    assert "10 of 30 answered" in api.client.get(f"/evaluations/{eval_id}").text
    listed = api.get("/api/v1/evaluations")["items"][0]
    assert (listed["failed_questions"], listed["answered_questions"]) == (20, 10)
    with RunHistory(db_url) as history:
        assert history.list() == []
    service.respond = default_respond  # the service is mended: resume asks the 20 failed questions again
    assert api.post(f"/api/v1/evaluations/{eval_id}/resume")["status"] == "RUNNING"
    again = settled(api, eval_id)
    assert again["status"] == "COMPLETED" and again["run_id"] and again["failed_questions"] == 0
    with RunHistory(db_url) as history:
        assert history.get(again["run_id"]).report.failed == 0


def test_two_questions_that_both_fail_are_not_completed(api, in_process_worker):
    with RagService(cycling(400)) as service:
        eval_id = new_evaluation(api, new_set(api, 2)["id"], service.url)["id"]
        ended = settled(api, eval_id)
    assert ended["status"] == "FAILED" and ended["error"].startswith("2 of 2 questions got no usable answer")


def test_below_the_rule_a_web_evaluation_completes_and_says_how_many_answered(api, db_url, in_process_worker):
    with RagService(cycling(400, 200, 200)) as service:
        eval_id = new_evaluation(api, new_set(api, 30)["id"], service.url, name="two thirds")["id"]
        ended = settled(api, eval_id)
    assert ended["status"] == "COMPLETED" and (ended["failed_questions"], ended["answered_questions"]) == (10, 20)
    assert "20 of 30 answered" in api.client.get(f"/evaluations/{eval_id}").text
    assert "20 of 30 answered" in api.client.get("/evaluations/list").text
    with RunHistory(db_url) as history:
        (run,) = history.list()
    assert run.n_answered == 20 and run.n_questions == 30


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_a_worker_process_follows_the_same_rule(sqlite_url, client_on, datasets, tmp_path, service):
    from .conftest import Api

    api = Api(client_on(sqlite_url))
    eval_id = new_evaluation(api, new_set(api, 30)["id"], service.url)["id"]
    worker = Worker(sqlite_url, datasets, tmp_path / "worker.log")
    try:
        ended = settled(api, eval_id)
    finally:
        worker.stop()
    assert ended["status"] == "FAILED" and ended["error"].startswith("20 of 30 questions got no usable answer")
    assert ended["failed_questions"] == 20 and service.count() == 30


def test_a_run_that_completed_with_failures_says_so_in_the_api_the_list_and_every_mean(api, db_url, service,
                                                                                      in_process_worker):
    service.respond = cycling(400, 200, 200)  # 10 of 30 fail: below the rule, so the evaluation completes
    question_set = new_set(api, 30)
    eval_id = new_evaluation(api, question_set["id"], service.url, name="some failed")["id"]
    ended = settled(api, eval_id)
    assert ended["status"] == "COMPLETED" and ended["failed_questions"] == 10
    assert ended["completed_with_failures"] is True
    assert api.get("/api/v1/evaluations")["items"][0]["completed_with_failures"] is True
    listed = api.client.get("/evaluations/list").text
    row = listed[listed.index(f'data-id="{eval_id}"'):]
    badge = row.split("</tr>")[0].split('<span class="with-failures"')[1].split(">")[0]
    assert "hidden" not in badge and 'title="10 of 30 questions got no answer' in badge
    detail = api.client.get(f"/evaluations/{eval_id}").text
    assert '<span class="with-failures">with failures</span>' in detail  # (no check applies: no mean to qualify)
    service.respond = default_respond
    clean = settled(api, new_evaluation(api, question_set["id"], service.url, name="all answered")["id"])
    assert clean["completed_with_failures"] is False
    assert 'class="with-failures">' not in api.client.get(f"/evaluations/{clean['id']}").text
