"""Multi-turn requests (``messages``, or ``query`` + ``history``): the generator sends the earlier turns to the model
before the prompt; retrieval, checks and judges see the last user turn as the question. Checked on the requests a
chat server on 127.0.0.1 received."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply

EARLIER = "我想做个川菜，家里有豆腐"
RECORDS = [
    {"request_id": "mapo", "request": {"messages": [
        {"role": "user", "content": EARLIER}, {"role": "assistant", "content": "可以做麻婆豆腐。"},
        {"role": "user", "content": "如何做麻婆豆腐？"}]},
     "expected_retrieved_context": [{"doc_uri": "vegetable_dish/麻婆豆腐.md"}], "expected_response": "豆腐先焯水"},
    {"request_id": "egg", "request": {"query": "煮溏心蛋要几分钟？", "history": [
        {"role": "user", "content": "早饭吃什么好"}, {"role": "assistant", "content": "煮个鸡蛋吧。"}]},
     "expected_retrieved_context": [{"doc_uri": "breakfast/煮鸡蛋.md"}], "expected_response": "6 分钟"},
]


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def reply(request: dict) -> Reply:
    return Reply(JUDGE_REPLY if request["model"] == "judge" else "按菜谱做 [0]。")


def test_history_goes_to_the_model_and_the_last_turn_is_the_question(demo_dataset, tmp_path, llm_env):
    agent = tmp_path / "set.jsonl"
    agent.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    invoke("questions", "import", agent, "--dataset", demo_dataset, "--out", tmp_path / "q.jsonl")
    with ChatServer(reply) as server:
        invoke("answer", "--dataset", demo_dataset, "--questions", tmp_path / "q.jsonl", "--generator",
               "openai:chat", "--base-url", server.url, "--retriever", "bm25", "--judge", "correctness",
               "--judge-model", "judge", "--no-save", "--no-progress", "--out", tmp_path / "r.json")
        requests = list(server.requests)
    asked = {r["messages"][-1]["content"].count("麻婆豆腐") > 0: r for r in requests if r["model"] == "chat"}
    mapo, egg = asked[True], asked[False]
    assert mapo["messages"][0]["role"] == "system"
    assert mapo["messages"][1:-1] == RECORDS[0]["request"]["messages"][:2]
    assert egg["messages"][1:-1] == RECORDS[1]["request"]["history"]
    assert mapo["messages"][-1]["role"] == "user" and "如何做麻婆豆腐？" in mapo["messages"][-1]["content"]
    assert EARLIER not in mapo["messages"][-1]["content"]  # the prompt holds the last turn only
    judged = [r["messages"][-1]["content"] for r in requests if r["model"] == "judge"]
    assert len(judged) == 2 and any("如何做麻婆豆腐？" in p for p in judged)
    assert all(EARLIER not in p and "早饭吃什么好" not in p for p in judged)
    report = AnswerReport.load(tmp_path / "r.json")
    assert [q.text for q in report.questions] == ["如何做麻婆豆腐？", "煮溏心蛋要几分钟？"]
    assert report.questions[0].retrieved_documents[0] == "vegetable_dish/麻婆豆腐.md"  # asked with the last turn


def test_a_malformed_history_fails_its_question_only(demo_dataset, tmp_path, llm_env):
    questions = tmp_path / "q.jsonl"
    rows = [{"id": "bad", "text": "如何做麻婆豆腐？", "relevant": [{"doc_id": "vegetable_dish/麻婆豆腐.md"}],
             "provenance": {"generator": "hand"}, "metadata": {"history": [{"role": "tool", "content": "x"}]}},
            {"id": "good", "text": "如何做煮鸡蛋？", "relevant": [{"doc_id": "breakfast/煮鸡蛋.md"}],
             "provenance": {"generator": "hand"}, "metadata": {"history": [{"role": "user", "content": "早饭"}]}},
            {"id": "plain", "text": "如何做蛋炒饭？", "relevant": [{"doc_id": "staple/蛋炒饭.md"}],
             "provenance": {"generator": "hand"}}]
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with ChatServer(reply) as server:
        invoke("answer", "--dataset", demo_dataset, "--questions", questions, "--generator", "openai:chat",
               "--base-url", server.url, "--retriever", "bm25", "--no-save", "--no-progress", "--out",
               tmp_path / "r.json")
        assert server.count() == 2
    report = {q.id: q for q in AnswerReport.load(tmp_path / "r.json").questions}
    assert "metadata.history.0: expected" in report["bad"].error and report["good"].error is None
