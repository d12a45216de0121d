"""The conformance suite on Qdrant local mode (on disk, exact brute force)."""

import pytest

from ragretrieval.testing.store_conformance import StoreConformance


class TestQdrantLocal(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "qdrant"


class TestQdrantLocalGivenPath(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "qdrant"

    @pytest.fixture
    def store_options(self, tmp_path):
        return {"path": str(tmp_path / "qdrant-data"), "collection": "my_chunks"}
