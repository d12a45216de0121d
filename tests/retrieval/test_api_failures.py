"""What goes wrong with an embeddings API, each a clear one-line error (or handled): a bad endpoint, a bad key,
wrong dimensions, fewer vectors than asked, rate limits, and inputs over the model's limit. Against real HTTP
servers on 127.0.0.1 (tests/llm/chat_server.py), through the real `openai` client."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.embedders import EmbedderError, get_embedder
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import KEY_ENV, free_port

SECRET = "sk-embed-NEVER-SHOW-ME-41f2"


def vectors_for(texts, dim=8, drop=0):
    """Deterministic unit vectors (one per text, minus `drop`), as an embeddings answer."""
    rows = []
    for text in texts[: len(texts) - drop]:
        v = np.random.default_rng(len(text)).normal(size=dim)
        rows.append((v / np.linalg.norm(v)).tolist())
    return {"object": "list", "model": "m", "usage": {"prompt_tokens": sum(map(len, texts)), "total_tokens": 0},
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(rows)]}


def embedder_for(server, **settings):
    return get_embedder("openai:test-model", settings={"base_url": server.url, "api_key_env": KEY_ENV,
                                                        "max_retries": 1, **settings})


def test_fewer_vectors_than_asked_is_one_clear_error():
    with ChatServer(routes={"/embeddings": lambda r: Reply(payload=vectors_for(r["input"], drop=1))}) as server:
        with pytest.raises(EmbedderError, match=r"\(model test-model\): returned 2 vectors for 3 inputs$"):
            embedder_for(server).fingerprint()  # the probe (three texts) is the first request


def test_wrong_dimensions_is_one_clear_error():
    with ChatServer(routes={"/embeddings": lambda r: Reply(payload=vectors_for(r["input"], dim=8))}) as server:
        with pytest.raises(EmbedderError, match="asked for 16 dimensions, the endpoint returned 8$"):
            embedder_for(server, dimensions=16).fingerprint()
        assert server.requests[0]["dimensions"] == 16


def test_a_bad_key_is_not_retried_and_never_shown(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)

    def refuse(request):
        return Reply(status=401, message=f"Incorrect API key provided: {SECRET}")

    with ChatServer(routes={"/embeddings": refuse}) as server:
        with pytest.raises(EmbedderError) as error:
            embedder_for(server).fingerprint()
        assert len(server.requests) == 1 and server.authorizations[0] == f"Bearer {SECRET}"
    message = str(error.value)
    assert "HTTP 401" in message and "not retried" in message and SECRET not in message and "***" in message


def test_no_key_names_the_variable(monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with ChatServer(routes={"/embeddings": lambda r: Reply(payload=vectors_for(r["input"]))}) as server:
        with pytest.raises(EmbedderError, match=f"set the environment variable {KEY_ENV}"):
            embedder_for(server).fingerprint()


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_a_bad_endpoint_is_one_line_on_the_command_line(demo_dataset):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--model", "openai:x", "--no-save",
                                       "--embed-base-url", url, "--embed-api-key-env", KEY_ENV, "--no-progress"])
    assert result.exit_code == 1
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and f"{url} (model x): gave up after 5 attempts" in error[0], result.output


def test_rate_limits_are_retried_honouring_retry_after():
    asked = []

    def limited(request):
        asked.append(request)
        if len(asked) == 1:
            return Reply(status=429, message="slow down", headers={"Retry-After": "0.2"})
        return Reply(payload=vectors_for(request["input"]))

    with ChatServer(routes={"/embeddings": limited}) as server:
        embedder = embedder_for(server)
        vectors = embedder.embed(["a", "bb"])
    assert vectors.shape == (2, 8) and len(asked) == 2 and asked[0] == asked[1]  # 429, then the same again


def test_inputs_over_the_limit_are_cut_with_a_count_not_a_crash():
    def limited(request):
        if any(len(text) > 40 for text in request["input"]):
            return Reply(status=400, message="This model's maximum context length is 16 tokens, however you "
                                             "requested 90 tokens")
        return Reply(payload=vectors_for(request["input"]))

    with ChatServer(routes={"/embeddings": limited}) as server:
        embedder = embedder_for(server, batch_size=8)
        texts = ["short", "x" * 100, "also short", "y" * 50] + [f"text {i}" for i in range(6)]
        vectors = embedder.embed(texts)
    assert vectors.shape == (10, 8) and embedder.usage.cut_inputs == 2
    assert np.allclose(vectors[0], vectors_for(["short"])["data"][0]["embedding"], atol=1e-6)


def test_a_bad_url_and_a_bad_setting_are_named():
    with pytest.raises(EmbedderError, match="'ftp://x' is not an http:// or https:// URL"):
        get_embedder("openai:m", settings={"base_url": "ftp://x"})
    with pytest.raises(EmbedderError, match="embedding setting 'concurrency'"):
        get_embedder("openai:m", settings={"concurrency": 0})
