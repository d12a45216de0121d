"""``POST /api/v1/question-sets/generate`` against a real OpenAI-compatible server on 127.0.0.1 (tests/llm): questions
with their ground truth and evidence come back, nothing is stored, the key stays in the server's environment, and
what cannot work says why."""

from __future__ import annotations

import pytest
from llm.conftest import good_reply

from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import CORPUS, Api

KEY = "sk-test-generate-NEVER-SHOWN-91c3"


@pytest.fixture
def model(monkeypatch, tmp_path):
    """The chat server, the key in the server's environment, and an empty LLM answer cache."""
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(good_reply) as server:
        yield server


@pytest.fixture
def sqlite_api(client_on, sqlite_url):
    return Api(client_on(sqlite_url))


def ask(api, model, **changes):
    body = {"dataset": CORPUS, "model": "test-model", "base_url": model.url, "count": 3, "per_doc": 2, **changes}
    return api.request("POST", "/api/v1/question-sets/generate", json=body)


def test_generated_questions_come_back_and_nothing_is_stored(sqlite_api, model):
    response = ask(sqlite_api, model)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert model.count() == 2  # ceil(3 / 2) documents asked about
    assert set(model.authorizations) == {f"Bearer {KEY}"} and KEY not in response.text
    questions = answer["questions"]
    assert len(questions) == 3 and answer["counts"]["documents"] == 2 and answer["failed_documents"] == []
    assert {q["question_type"] for q in questions} <= {"FACTUAL", "INFERENTIAL"}
    assert all(q["question_text"] and q["ground_truth"] for q in questions)
    record = questions[0]["source_record"]
    assert record["text"] == questions[0]["question_text"] and record["relevant"][0]["spans"]
    assert answer["usage"]["requests"] == 2 and answer["usage"]["prompt_tokens"] > 0
    assert sqlite_api.get("/api/v1/question-sets")["total"] == 0
    kept = sqlite_api.post("/api/v1/question-sets", {"name": "generated", "dataset": CORPUS,
                                                     "questions": questions[:2]}, expect=201)
    assert kept["questions"][0]["source_record"] == record  # the labels travel with the question


def test_an_edited_prompt_is_used_and_a_broken_one_refused(sqlite_api, model):
    custom = "只写 $n 个问题（$types），关于《$title》：\n<<<\n$document\n>>>\n"
    assert ask(sqlite_api, model, prompt=custom, count=1).status_code == 200
    assert model.requests[-1]["messages"][0]["content"].startswith("只写 2 个问题")
    broken = ask(sqlite_api, model, prompt="写 $count 个问题：$document")
    assert broken.status_code == 400 and "unknown placeholder $count" in broken.json()["detail"]


def test_what_cannot_work_says_why(sqlite_api, model, monkeypatch):
    model.fail_after = 0
    down = ask(sqlite_api, model, count=1)
    assert down.status_code == 502 and down.json()["detail"] == "the model endpoint answered 500; try again"
    assert KEY not in down.text
    assert ask(sqlite_api, model, dataset="nope").status_code == 400
    assert ask(sqlite_api, model, count=500).status_code == 422
    monkeypatch.delenv("OPENAI_API_KEY")
    no_key = ask(sqlite_api, model, count=1)
    assert no_key.status_code == 502 and "no API key: set the environment variable OPENAI_API_KEY" in no_key.text


def test_the_editor_page_offers_the_default_prompts(sqlite_api):
    page = sqlite_api.client.get("/evaluations/question-sets/new").text
    assert 'id="default-prompts"' in page and "$document" in page and "generate-dialog" in page


@pytest.mark.parametrize("reply, said", [
    (Reply(status=502, message="bad gateway"), "the model endpoint answered 502; try again"),
    (Reply(status=401, message="invalid key"), "the model endpoint answered 401: it refused the server's API key; "
                                               "the server's operator sets the key"),
    (Reply(status=404, message="no such model"), "the model endpoint answered 404; check the model and the base URL"),
])
def test_a_broken_endpoint_answers_a_web_message(sqlite_api, monkeypatch, tmp_path, reply, said):
    """No server path (the builder's temporary journal) and no command-line advice ("run the same command")."""
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(lambda request: reply) as server:
        response = ask(sqlite_api, server, count=1)
    assert response.status_code == 502 and response.json()["detail"] == said
    for server_side in ("journal", "command", "/tmp", "…", "rr-generate", KEY):
        assert server_side not in response.text


def test_an_endpoint_that_cannot_be_reached_says_so(sqlite_api, monkeypatch, tmp_path):
    import socket

    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    body = {"dataset": CORPUS, "model": "test-model", "base_url": f"http://127.0.0.1:{port}/v1", "count": 1}
    response = sqlite_api.request("POST", "/api/v1/question-sets/generate", json=body)
    assert response.status_code == 502
    assert response.json()["detail"] == ("the model endpoint could not be reached; check the base URL and model, "
                                         "then try again")


@pytest.mark.parametrize("reply, said", [
    (Reply(status=502, message="bad gateway"), "模型端点返回了 502；请重试"),
    (Reply(status=401, message="invalid key"), "模型端点返回了 401：它拒绝了服务器的 API 密钥；密钥由服务器的管理员设置"),
    (Reply(status=404, message="no such model"), "模型端点返回了 404；请检查模型和基础 URL"),
])
def test_a_chinese_page_reads_the_failure_in_chinese(sqlite_api, monkeypatch, tmp_path, reply, said):
    """`detail` stays English for scripts; `message` is what the Chinese dialog shows."""
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    sqlite_api.client.cookies.set("rr_lang", "zh")
    with ChatServer(lambda request: reply) as server:
        response = ask(sqlite_api, server, count=1)
    assert response.status_code == 502 and response.json()["message"] == said
    assert response.json()["detail"].startswith("the model endpoint answered")
    assert KEY not in response.text


def test_a_missing_key_and_an_english_page(sqlite_api, model, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    english = ask(sqlite_api, model, count=1)
    assert english.status_code == 502 and "message" not in english.json()  # nothing to add to `detail`
    sqlite_api.client.cookies.set("rr_lang", "zh")
    chinese = ask(sqlite_api, model, count=1).json()
    assert chinese["message"] == "没有 API 密钥：请设置环境变量 OPENAI_API_KEY（不检查密钥的本地端点接受任意值，例如 OPENAI_API_KEY=local）"
