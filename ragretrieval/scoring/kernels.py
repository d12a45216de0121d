"""How metrics are computed: every metric at every cutoff from the ranks of the judged documents.

`ranking.judged_ranks` gives, for each judgement (query, doc, label), the rank at which the run retrieved that doc
(0 = not retrieved). Every metric of `metrics.py` is then a per-query sum over judged docs ranked within the cutoff
(relevant hits, gains, precision at each relevant rank) or a rank itself (the first relevant one). One `np.bincount`
per kind of sum puts each judgement in its (query, cutoff bucket) cell; a cumulative sum across the buckets gives
the sum for every cutoff at once. The work grows with the number of judgements, not with queries x depth.
Formulas: see `metrics.py`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .metrics import Metric
from .types import THREADS

_WHOLE_RANKING = np.iinfo(np.int64).max  # the bucket edge of metrics without a cutoff
_EXACT_INTS = 2**53  # every integer up to this is a float
GAIN_FAMILIES = frozenset({"ndcg", "ndcg_exp"})  # they read the judged docs with a gain; the others, the relevant ones
PARALLEL_JUDGEMENTS = 100_000  # judgements from which the two kinds of metric are computed on two threads


def _edge(k: int) -> int:
    """The bucket edge of cutoff k: a cutoff past int64 (a valid Metric) covers the whole ranking, so it is capped
    to fit the int64 edges (precision@k still divides by the real k)."""
    return min(k, _WHOLE_RANKING)


def _required(k: int | None, family: str) -> int:
    """The cutoff of a family that cannot go without one (metrics.py marks its k "required")."""
    if k is None:
        raise ValueError(f"{family} needs a cutoff, e.g. {family}@10")
    return k


def _per_cutoff(values: np.ndarray, k: int) -> np.ndarray:
    """values / k (the values: counts), rounded once, for any cutoff: past 2**53 a float cannot hold every integer
    (and past about 1.8e308 none), so each distinct count is divided by k as Python ints, whose true division rounds
    correctly (`precision@10**400` is 0.0, `precision@2**1024` with one hit 2**-1024, a subnormal)."""
    if k <= _EXACT_INTS:
        return values / k
    distinct, where = np.unique(values, return_inverse=True)
    return np.array([int(count) / k for count in distinct.tolist()], dtype=np.float64)[where.ravel()]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (the numerator is then 0 too, for every use here)."""
    return numerator / np.where(denominator > 0, denominator, 1.0)


def gains(labels: np.ndarray, exponential: bool) -> np.ndarray:
    positive = np.maximum(labels, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exponential else positive


def _sorted_within_rows(rows: np.ndarray, values: np.ndarray, descending: bool = False) -> np.ndarray:
    """Order that sorts items by row, then by value (integers), ties in their given order."""
    signed = -values if descending else values
    low, high = int(signed.min(initial=0)), int(signed.max(initial=0))
    span = high - low + 1
    if len(rows) and int(rows.max()) < (1 << 62) // span:  # (row, value) packed into one integer: one fast sort
        return np.argsort(rows * span + (signed - low), kind="stable")
    return np.lexsort((signed, rows))


def _row_starts(sorted_rows: np.ndarray) -> np.ndarray:
    """True for the first item of each row, for items sorted by row."""
    start = np.ones(len(sorted_rows), dtype=bool)
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=start[1:])
    return start


def _position_in_row(sorted_rows: np.ndarray) -> np.ndarray:
    """1-based position of each item within its row, for items sorted by row."""
    index = np.arange(len(sorted_rows))
    return index - np.maximum.accumulate(np.where(_row_starts(sorted_rows), index, 0)) + 1


class Kernel:
    """Per-query sums for every cutoff, computed lazily and once each, shared by all metrics.

    `rows`, `labels` and `ranks` describe the judgements: query index, label and retrieved rank (0 = not retrieved).
    Three sets of judged docs feed the sums: the relevant retrieved ones (`hits`), the retrieved ones with a gain
    (`gainful`) and all those with a gain, at their rank in the ideal ranking (`ideal`).
    """

    def __init__(self, rows, labels, ranks, n_queries: int, rel_level: int, cutoffs):
        self.n_queries = n_queries
        self.edges = np.array(sorted({_edge(k) for k in cutoffs if k is not None}) + [_WHOLE_RANKING], dtype=np.int64)
        self.rows, self.labels, self.ranks = rows, labels, ranks
        self.relevant = labels >= rel_level
        self.n_relevant = np.bincount(rows, weights=self.relevant, minlength=n_queries)
        self._cache: dict = {}

    def _memo(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def _items(self, name: str):
        """(rows, ranks, labels, cell of each item in a cutoffs x queries table) of one set of judged docs."""

        def build():
            if name == "ideal":
                chosen = np.flatnonzero(self.labels > 0)
                chosen = chosen[_sorted_within_rows(self.rows[chosen], self.labels[chosen], descending=True)]
                rows = self.rows[chosen]
                ranks = _position_in_row(rows)
            else:
                wanted = self.relevant if name == "hits" else self.labels > 0
                chosen = np.flatnonzero(wanted & (self.ranks > 0))
                chosen = chosen[_sorted_within_rows(self.rows[chosen], self.ranks[chosen])]
                rows, ranks = self.rows[chosen], self.ranks[chosen]
            bucket = np.searchsorted(self.edges, np.arange(int(ranks.max(initial=0)) + 1))
            return rows, ranks, self.labels[chosen], bucket[ranks] * self.n_queries + rows

        return self._memo(("items", name), build)

    def _by_cutoff(self, name: str, weights=None) -> np.ndarray:
        """(cutoffs x n_queries) sums of `weights` (default 1) over the items of a set ranked within each cutoff."""
        cells = self._items(name)[3]
        sums = np.bincount(cells, weights=weights, minlength=len(self.edges) * self.n_queries)
        table = sums.reshape(len(self.edges), self.n_queries)
        for i in range(1, len(table)):  # row by row: np.cumsum(axis=0) is several times slower here
            table[i] += table[i - 1]
        return table

    def _at(self, table: np.ndarray, k: int | None) -> np.ndarray:
        row = len(self.edges) - 1 if k is None else int(np.searchsorted(self.edges, _edge(k)))
        return table[row]

    def hits(self, k):
        """Relevant docs within the top k."""
        return self._at(self._memo("hits", lambda: self._by_cutoff("hits", np.ones(len(self._items("hits")[0])))), k)

    def precision_sum(self, k):
        """Sum of precision@i over the ranks i <= k of relevant docs (the numerator of AP)."""

        def build():
            rows, ranks = self._items("hits")[:2]
            return self._by_cutoff("hits", _position_in_row(rows) / ranks)

        return self._at(self._memo("precision_sum", build), k)

    def dcg(self, k, exponential: bool, ideal: bool = False):
        """DCG@k of the run or, with `ideal`, of the judged docs sorted by label (the best ranking there is)."""

        def build():
            name = "ideal" if ideal else "gainful"
            _, ranks, labels, _ = self._items(name)
            return self._by_cutoff(name, gains(labels, exponential) / np.log2(ranks + 1.0))

        return self._at(self._memo(("dcg", exponential, ideal), build), k)

    @property
    def first_relevant_rank(self) -> np.ndarray:
        """Rank of the first relevant doc per query; infinity when none was retrieved."""

        def build():
            rows, ranks = self._items("hits")[:2]
            leading = _row_starts(rows)  # items come by query, then rank
            first = np.full(self.n_queries, np.inf)
            first[rows[leading]] = ranks[leading]
            return first

        return self._memo("first", build)

    def compute(self, metric: Metric) -> np.ndarray:
        k, family = metric.k, metric.family
        if family == "precision":
            return _per_cutoff(self.hits(k), _required(k, family))
        if family == "recall":
            return _ratio(self.hits(k), self.n_relevant)
        if family == "hit_rate":
            return (self.hits(k) > 0).astype(np.float64)
        if family == "mrr":
            first = self.first_relevant_rank
            return np.where(first <= (np.inf if k is None else k), 1.0 / first, 0.0)
        if family == "f1":
            p, r = _per_cutoff(self.hits(k), _required(k, family)), _ratio(self.hits(k), self.n_relevant)
            return _ratio(2 * p * r, p + r)
        if family in ("ndcg", "ndcg_exp"):
            exponential = family == "ndcg_exp"
            return _ratio(self.dcg(k, exponential), self.dcg(k, exponential, ideal=True))
        if family == "map":
            return _ratio(self.precision_sum(k), self.n_relevant)
        if family == "r_precision":
            rows, ranks = self._items("hits")[:2]
            within = ranks <= self.n_relevant[rows]
            return _ratio(np.bincount(rows[within], minlength=self.n_queries), self.n_relevant)
        raise AssertionError(f"no kernel for {metric}")


def compute_all(rows, labels, ranks, n_queries: int, rel_level: int, metrics) -> dict[str, np.ndarray]:
    """Per-query values of each metric, by name. The metrics that read gains (`GAIN_FAMILIES`) and the others share
    no sums, so with at least `PARALLEL_JUDGEMENTS` judgements each kind gets its own `Kernel` and its own thread
    (NumPy releases the GIL in its loops); the values are the same either way."""
    cutoffs = [m.k for m in metrics]

    def values(chosen) -> dict[str, np.ndarray]:
        kernel = Kernel(rows, labels, ranks, n_queries, rel_level, cutoffs)
        return {m.name: kernel.compute(m) for m in chosen}

    gain = [m for m in metrics if m.family in GAIN_FAMILIES]
    other = [m for m in metrics if m.family not in GAIN_FAMILIES]
    if THREADS == 1 or len(rows) < PARALLEL_JUDGEMENTS or not gain or not other:
        return values(metrics)
    with ThreadPoolExecutor(1) as pool:
        gained = pool.submit(values, gain)
        computed = values(other)
        return computed | gained.result()
