"""The conformance suite on LanceDB: a brute-force scan (exact, the default) and an IVF_HNSW_SQ index (ANN)."""

import pytest

from ragretrieval.testing.store_conformance import StoreConformance


class TestLanceDb(StoreConformance):
    # the one engine class that runs the shared refusals through EngineStore (the quickest engine here)
    @pytest.fixture
    def store_name(self):
        return "lancedb"


class TestLanceDbHnsw(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "lancedb"

    @pytest.fixture
    def store_options(self):
        return {"index": "ivf_hnsw_sq"}
