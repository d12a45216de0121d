"""The conformance suite on the built-in stores: NumPy (the exact reference), FAISS flat (exact), HNSW and IVF (ANN)."""

import pytest

from ragretrieval.testing.store_conformance import StoreConformance


class TestNumpy(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "numpy"


class TestFaissFlat(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "faiss"


class TestFaissHnsw(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "faiss"

    @pytest.fixture
    def store_options(self):
        return {"kind": "hnsw", "ef_search": 64}


class TestFaissIvf(StoreConformance):
    @pytest.fixture
    def store_name(self):
        return "faiss"

    @pytest.fixture
    def store_options(self):
        return {"kind": "ivf", "nprobe": 8}

    @pytest.fixture
    def min_recall(self):
        return 0.6  # 8 of ~69 cells on 300 random vectors: IVF trades recall for speed, the point of the test
