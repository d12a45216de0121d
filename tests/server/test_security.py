"""Safe by default: the Host check, the same-origin token, the token for non-loopback binds (bearer and login),
body limits, security headers, escaping of user text on every page, and API keys that never reach a page or a row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from ragretrieval.cli import main
from ragretrieval.server.db import Database
from ragretrieval.server.jobs import claims
from ragretrieval.server.jobs.engine import ItemResult
from ragretrieval.server.security import session_value
from ragretrieval.server.settings import ServeError, ServeSettings, check_bind
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import CORPUS, Api, new_evaluation, new_set, running_worker, wait_for

TOKEN = "a-long-enough-token-0123456789"
KEY = "sk-test-NEVER-STORE-ME-5d2e"
EVIL = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'


def test_only_loopback_host_names_are_served_on_a_loopback_bind(make_client):
    client = make_client()
    assert client.get("/api/v1/health").status_code == 200
    for host in ("evil.example", "127.0.0.1.evil.example", "10.0.0.7"):
        response = client.get("/api/v1/health", headers={"Host": f"{host}:8000"})
        assert response.status_code == 400 and "Host header refused" in response.json()["detail"]
    assert client.get("/api/v1/health", headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get("/api/v1/health", headers={"Host": "[::1]:8000"}).status_code == 200


def test_changes_need_the_same_origin_token(make_client):
    client = make_client()
    client.get("/evaluations/list")
    cookie = client.cookies.get("rr_csrf")
    assert cookie and len(cookie) >= 24
    body = {"name": "x"}
    assert client.post("/api/v1/question-sets", json=body).status_code == 403
    assert client.post("/api/v1/question-sets", json=body, headers={"X-CSRF-Token": "guess"}).status_code == 403
    cross = client.post("/api/v1/question-sets", json=body,
                        headers={"X-CSRF-Token": cookie, "Origin": "http://evil.example"})
    assert cross.status_code == 403 and "cross-origin" in cross.json()["detail"]
    assert client.post("/api/v1/question-sets", json=body, headers={"X-CSRF-Token": cookie}).status_code == 201
    same_origin = client.post("/api/v1/question-sets", json=body,
                              headers={"X-CSRF-Token": cookie, "Origin": "http://127.0.0.1"})
    assert same_origin.status_code == 201
    page = client.get("/evaluations/question-sets").text
    assert f'<meta name="csrf-token" content="{cookie}">' in page


def test_a_token_guards_the_api_by_bearer_and_the_pages_by_login(make_client):
    client = make_client(token=TOKEN)
    refused = client.get("/api/v1/question-sets")
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert client.get("/openapi.json").status_code == 401 and client.get("/docs").status_code == 401
    assert client.get("/api/v1/health").status_code == 200 and client.get("/static/style.css").status_code == 200
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/v1/question-sets", headers=bearer).status_code == 200
    # a bearer token is never sent by a browser on its own: no same-origin token needed with it
    assert client.post("/api/v1/question-sets", json={"name": "x"}, headers=bearer).status_code == 201
    assert client.get("/api/v1/question-sets", headers={"Authorization": "Bearer wrong"}).status_code == 401

    page = client.get("/evaluations/list?page=2", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login?next=%2Fevaluations%2Flist%3Fpage%3D2"
    form = client.get("/login?next=/evaluations/question-sets")
    assert form.status_code == 200 and 'name="token"' in form.text and TOKEN not in form.text
    csrf = client.cookies.get("rr_csrf")
    wrong = client.post("/login", data={"token": "nope", "csrf": csrf, "next": "/"}, follow_redirects=False)
    assert wrong.status_code == 401 and "Wrong token." in wrong.text
    stale = client.post("/login", data={"token": TOKEN, "csrf": "old", "next": "/"}, follow_redirects=False)
    assert stale.status_code == 403 and "rr_session" not in client.cookies
    ok = client.post("/login", data={"token": TOKEN, "csrf": csrf, "next": "/evaluations/question-sets"},
                     follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"] == "/evaluations/question-sets"
    assert client.cookies.get("rr_session") == session_value(TOKEN) != TOKEN
    assert "HttpOnly" in ok.headers["set-cookie"] and "SameSite=strict" in ok.headers["set-cookie"]
    assert client.get("/evaluations/list").status_code == 200
    api = Api(client)  # a logged-in page's script
    assert api.post("/api/v1/question-sets", {"name": "from the page"}, expect=201)["name"] == "from the page"
    out = client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert out.status_code == 303 and "rr_session" not in client.cookies
    assert client.get("/evaluations/list", follow_redirects=False).status_code == 303


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example/", "/\\evil.example", ""])
def test_the_login_never_sends_anyone_elsewhere(make_client, target):
    client = make_client(token=TOKEN)
    client.get("/login")
    done = client.post("/login", data={"token": TOKEN, "csrf": client.cookies.get("rr_csrf"), "next": target},
                       follow_redirects=False)
    assert done.headers["location"] == "/evaluations/list"


def test_bodies_over_the_limit_are_refused(make_client):
    api = Api(make_client(max_body_bytes=4096))
    small = [{"question_text": "q" * 100}]
    assert api.post("/api/v1/question-sets", {"name": "small", "questions": small}, expect=201)
    large = api.request("POST", "/api/v1/question-sets", json={"name": "large", "questions": small * 60})
    assert large.status_code == 413 and "larger than the server's limit" in large.json()["detail"]

    def chunks():  # no Content-Length: counted as it arrives
        yield b'{"name": "chunked", "questions": ['
        for _ in range(60):
            yield b'{"question_text": "' + b"q" * 100 + b'"},'
        yield b'{"question_text": "end"}]}'

    chunked = api.request("POST", "/api/v1/question-sets", content=chunks(),
                          headers={"Content-Type": "application/json"})
    assert chunked.status_code == 413
    assert [s["name"] for s in api.get("/api/v1/question-sets")["items"]] == ["small"]


def test_every_answer_carries_the_security_headers(make_client):
    client = make_client()
    for path in ("/evaluations/list", "/api/v1/health", "/static/common.js", "/no-such-page"):
        headers = client.get(path).headers
        assert "script-src 'self'" in headers["content-security-policy"] and "unsafe" not in \
            headers["content-security-policy"], path
        assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    assert "style-src 'self' 'unsafe-inline'" in client.get("/docs").headers["content-security-policy"]


def test_user_text_is_escaped_on_every_page(api, db_url):
    question_set = api.post("/api/v1/question-sets", {"name": EVIL, "description": EVIL, "questions": [
        {"question_type": "FACTUAL", "question_text": EVIL, "ground_truth": EVIL}]}, expect=201)
    evaluation = new_evaluation(api, question_set["id"], "http://127.0.0.1:9/x", name=EVIL)
    db = Database(db_url)
    try:
        claim = claims.claim(db, "w", 60)
        claims.finish(db, claim, "w", ItemResult(rag_answer=EVIL, llm_judge_reasoning=EVIL, llm_judge_score=2,
                                                     checks={EVIL: 1}, rag_answer_sources=[{"doc_id": EVIL,
                                                                                            "content": EVIL}]))
    finally:
        db.close()
    pages = ["/evaluations/list", f"/evaluations/{evaluation['id']}", "/evaluations/question-sets",
             f"/evaluations/question-sets/{question_set['id']}", "/evaluations/new"]
    for path in pages:
        text = api.client.get(path).text
        assert "<img" not in text and "<script>document" not in text, path  # the answer's Markdown too
        assert "<script" not in re.sub(r'<script (type="application/json"|type="module" src="/static/)', "", text)
        assert "&lt;script&gt;" in text or "\\u003cscript\\u003e" in text, path
    editor = api.client.get(f"/evaluations/question-sets/{question_set['id']}").text
    assert "\\u003c/script\\u003e" in editor  # the table's JSON cannot close its <script> element


def test_a_non_loopback_bind_needs_a_token(tmp_path):
    with pytest.raises(ServeError, match="binding to 0.0.0.0 lets other machines in"):
        check_bind(ServeSettings(host="0.0.0.0"))
    check_bind(ServeSettings(host="0.0.0.0", token=TOKEN))
    check_bind(ServeSettings(host="::1"))
    with pytest.raises(ServeError, match="at least 16 characters"):
        check_bind(ServeSettings(host="10.1.2.3", token="short"))
    refused = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--runs-db", str(tmp_path / "r.sqlite")])
    assert refused.exit_code == 2 and "Error: binding to 0.0.0.0 lets other machines in" in refused.output
    bad = CliRunner().invoke(main, ["worker", "--heartbeat", "5", "--stale-after", "2"])
    assert bad.exit_code == 2 and "must be longer than --heartbeat" in bad.output


def test_api_keys_reach_no_page_and_no_row(make_client, db_url, datasets, monkeypatch, tmp_path):
    """An evaluation answered by a model with the server's key: the key goes to the model, and nowhere else (pages,
    the API, the result rows, the stored run)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    api = Api(make_client())
    question_set = new_set(api, 2)
    with ChatServer(lambda request: Reply("An answer [0].")) as model:
        created = api.post("/api/v1/evaluations", {
            "name": "model", "dataset": CORPUS, "question_set_id": question_set["id"],
            "generator": "openai:test-model", "base_url": model.url, "retriever": "bm25"}, expect=201)
        with running_worker(db_url, datasets):
            done = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{created['id']}"))["status"] == "COMPLETED"
                            and e, what="COMPLETED")
    assert model.authorizations == [f"Bearer {KEY}"] * 2 and done["run_id"]
    texts = [api.client.get(p).text for p in ("/evaluations/list", f"/evaluations/{created['id']}", "/evaluations/new",
                                              f"/evaluations/question-sets/{question_set['id']}", "/openapi.json",
                                              f"/api/v1/evaluations/{created['id']}")]
    assert all(KEY not in text for text in texts)
    if db_url.startswith("sqlite"):
        folder = Path(db_url.removeprefix("sqlite:///")).parent
        for path in folder.glob("runs.sqlite*"):
            assert KEY.encode() not in path.read_bytes(), path
    else:
        import psycopg

        with psycopg.connect(db_url.replace("+psycopg", "")) as conn:
            for table in ("rr_evaluations", "rr_evaluation_results", "rr_question_sets", "rr_questions", "rr_runs",
                          "rr_run_reports"):
                rows = conn.execute(f"SELECT * FROM {table}").fetchall()
                assert rows and KEY not in repr(rows), table


def test_a_page_for_something_missing_says_so(api):
    response = api.client.get("/evaluations/eval_missing")
    assert response.status_code == 404 and "no evaluation &#39;eval_missing&#39;" in response.text
    assert api.client.get("/evaluations/question-sets/qs_missing").status_code == 404


def test_the_token_is_not_in_the_pages_or_the_openapi_description(make_client):
    client = make_client(token=TOKEN)
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert TOKEN not in client.get("/openapi.json", headers=bearer).text
    client.get("/login")
    client.post("/login", data={"token": TOKEN, "csrf": client.cookies.get("rr_csrf"), "next": "/"})
    for path in ("/evaluations/list", "/evaluations/new", "/evaluations/question-sets", "/docs"):
        assert TOKEN not in client.get(path).text, path


def test_testclient_fixture_hosts(make_client):
    """The suite's TestClient talks to 127.0.0.1, as a browser on this machine would."""
    assert isinstance(make_client(), TestClient)
