"""Every built-in retriever and embedder runs its plug-in kind's conformance suite (ragretrieval/testing/)."""

from __future__ import annotations

import pytest

from ragretrieval.retrieval import RetrieverSpec
from ragretrieval.testing.embedder_conformance import EmbedderConformance
from ragretrieval.testing.retriever_conformance import RetrieverConformance


class TestBM25(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return RetrieverSpec(name="bm25")


class TestBM25WithOptions(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return RetrieverSpec(name="bm25", options={"k1": 1.2, "b": 0.5})


class TestDenseHashingNumpy(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return RetrieverSpec(name="dense", options={"model": "hashing-512", "store": "numpy", "store_options": {}})

    @pytest.fixture
    def min_doc_recall(self):
        return 0.3  # feature hashing is not semantic


class TestHashingEmbedder(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "hashing-128"


@pytest.mark.model
class TestDefaultEmbedder(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "m3e-small"
