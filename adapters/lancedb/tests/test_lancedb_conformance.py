"""The conformance suite on LanceDB: a brute-force scan (exact, the default) and an IVF_HNSW_SQ index (ANN)."""

import pytest

from ragretrieval.testing.store_conformance import StoreConformance


class TestLanceDb(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "lancedb"


class TestLanceDbHnsw(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "lancedb"

    @pytest.fixture
    def store_options(self):
        return {"index": "ivf_hnsw_sq"}
