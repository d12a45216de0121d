"""Exact search with a NumPy matrix product: the reference every other store is checked against."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..work.options import NoOptions
from .base import Records, SearchResult, check_queries, check_vectors

VECTORS_FILE = "vectors.npy"


def top_k(scores: np.ndarray, k: int) -> SearchResult:
    """Top-k columns of each row, best first; ties keep the lower position first."""
    n, m = scores.shape
    kk = min(k, m)
    indices = np.full((n, k), -1, dtype=np.int64)
    best = np.full((n, k), -np.inf, dtype=np.float32)
    if kk:
        part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk] if kk < m else np.tile(np.arange(m), (n, 1))
        part_scores = np.take_along_axis(scores, part, axis=1)
        order = np.lexsort((part, -part_scores), axis=1)
        indices[:, :kk] = np.take_along_axis(part, order, axis=1)
        best[:, :kk] = np.take_along_axis(part_scores, order, axis=1)
    return SearchResult(indices, best)


class NumpyStore:
    name = "numpy"
    Options = NoOptions  # exact search has nothing to tune
    exact = True
    search_modes = "exact"
    server_mode = None

    def __init__(self):
        self.records = Records()
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def add(self, vectors, ids, parent_ids, texts) -> None:
        vectors = check_vectors(vectors, self._vectors.shape[1] if len(self._vectors) else None)
        self.records.extend(ids, parent_ids, texts, len(vectors))
        self._vectors = vectors if not len(self._vectors) else np.vstack([self._vectors, vectors])

    def search(self, queries, k: int) -> SearchResult:
        queries = check_queries(queries, self._vectors.shape[1] if len(self._vectors) else None, k)
        if not len(self._vectors):
            return top_k(np.zeros((len(queries), 0), dtype=np.float32), k)
        return top_k(queries @ self._vectors.T, k)

    def save(self, folder) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        np.save(Path(folder) / VECTORS_FILE, self._vectors)
        self.records.save(folder, self.name, {})

    @classmethod
    def load(cls, folder) -> "NumpyStore":
        store = cls()
        store.records, _ = Records.load(folder, cls.name)
        store._vectors = np.load(Path(folder) / VECTORS_FILE)
        return store

    def index_sizes(self) -> tuple[int | None, int | None]:
        return int(self._vectors.nbytes), None

    def __len__(self) -> int:
        return len(self.records.ids)
