"""The conformance suite on Chroma: embedded persistent mode, and a real `chroma run` server on 127.0.0.1.

Chroma is HNSW only (`exact` is False), but at the adapter's search ef it must rank the demo dataset exactly like
the NumPy store: `exact_on_demo` asks the end-to-end test for equality of every metric, not just recall.
"""

import itertools

import pytest

from ragretrieval.testing.store_conformance import StoreConformance

_collections = itertools.count()


class TestChromaEmbedded(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "chroma"

    @pytest.fixture
    def exact_on_demo(self):
        return True

    @pytest.fixture
    def min_recall(self):
        return 0.99  # 300 vectors at search ef 1000: HNSW visits them all


class TestChromaServer(TestChromaEmbedded):
    @pytest.fixture
    def store_options(self, chroma_server):
        host, port = chroma_server
        return {"host": host, "port": port, "collection": f"conformance_{next(_collections)}"}
