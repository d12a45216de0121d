"""The conformance suite on Milvus Lite: exact (FLAT, the default) and approximate (IVF_FLAT)."""

import pytest

from ragretrieval.testing.store_conformance import StoreConformance


class TestMilvusLite(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "milvus"


class TestMilvusLiteIvf(StoreConformance):
    shared_refusals_checked_elsewhere = True  # on TestLanceDb and the in-process stores

    @pytest.fixture
    def store_name(self):
        return "milvus"

    @pytest.fixture
    def store_options(self, tmp_path):
        return {"path": str(tmp_path / "milvus-data"), "index": "IVF_FLAT", "nlist": 16, "nprobe": 8}

    @pytest.fixture
    def min_recall(self):
        return 0.6  # 8 of 16 cells
