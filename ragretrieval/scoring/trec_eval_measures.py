"""trec_eval's measures, per query, from the rank of every judged doc (`trec_eval.py` names, parses and prints them).

Each function takes a `Judged` (the ranks of the judged docs, the length of each ranking, the relevance level) and a
measure's parameters, and gives one float64 array per printed name, one value per qrels query. Values follow
trec_eval 10.0's C code step by step where the order of floating-point operations shows in the last bits (sums run
in rank order, each cutoff summed on its own), so that printing them with four decimals gives trec_eval's digits.
The measures our own metrics already define (P, recall, success, map, map_cut, ndcg, ndcg_cut, recip_rank, Rprec)
are computed by the same kernels as `score()` (`kernels.compute_all`), one cutoff at a time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .trec_eval_gains import Gains

from .kernels import compute_all
from .metrics import Metric
from .row_order import by_row_and_rank as _by_row_and_rank
from .types import Qrels

MIN_GEO_MEAN = 0.00001  # trec_eval's floor for geometric means (gm_map, gm_bpref)


class Judged:
    """The ranks of a qrels' judged docs in a run (0: not retrieved), each ranking's length and the relevance
    level, with the per-query counts every measure reads."""

    def __init__(self, qrels: Qrels, ranks: np.ndarray, lengths: np.ndarray, level: int):
        self.qrels, self.ranks, self.level = qrels, ranks, level
        self.n = qrels.n_queries
        rows, labels = qrels.rows, qrels.labels
        self.rows, self.labels = rows, labels
        relevant = labels >= level
        nonrelevant = (labels >= 0) & ~relevant  # judged, not relevant (labels below 0: unjudged, in the pool)
        self.num_ret = lengths.astype(np.int64)
        self.num_rel = np.bincount(rows, weights=relevant, minlength=self.n).astype(np.int64)
        self.num_nonrel = np.bincount(rows, weights=nonrelevant, minlength=self.n).astype(np.int64)
        self.hit_rows, self.hit_ranks = _by_row_and_rank(rows, ranks, relevant & (ranks > 0))
        self.miss_rows, self.miss_ranks = _by_row_and_rank(rows, ranks, nonrelevant & (ranks > 0))
        self.pool_rows, self.pool_ranks = _by_row_and_rank(rows, ranks, (labels < 0) & (ranks > 0))  # unjudged
        self.num_rel_ret = np.bincount(self.hit_rows, minlength=self.n)
        self.nth = _position_in_row(self.hit_rows)  # rel_so_far at each relevant retrieved doc
        self._gains: Gains | None = None

    def gains(self):
        """The running gains along each ranking (`trec_eval_gains.Gains`), built once."""
        if self._gains is None:
            from .trec_eval_gains import Gains  # the module builds on this one

            self._gains = Gains(self)
        return self._gains

    def metric(self, family: str, k: int | None = None) -> np.ndarray:
        """One of our metrics, alone in its kernel: its sums run in rank order, as trec_eval's loops add."""
        metric = Metric(family, k)
        return compute_all(self.rows, self.labels, self.ranks, self.n, self.level, [metric])[metric.name]

    def hits_within(self, cutoff: np.ndarray) -> np.ndarray:
        """Relevant docs retrieved at ranks <= cutoff[q], per query."""
        within = self.hit_ranks <= cutoff[self.hit_rows]
        return np.bincount(self.hit_rows[within], minlength=self.n)

    def interpolated(self) -> np.ndarray:
        """At each relevant retrieved doc j (of its query's m, in rank order), the best precision at or after it:
        max over j' >= j of j' / rank(j') (trec_eval's Int_Prec)."""
        precision = self.nth / self.hit_ranks
        return _suffix_max(self.hit_rows, precision)


def _above(rows: np.ndarray, ranks: np.ndarray, other_rows: np.ndarray, other_ranks: np.ndarray) -> np.ndarray:
    """For each (row, rank), how many of the other items (sorted by row and rank) share its row at a lower rank."""
    scale = int(max(ranks.max(initial=0), other_ranks.max(initial=0))) + 1
    keys = other_rows * scale + other_ranks
    return np.searchsorted(keys, rows * scale + ranks) - np.searchsorted(keys, rows * scale)


def _position_in_row(sorted_rows: np.ndarray) -> np.ndarray:
    """1-based position of each item within its row, for items sorted by row."""
    index = np.arange(len(sorted_rows))
    start = np.ones(len(sorted_rows), bool)
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=start[1:])
    return index - np.maximum.accumulate(np.where(start, index, 0)) + 1


def _suffix_max(sorted_rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """max(values[j:]) within each row, for items sorted by row. Exact: values are replaced by their rank among the
    distinct values, offset by row, so one running maximum over the reversed items never crosses a row."""
    if len(values) == 0:
        return values
    distinct, rank = np.unique(values, return_inverse=True)
    rank = rank.ravel()
    keys = (sorted_rows.max() - sorted_rows) * len(distinct) + rank  # rows count up once reversed
    best = np.maximum.accumulate(keys[::-1])[::-1] - (sorted_rows.max() - sorted_rows) * len(distinct)
    return distinct[best]


def _round_half_away(values: np.ndarray) -> np.ndarray:
    """C's lround on non-negative doubles: halves round up."""
    floor = np.floor(values)
    return (floor + (values - floor >= 0.5)).astype(np.int64)


def _first_of_row(judged: Judged, values: np.ndarray) -> np.ndarray:
    """values at each query's first relevant retrieved doc (0 where it has none)."""
    out = np.zeros(judged.n)
    first = judged.nth == 1
    out[judged.hit_rows[first]] = values[first]
    return out


def _iprec(judged: Judged, fractions) -> list[np.ndarray]:
    """Interpolated precision at each recall fraction: at the doc where lround(fraction x R) relevant docs are
    retrieved, the best precision from there on; the best overall when that is 0 docs; 0 beyond the retrieved."""
    best = judged.interpolated()
    rows, nth = judged.hit_rows, judged.nth
    out = []
    for fraction in fractions:
        cutoff = _round_half_away(fraction * judged.num_rel)
        values = _first_of_row(judged, best) * (cutoff == 0)
        at = nth == cutoff[rows]
        values[rows[at]] = best[at]
        out.append(values)
    return out


# ------------------------------------------------------------------------------------------------------ measures
def iprec_at_recall(judged: Judged, fractions) -> list[np.ndarray]:
    return _iprec(judged, fractions)


def eleven_point_average(judged: Judged, fractions) -> list[np.ndarray]:
    """11pt_avg: the mean of the interpolated precisions, added from the last fraction to the first."""
    total = np.zeros(judged.n)
    for values in reversed(_iprec(judged, fractions)):
        total += values
    return [total / len(fractions)]


def bpref(judged: Judged) -> np.ndarray:
    """For each relevant retrieved doc, 1 - min(n, R) / min(N, R), n the judged nonrelevant docs above it, N all
    judged nonrelevant docs (1 when n = 0); summed in rank order, over R."""
    rows, ranks = judged.hit_rows, judged.hit_ranks
    above = _above(rows, ranks, judged.miss_rows, judged.miss_ranks)
    num_rel, num_nonrel = judged.num_rel[rows], judged.num_nonrel[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(above > 0, 1.0 - np.minimum(above, num_rel) / np.minimum(num_nonrel, num_rel), 1.0)
    total = np.bincount(rows, weights=terms, minlength=judged.n)
    return np.where(judged.num_rel > 0, total / np.maximum(judged.num_rel, 1), total)


INFAP_EPSILON = 0.00001


def inferred_ap(judged: Judged) -> np.ndarray:
    """infAP: at each relevant retrieved doc at 0-based place j > 0, 1/(j+1) + j/(j+1) x (judged or pooled docs
    above)/j x (relevant above + e)/(relevant and nonrelevant above + 2e); 1 at place 0; summed, over R."""
    rows, ranks, nth = judged.hit_rows, judged.hit_ranks, judged.nth
    nonrel = _above(rows, ranks, judged.miss_rows, judged.miss_ranks)
    pooled = _above(rows, ranks, judged.pool_rows, judged.pool_ranks)
    j = (ranks - 1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((nth - 1 + nonrel + pooled) / j)
                 * ((nth - 1 + INFAP_EPSILON) / ((nth - 1 + nonrel) + 2 * INFAP_EPSILON)))
    terms = np.where(ranks == 1, 1.0, terms)
    total = np.bincount(rows, weights=terms, minlength=judged.n)
    return np.where(judged.num_rel > 0, total / np.maximum(judged.num_rel, 1), total)


def binary_g(judged: Judged) -> np.ndarray:
    """binG: for the j-th relevant retrieved doc at rank r, 1 / log2(2 + r - j); summed, over R."""
    terms = 1.0 / np.log2((2 + judged.hit_ranks - judged.nth).astype(np.float64))
    total = np.bincount(judged.hit_rows, weights=terms, minlength=judged.n)
    return np.where(judged.num_rel_ret > 0, total / np.maximum(judged.num_rel, 1), 0.0)


def unjudged(judged: Judged, cutoffs) -> list[np.ndarray]:
    """unj: the docs in the top k that no label (0 or above) judges, over k."""
    seen_rows = np.concatenate([judged.hit_rows, judged.miss_rows])
    seen_ranks = np.concatenate([judged.hit_ranks, judged.miss_ranks])
    out = []
    for k in cutoffs:
        within = seen_ranks <= k
        top = np.minimum(judged.num_ret, k)
        out.append((top - np.bincount(seen_rows[within], minlength=judged.n)) / k)
    return out


def geometric(values: np.ndarray) -> np.ndarray:
    """log(max(value, MIN_GEO_MEAN)): what trec_eval averages for gm_map and gm_bpref (the mean is then exp'd)."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def rprec_mult(judged: Judged, fractions) -> list[np.ndarray]:
    """Precision at (long) (fraction x R + 0.9) docs, 0 at 0 docs."""
    out = []
    for fraction in fractions:
        cutoff = (fraction * judged.num_rel + 0.9).astype(np.int64)
        hits = judged.hits_within(cutoff)
        out.append(np.where(cutoff > 0, hits / np.maximum(cutoff, 1), 0.0))
    return out


def relative_precision(judged: Judged, cutoffs) -> list[np.ndarray]:
    """relative_P: relevant docs in the top k over min(k, R); 0 when R = 0."""
    out = []
    for k in cutoffs:
        hits = judged.hits_within(np.full(judged.n, min(k, np.iinfo(np.int64).max)))
        denominator = np.minimum(judged.num_rel, k)
        out.append(np.where(judged.num_rel > 0, hits / np.maximum(denominator, 1), 0.0))
    return out


def utility(judged: Judged, coefficients, in_run: np.ndarray) -> np.ndarray:
    """p1 rel_ret + p2 nonrel_ret + p3 rel_nonret + p4 nonrel_nonret (no collection size: -N is not read); 0 for a
    query the run lacks, as trec_eval's -c sets it."""
    p1, p2, p3, p4 = coefficients
    a, n, r = judged.num_rel_ret, judged.num_ret, judged.num_rel
    values = p1 * a + p2 * (n - a) + p3 * (r - a) + p4 * (0 + a - n - r)
    return np.where(in_run, values, 0.0)


def set_measures(judged: Judged, name: str, beta: float = 1.0) -> np.ndarray:
    """The unranked measures over all docs retrieved: set_P, set_relative_P, set_recall, set_map, set_F."""
    a, n, r = judged.num_rel_ret.astype(np.float64), judged.num_ret.astype(np.float64), judged.num_rel.astype(
        np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "set_P":
            return np.where(n > 0, a / n, 0.0)
        if name == "set_relative_P":
            return np.where((n > 0) & (r > 0), a / np.minimum(n, r), 0.0)
        if name == "set_recall":
            return np.where(r > 0, a / r, 0.0)
        if name == "set_map":
            return np.where((n > 0) & (r > 0), (a * a) / (n * r), 0.0)
        precision, recall = a / n, a / r
        return np.where(a > 0, (beta + 1.0) * precision * recall / (beta * precision + recall), 0.0)


def num_nonrel_judged_ret(judged: Judged) -> np.ndarray:
    return np.bincount(judged.miss_rows, minlength=judged.n).astype(np.float64)


def geometric_mean(values: np.ndarray) -> float:
    """exp of the mean of logs (`geometric`), summed in query order as trec_eval sums."""
    return math.exp(float(np.add.accumulate(values)[-1]) / len(values)) if len(values) else 0.0
