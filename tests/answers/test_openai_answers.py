"""``answer --generator openai:...`` against a real OpenAI-compatible server on 127.0.0.1: prompts, threads, usage,
logs, failures, and resuming a killed run without asking any answered question again."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from ragretrieval.answers.batch import run_answers
from ragretrieval.answers.generators import GeneratorOptions
from ragretrieval.answers.report import AnswerReport
from ragretrieval.answers.session import AnswerSession, AnswerSettings
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply
from ragretrieval.work.stop import Stopped, StopToken

NUMBERED = re.compile(r"^\[(\d+)\] (.*)$", re.M)


def cite_first(request: dict) -> Reply:
    """Quote the first numbered document of the prompt and cite it, as a well-behaved model would."""
    prompt = request["messages"][-1]["content"] if "messages" in request else request["prompt"]
    first = NUMBERED.search(prompt)
    return Reply(f"{first.group(2)[:30]} [{first.group(1)}]" if first else "I could not find the answer")


def args(server, dataset, *extra):
    return ["answer", "--dataset", str(dataset), "--generator", "openai:test-model", "--base-url", server.url,
            "--retriever", "bm25", "--max-retries", "1", "--sleep-time", "0", "--no-progress", *map(str, extra)]


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, list(arguments))
    assert result.exit_code == code, result.output
    return result


def test_answers_with_prompt_usage_and_log(demo_dataset, llm_env, tmp_path):
    with ChatServer(cite_first) as server:
        result = invoke(*args(server, demo_dataset, "--threads", 8, "--out", tmp_path / "r.json", "--runs-db",
                              tmp_path / "runs.sqlite", "--log", tmp_path / "log.jsonl", "--temperature", 0.2,
                              "--max-tokens", 300))
        assert server.count() == 30
        first = server.requests[0]
        invoke(*args(server, demo_dataset, "--threads", 8, "--temperature", 0.2, "--max-tokens", 300, "--no-save"))
        assert server.count() == 30  # every answer is in the answer cache: nothing is asked again
    assert first["model"] == "test-model" and first["temperature"] == 0.2 and first["max_tokens"] == 300
    system, user = first["messages"]
    assert system["role"] == "system" and "中文" in system["content"]  # the demo is Chinese: the zh defaults
    assert "[0] " in user["content"] and "[4] " in user["content"] and "问题：如何做" in user["content"]
    assert "根据所给文档无法回答这个问题" in user["content"]  # the refusal message the checks look for
    report = AnswerReport.load(tmp_path / "r.json")
    assert report.usage["input_tokens"] > 0 and report.usage["output_tokens"] > 0
    assert all(q.total_tokens == q.input_tokens + q.output_tokens > 0 for q in report.questions)
    assert report.means["answer"]["cite_f1"] > 0.5 and "latency p50" in result.output
    assert report.config.generator_settings["prompt"] == "default:answer_zh"
    assert report.config.generator_settings["prompt_hash"].startswith("sha256:")
    assert report.config.generator_settings["base_url"] == server.url
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(log) == 30 and {"id", "question", "answer", "scores"} <= set(log[0])
    for path in (tmp_path / "r.json", tmp_path / "log.jsonl", tmp_path / "runs.sqlite"):
        assert TEST_API_KEY.encode() not in path.read_bytes(), path


def test_text_completion_system_message_and_a_prompt_file(demo_dataset, llm_env, tmp_path):
    prompt = tmp_path / "prompt.jinja"
    prompt.write_text("Q: {{ question }}\n{% for d in documents %}<{{ d.id }}> {{ d.text[:20] }}\n{% endfor %}"
                      "Say {{ refusal_message }} if unsure.", encoding="utf-8")
    with ChatServer(lambda request: Reply("x [0]")) as server:
        invoke(*args(server, demo_dataset, "--text-completion", "--system-message", "", "--prompt", prompt,
                     "--refusal-message", "UNSURE", "--context-k", 2, "--no-save"))
        body = server.requests[0]
    assert "messages" not in body and body["prompt"].startswith("Q: 如何做")
    assert body["prompt"].count("\n<") == 2 and body["prompt"].endswith("Say UNSURE if unsure.")
    broken = tmp_path / "broken.jinja"
    broken.write_text("{{ question }} {{ docs }} {{ secret_sauce }}", encoding="utf-8")
    with ChatServer(cite_first) as server:
        failed = invoke(*args(server, demo_dataset, "--prompt", broken, "--no-save"), code=1)
        assert "broken.jinja: unknown variable 'secret_sauce'" in failed.output and server.count() == 0


def test_one_refused_request_fails_one_question(demo_dataset, llm_env, tmp_path):
    def picky(request):
        return Reply(status=400) if "麻婆豆腐" in request["messages"][-1]["content"].split("问题：")[-1] else \
            cite_first(request)

    with ChatServer(picky) as server:
        result = invoke(*args(server, demo_dataset, "--out", tmp_path / "r.json", "--no-save"))
    failed = [q for q in AnswerReport.load(tmp_path / "r.json").questions if q.error]
    assert len(failed) == 1 and "HTTP 400" in failed[0].error and "麻婆豆腐" in failed[0].text
    assert f"warning: no answer for {failed[0].id}" in result.stderr


def test_an_endpoint_that_goes_down_stops_the_run_and_a_rerun_finishes_it(demo_dataset, llm_env, tmp_path):
    with ChatServer(cite_first) as server:
        server.fail_after = 12
        down = invoke(*args(server, demo_dataset, "--threads", 1, "--no-save"), code=1)
        assert "gave up after 2 attempts" in down.output
        journals = list((llm_env / "answers").glob("*.journal.jsonl"))
        assert len(journals) == 1 and journals[0].read_text(encoding="utf-8").count("\n") == 12
        server.fail_after, before = None, server.count()
        invoke(*args(server, demo_dataset, "--threads", 1, "--no-save", "--out", tmp_path / "r.json"))
        assert server.count() - before == 30 - 12
    assert not list((llm_env / "answers").glob("*.journal.jsonl"))  # removed once the report is written
    assert len(AnswerReport.load(tmp_path / "r.json").questions) == 30


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_a_killed_run_resumes_without_asking_again(demo_dataset, llm_env, tmp_path):
    slow = lambda request: Reply(cite_first(request).content, delay=0.15)  # noqa: E731
    with ChatServer(slow) as server:
        command = [sys.executable, "-c", "from ragretrieval.cli import main; main()",
                   *args(server, demo_dataset, "--threads", 1, "--no-save")]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)
        journal = None
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and process.poll() is None:
                found = list((llm_env / "answers").glob("*.journal.jsonl"))
                if found and found[0].read_text(encoding="utf-8").count("\n") >= 6:
                    journal = found[0]
                    break
                time.sleep(0.05)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert journal is not None, "the run never journaled six answers"
        done = journal.read_text(encoding="utf-8").count("\n")
        before = server.count()
        invoke(*args(server, demo_dataset, "--threads", 4, "--no-save", "--out", tmp_path / "r.json"))
        asked = server.count() - before
        # an answer received but not yet journaled when the process died comes from the answer cache
        assert 30 - done - 1 <= asked <= 30 - done and before <= done + 1
        texts = [json.dumps(r, sort_keys=True) for r in server.requests]
        assert len(texts) - len(set(texts)) <= 1  # at most the request in flight at the kill was sent again
    assert len(AnswerReport.load(tmp_path / "r.json").questions) == 30


def test_a_stop_request_keeps_what_finished(demo_dataset, llm_env, tmp_path):
    dataset = load_dataset(demo_dataset)
    stop = StopToken()
    with ChatServer(cite_first) as server:
        settings = AnswerSettings(generator="openai:test-model", retrieval=EvalConfig(retriever="bm25"),
                                  generator_options=GeneratorOptions(base_url=server.url, max_retries=0))
        session = AnswerSession(dataset, settings, stop=stop)
        seen = []

        def on_answer(answered):
            seen.append(answered.id)
            if len(seen) == 5:
                stop.request("pause button")

        with pytest.raises(Stopped, match="pause button"):
            run_answers(session, threads=2, journal_path=tmp_path / "j.jsonl", stop=stop, on_answer=on_answer)
        kept = (tmp_path / "j.jsonl").read_text(encoding="utf-8").count("\n")
        assert 5 <= kept <= 7 and server.count() == kept
