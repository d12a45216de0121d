"""How metrics are computed: every metric at every cutoff from one labels matrix, with cumulative sums.

Input for a block of queries: `labels`, a (n_queries x depth) matrix of the judged label of each retrieved doc in
rank order (0 for unjudged docs and empty slots), `n_relevant` (R per query) and the ideal DCG per query for each
cutoff that needs one. No loop over queries: one loop over metrics, each a few array operations.
Formulas: see `metrics.py`.
"""

from __future__ import annotations

import numpy as np

from .metrics import Metric


def _at(matrix: np.ndarray, k: int) -> np.ndarray:
    """Column k-1 of a cumulative matrix, or its last column when the ranking is shorter than k."""
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0])
    return matrix[:, min(k, matrix.shape[1]) - 1].astype(np.float64)


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def gains(labels: np.ndarray, exponential: bool) -> np.ndarray:
    positive = np.maximum(labels, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exponential else positive


def discounts(depth: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))


class BlockKernel:
    """Cumulative sums for one block, computed lazily and once each, shared by all metrics."""

    def __init__(self, labels: np.ndarray, n_relevant: np.ndarray, rel_level: int, ideal_dcg: dict):
        self.labels = labels
        self.depth = labels.shape[1]
        self.n_relevant = n_relevant.astype(np.float64)
        self.relevant = labels >= rel_level
        self.ideal_dcg = ideal_dcg  # (exponential, k or None) -> per-query ideal DCG
        self._cache: dict = {}

    def _memo(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def hits(self) -> np.ndarray:
        """hits[:, i] = relevant docs in the top i+1."""
        return self._memo("hits", lambda: np.cumsum(self.relevant, axis=1, dtype=np.int32))

    @property
    def precision_sum(self) -> np.ndarray:
        """precision_sum[:, i] = sum of precision@j over relevant ranks j <= i+1 (the numerator of AP)."""

        def build():
            ranks = np.arange(1, self.depth + 1, dtype=np.float64)
            return np.cumsum(np.where(self.relevant, self.hits / ranks, 0.0), axis=1)

        return self._memo("precision_sum", build)

    def dcg(self, exponential: bool) -> np.ndarray:
        return self._memo(
            ("dcg", exponential),
            lambda: np.cumsum(gains(self.labels, exponential) * discounts(self.depth), axis=1),
        )

    @property
    def first_relevant_rank(self) -> np.ndarray:
        """1-based rank of the first relevant doc; infinity when there is none."""

        def build():
            if self.depth == 0:
                return np.full(self.labels.shape[0], np.inf)
            first = np.argmax(self.relevant, axis=1) + 1.0
            return np.where(self.relevant.any(axis=1), first, np.inf)

        return self._memo("first", build)

    def compute(self, metric: Metric) -> np.ndarray:
        k = self.depth if metric.k is None else metric.k
        family = metric.family
        if family == "precision":
            return _at(self.hits, k) / k
        if family == "recall":
            return _safe_divide(_at(self.hits, k), self.n_relevant)
        if family == "hit_rate":
            return (_at(self.hits, k) > 0).astype(np.float64)
        if family == "mrr":
            first = self.first_relevant_rank
            return np.where(first <= k, 1.0 / first, 0.0)
        if family == "f1":
            p = _at(self.hits, k) / k
            r = _safe_divide(_at(self.hits, k), self.n_relevant)
            return _safe_divide(2 * p * r, p + r)
        if family in ("ndcg", "ndcg_exp"):
            exponential = family == "ndcg_exp"
            return _safe_divide(_at(self.dcg(exponential), k), self.ideal_dcg[(exponential, metric.k)])
        if family == "map":
            return _safe_divide(_at(self.precision_sum, k), self.n_relevant)
        if family == "r_precision":
            r = self.n_relevant.astype(np.int64)
            if self.depth == 0:
                return np.zeros(len(r))
            cols = np.clip(r, 1, self.depth) - 1
            hits_at_r = self.hits[np.arange(len(r)), cols]
            return _safe_divide(hits_at_r, self.n_relevant)
        raise AssertionError(f"no kernel for {metric}")


def ideal_dcg(rows: np.ndarray, labels: np.ndarray, n_queries: int, cutoffs, exponential: bool) -> dict:
    """Ideal DCG per query for each cutoff (None = all judged docs), from judged (row, label) pairs.

    `rows` must be sorted; within a row, labels are sorted here by gain, descending.
    """
    order = np.lexsort((-labels, rows))
    rows, labels = rows[order], labels[order]
    starts = np.searchsorted(rows, rows, side="left")
    position = np.arange(len(rows)) - starts  # 0-based rank in the ideal ranking
    contribution = gains(labels, exponential) / np.log2(position + 2.0)
    out = {}
    for k in cutoffs:
        weights = contribution if k is None else np.where(position < k, contribution, 0.0)
        out[(exponential, k)] = np.bincount(rows, weights=weights, minlength=n_queries)
    return out
