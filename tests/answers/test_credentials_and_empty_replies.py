"""Generators: empty replies and credentials in URLs. A completion without text (content null,
empty or blank, only a refusal, only tool calls) fails its question with that reason and is asked again next time; a
token in an ``http:`` URL's query and a ``user:password@`` (sent as basic authentication) are found in no file, no
row of the runs store and no output of any command that stores or shows the run."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.io.redact import looks_secret, public_url, redact_urls, url_credentials
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.generator_conformance import conformance_dataset

QUESTIONS = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"
TOKEN, PASSWORD = "sk-PLANTED-token-0f9e8d", "PLANTED-pass-7c6b"


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def completion(message: dict) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "gen-model",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}).encode()


EMPTY = {
    "null": ({"role": "assistant", "content": None}, "the reply's content is null"),
    "empty": ({"role": "assistant", "content": ""}, "the reply's content is empty"),
    "blank": ({"role": "assistant", "content": " \n "}, "the reply's content is only white space"),
    "refusal": ({"role": "assistant", "content": None, "refusal": "I can't help with that."},
                "the model refused: \"I can't help with that.\""),
    "tool_calls": ({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search_recipes", "arguments": "{}"}}]},
        "the reply holds only tool calls (search_recipes), no text"),
}


@pytest.mark.parametrize("kind", sorted(EMPTY))
def test_a_reply_without_text_fails_its_question_with_the_reason(demo_dataset, llm_env, tmp_path, kind):
    message, reason = EMPTY[kind]

    def replies(request):  # the two questions about eggs get no text; the others an answer
        prompt = request["messages"][-1]["content"]
        empty = "煮溏心蛋要煮多久" in prompt or "西红柿鸡蛋汤加水后" in prompt
        return Reply(raw=completion(message)) if empty else Reply("大火蒸 8 分钟 [0]")

    arguments = ("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "openai:gen-model",
                 "--base-url", None, "--retriever", "bm25", "--max-retries", 0, "--no-progress", "--no-save",
                 "--out", tmp_path / "r.json")
    with ChatServer(replies) as server:
        invoke(*[server.url if a is None else a for a in arguments])
        asked = server.count()
        invoke(*[server.url if a is None else a for a in arguments])
        assert server.count() - asked == 2  # never cached: the two are asked again, the rest come from the cache
    report = AnswerReport.load(tmp_path / "r.json")
    failed = [q for q in report.questions if q.error is not None]
    assert len(failed) == 2 and report.failed == 2 and all(q.error.endswith(reason) for q in failed)
    assert all(q.answer == "" and "answer" not in q.metrics for q in failed)  # not an empty answer scored 0
    assert report.counts["answer"]["score"] == 3


@pytest.fixture
def planted(tmp_path, rag_service):
    """The RAG service's URL with a user and password and a token in its query, the dataset, and the files made."""
    host = rag_service.url.split("//", 1)[1]
    return {"url": f"http://bob:{PASSWORD}@{host}/answer?token={TOKEN}&collection=recipes",
            "dataset": conformance_dataset(tmp_path / "ds").path}


def no_secret_in(tmp_path: Path, outputs: list[str]) -> None:
    for text in outputs:
        assert TOKEN not in text and PASSWORD not in text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data and PASSWORD.encode() not in data, path


def test_credentials_in_a_generator_url_are_used_and_written_nowhere(tmp_path, planted, rag_service, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    runs, before = tmp_path / "runs.sqlite", len(rag_service.seen)
    outputs = [invoke("answer", "--dataset", planted["dataset"], "--generator", f"http:{planted['url']}", "--runs-db",
                      runs, "--name", "svc", "--out", tmp_path / "r.json", "--log", tmp_path / "log.jsonl", "-v",
                      "--no-progress").output]
    sent = rag_service.seen[before:]
    assert sent and all(path == f"/answer?token={TOKEN}&collection=recipes" for path, _, _ in sent)
    expected = "Basic " + base64.b64encode(f"bob:{PASSWORD}".encode()).decode()
    assert all(auth == expected for _, _, auth in sent)  # user info is basic authentication
    report = AnswerReport.load(tmp_path / "r.json")
    shown = f"http:http://{planted['url'].split('@')[1].split('?')[0]}?token=***&collection=recipes"
    assert report.config.generator == shown and report.failed == 0
    for command in (["runs", "list"], ["runs", "show", "svc", "-v"], ["runs", "export", "svc", "--format", "json"],
                    ["runs", "report", "svc", "--html", tmp_path / "r.html"]):
        outputs.append(invoke(*command, "--runs-db", runs).output)
    assert shown in outputs[-2]
    no_secret_in(tmp_path, outputs)


def test_a_failing_service_names_its_url_without_credentials(tmp_path, planted, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    down = f"http://bob:{PASSWORD}@127.0.0.1:9/answer?token={TOKEN}"  # nothing listens on port 9
    result = invoke("answer", "--dataset", planted["dataset"], "--generator", f"http:{down}", "--generator-option",
                    "retries=0", "--no-progress", "--runs-db", tmp_path / "runs.sqlite", code=1)
    assert "got no usable answer (first reasons: POST http://127.0.0.1:" in result.output
    assert "token=***" in result.output
    bad = invoke("answer", "--dataset", planted["dataset"], "--generator", f"http:{down.replace('http://', 'ftp://')}",
                 "--no-progress", "--no-save", code=1)
    no_secret_in(tmp_path, [result.output, result.stderr, bad.output])


def test_the_redaction_rule():
    assert public_url("https://u:p@h.example/v1?api-version=2024&key=abc#x") == "https://h.example/v1?api-version=2024&key=***"
    assert public_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # unchanged: cache keys stay
    assert public_url("https://h/x?q=sk-abc&X-Amz-Signature=1&AWSAccessKeyId=2&sig=3&collection=a") == \
        "https://h/x?q=***&X-Amz-Signature=***&AWSAccessKeyId=***&sig=***&collection=a"
    assert url_credentials("https://h/x?access_token=1&max_tokens=2") == ["query parameter 'access_token'"]
    assert [looks_secret(n) for n in ("apiKey", "client_secret", "max_tokens", "collection", "code")] == \
        [True, True, False, False, True]
    assert redact_urls("POST https://bob:pw@h/ask?token=t1 (question q): HTTP 400") == \
        "POST https://h/ask?token=*** (question q): HTTP 400"
    assert public_url("http://[broken/x?token=1") == "(an unreadable URL)"
