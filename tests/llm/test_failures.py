"""Failures that must not look like success: real chat servers on 127.0.0.1 answering chatter, a body that
is not JSON, an HTML page with status 200, or good JSON; what the cache keeps; what a re-run does; the exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.testing.chat_server import ChatServer, Reply, document_in

from .conftest import good_reply
from .test_eval_and_judge import judge_reply

CHATTER = Reply("当然可以！这道菜非常好吃，祝你做饭愉快。")
NOT_JSON = Reply(raw=b'{"id": "chatcmpl-1", "choices": [', content_type="application/json")
HTML = Reply(raw=b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>",
             content_type="text/html")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def build(server, corpus, out, *extra):
    return run("dataset", "build", corpus, "--out", out, "--generator", "llm", "--max-docs", "4", "--base-url",
               server.url, "--model", "fake-model", "--max-retries", "1", "--no-progress", *extra)


@pytest.fixture
def small_dataset(tmp_path, demo_corpus):
    """Six documents, six file-name questions: six (question, chunk) pairs to judge at depth 1."""
    corpus = tmp_path / "six"
    corpus.mkdir()
    for path in sorted(demo_corpus.rglob("*.md"))[:6]:
        (corpus / path.name).write_bytes(path.read_bytes())
    dataset = tmp_path / "dataset"
    assert run("dataset", "build", corpus, "--out", dataset, "--no-progress").exit_code == 0
    return dataset


@pytest.fixture
def bm25_run(tmp_path, small_dataset):
    report = tmp_path / "run.json"
    result = run("eval", "--dataset", small_dataset, "--retriever", "bm25", "--k", "2", "--out", report,
                 "--no-save", "--no-progress")
    assert result.exit_code == 0, result.output
    return report


def judge(server, dataset, report, out, *extra):
    return run("judge", "chunks", "--dataset", dataset, "--runs", report, "--depth", "1", "--out", out, "--base-url",
               server.url, "--model", "fake-judge", "--max-retries", "1", "--no-progress", *extra)


def test_a_chattering_endpoint_fails_the_judge_and_is_not_cached(tmp_path, small_dataset, bm25_run, llm_env):
    out = tmp_path / "judgements.json"
    with ChatServer(lambda request: CHATTER) as chatter:
        first = judge(chatter, small_dataset, bm25_run, out)
    assert first.exit_code == 1
    assert "6 of 6 judgements got no usable answer (first reasons: " in first.stderr
    assert not out.exists()  # no file with 0 labels to score with

    with ChatServer(judge_reply) as good:  # same model, same prompts: the bad answers are not served from the cache
        second = judge(good, small_dataset, bm25_run, out)
        assert second.exit_code == 0, second.output
        assert len(good.requests) == 6 and "6 requests, 0 from cache" in second.output
    assert len(json.loads(out.read_text(encoding="utf-8"))["labels"]) == 6

    with ChatServer(lambda request: CHATTER) as other:  # a good answer is still keyed by its endpoint
        third = judge(other, small_dataset, bm25_run, out)
        assert len(other.requests) == 12 and third.exit_code == 1  # each asked, then asked to repair its JSON


@pytest.mark.parametrize("reply", [NOT_JSON, HTML], ids=["not-json", "html"])
def test_a_200_that_is_not_a_completion_is_retried_then_named(tmp_path, small_dataset, bm25_run, llm_env, reply):
    with ChatServer(lambda request: reply) as server:
        result = judge(server, small_dataset, bm25_run, tmp_path / "j.json")
        assert len(server.requests) >= 2  # asked again (--max-retries 1) before giving up
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert server.url.split("/v1")[0] in result.stderr
    assert ("<!DOCTYPE html>" if reply is HTML else '{"id": "chatcmpl-1", "choices": [') in result.stderr


def test_a_build_against_html_then_a_good_server(tmp_path, demo_corpus, llm_env):
    out = tmp_path / "dataset"
    with ChatServer(lambda request: HTML) as broken:
        first = build(broken, demo_corpus, out)
    assert first.exit_code == 1 and "Traceback" not in first.output and "<!DOCTYPE html>" in first.stderr
    assert not (out / "manifest.json").exists()
    with ChatServer(good_reply) as good:
        second = build(good, demo_corpus, out)
        assert second.exit_code == 0, second.output
        assert len(good.requests) == 4


def test_failed_documents_are_asked_again_on_the_next_run(tmp_path, demo_corpus, llm_env):
    out = tmp_path / "dataset"
    titles: list[str] = []

    def one_chatters(request):  # the first document asked about always chatters
        title = document_in(request).splitlines()[0]
        if not titles:
            titles.append(title)
        return CHATTER if title == titles[0] else good_reply(request)

    with ChatServer(one_chatters) as server:
        first = build(server, demo_corpus, out)
        assert first.exit_code == 0, first.output
        assert "warning: no questions for " in first.stderr
        assert "malformed JSON after one repair request" in first.stderr
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert len(manifest["builder"]["llm"]["failed_documents"]) == 1

        server.responder, before = good_reply, len(server.requests)  # the endpoint recovers
        second = build(server, demo_corpus, out, "--force")
        assert second.exit_code == 0, second.output
        assert len(server.requests) - before == 1  # the failed document only: the good answers are cached
    assert not json.loads((out / "manifest.json").read_text(encoding="utf-8"))["builder"]["llm"]["failed_documents"]


def interrupted_with_two_failures(tmp_path, corpus):
    """A build that journals two failed documents (chatter), then stops when the endpoint goes down."""
    out, titles = tmp_path / "dataset", []

    def chatter_then_down(request):
        title = document_in(request).splitlines()[0]
        if title not in titles:
            titles.append(title)
        return CHATTER if titles.index(title) < 2 else Reply(status=500)

    with ChatServer(chatter_then_down) as server:
        first = build(server, corpus, out, "--concurrency", "1")
    assert first.exit_code == 1 and "2 of 4 documents are done" in first.stderr
    return out


def test_a_resumed_build_asks_again_about_failed_documents(tmp_path, demo_corpus, llm_env):
    out = interrupted_with_two_failures(tmp_path, demo_corpus)
    with ChatServer(good_reply) as good:
        again = build(good, demo_corpus, out, "--concurrency", "1")
        assert again.exit_code == 0, again.output
        assert len(good.requests) == 4 and "asking again about 2 documents" in again.stderr
    assert not json.loads((out / "manifest.json").read_text(encoding="utf-8"))["builder"]["llm"]["failed_documents"]


def test_no_retry_failed_keeps_the_journaled_failures(tmp_path, demo_corpus, llm_env):
    out = interrupted_with_two_failures(tmp_path, demo_corpus)
    with ChatServer(good_reply) as good:
        kept = build(good, demo_corpus, out, "--concurrency", "1", "--no-retry-failed")
        assert kept.exit_code == 0, kept.output
        assert len(good.requests) == 2
    assert len(json.loads((out / "manifest.json").read_text(encoding="utf-8"))["builder"]["llm"]["failed_documents"]) == 2


def test_a_judgements_file_without_labels_is_refused(tmp_path, small_dataset, bm25_run, llm_env):
    out = tmp_path / "j.json"
    with ChatServer(judge_reply) as good:
        assert judge(good, small_dataset, bm25_run, out).exit_code == 0
    empty = json.loads(out.read_text(encoding="utf-8"))
    empty["failed"] = [{"question_id": label["question_id"], "chunk_id": label["chunk_id"], "reason": "no JSON"}
                       for label in empty["labels"]]
    empty["labels"] = []
    out.write_text(json.dumps(empty), encoding="utf-8")
    result = run("eval", "--dataset", small_dataset, "--retriever", "bm25", "--granularity", "chunk", "--judgements",
                 out, "--no-save", "--no-progress")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] + "\n" == f"Error: {out}: holds no labels (6 judgements failed); judge again before scoring " \
                            "chunks with it\n"
