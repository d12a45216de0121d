"""trec_eval's measures that follow running sums along a ranking: the gain-based G, ndcg_rel and Rndcg, rank-biased
precision (rbp, rbp_resid), and relstring, per query, from a `trec_eval_measures.Judged`.

trec_eval computes each as one loop over the ranking, adding as it goes; the value read at a given rank is a partial
sum. To give the same doubles, every partial sum here is added in that same order: `_running_sums` lays each query's
terms along one row of a zero-padded matrix and sums along the rows (NumPy adds along an axis one term after
another), and sums over every rank (rbp_resid) add exact zeros where trec_eval adds nothing. Gains are trec_eval's
defaults: a doc's gain is its label, 0 below 1 (ndcg's gain parameters are not taken).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .row_order import by_row_and_rank as _by_row_and_rank

if TYPE_CHECKING:  # trec_eval_measures.Judged builds its gains with this module
    from .trec_eval_measures import Judged

_CELLS = 1 << 22  # matrix cells per chunk of `_running_sums`


def _running_sums(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For items sorted by row, the sum of each row's values up to and including the item, added in order."""
    out = np.zeros(len(values))
    if len(values) == 0:
        return out
    start = np.ones(len(rows), bool)
    np.not_equal(rows[1:], rows[:-1], out=start[1:])
    group = np.cumsum(start) - 1
    firsts = np.flatnonzero(start)
    lengths = np.diff(np.append(firsts, len(rows)))
    column = np.arange(len(rows)) - firsts[group]
    by_length = np.argsort(lengths, kind="stable")
    at = 0
    while at < len(by_length):  # groups of similar lengths share a matrix
        width = int(lengths[by_length[at]])
        count = max(1, _CELLS // max(width, 1))
        chosen = by_length[at : at + count]
        width = int(lengths[chosen].max())
        local = np.full(len(firsts), -1)
        local[chosen] = np.arange(len(chosen))
        items = np.flatnonzero(local[group] >= 0)
        matrix = np.zeros((len(chosen), width))
        matrix[local[group[items]], column[items]] = values[items]
        np.cumsum(matrix, axis=1, out=matrix)
        out[items] = matrix[local[group[items]], column[items]]
        at += count
    return out


class Gains:
    """The default gains of a `Judged`: each retrieved doc with a label above 0 (in rank order, with its running DCG)
    and each query's ideal ranking (its labels above 0, highest first, with their running ideal DCG)."""

    def __init__(self, judged: Judged):
        self.judged = judged
        labels = judged.labels
        positive = labels > 0
        self.rows, self.ranks = _by_row_and_rank(judged.rows, judged.ranks, positive & (judged.ranks > 0))
        self.gain = self._labels_of(self.rows, self.ranks)
        self.dcg = _running_sums(self.rows, self.gain / np.log2(self.ranks + 1.0))  # at each item, inclusive
        chosen = np.flatnonzero(positive)
        order = np.lexsort((-labels[chosen], judged.rows[chosen]))
        self.ideal_rows, self.ideal_gain = judged.rows[chosen][order], labels[chosen][order].astype(np.float64)
        self.ideal_position = _position_in_row(self.ideal_rows)  # 1-based
        self.ideal_dcg = _running_sums(self.ideal_rows, self.ideal_gain / np.log2(self.ideal_position + 1.0))
        self.ideal_count = np.bincount(self.ideal_rows, minlength=judged.n)
        self.ideal_start = np.cumsum(self.ideal_count) - self.ideal_count

    def _labels_of(self, rows, ranks) -> np.ndarray:
        """The label of the judged doc at each (row, rank)."""
        judged = self.judged
        index = np.flatnonzero(judged.ranks > 0)
        keys = judged.rows[index] * (int(judged.ranks.max(initial=0)) + 1) + judged.ranks[index]
        order = np.argsort(keys)
        wanted = rows * (int(judged.ranks.max(initial=0)) + 1) + ranks
        return judged.labels[index[order[np.searchsorted(keys[order], wanted)]]].astype(np.float64)

    def ideal_dcg_at(self, rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The ideal DCG over the first `positions` places (0 for none; the whole ideal past its end)."""
        count = np.minimum(positions, self.ideal_count[rows])
        values = self.ideal_dcg[np.maximum(self.ideal_start[rows] + count - 1, 0)] if len(self.ideal_dcg) else 0.0
        return np.where(count > 0, values, 0.0)

    def dcg_before(self, rows: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """The run's DCG over the ranks before `ranks` (rank r excluded), per (row, rank)."""
        scale = int(max(self.judged.ranks.max(initial=0), self.judged.num_ret.max(initial=0))) + 2  # > every rank
        keys = self.rows * scale + self.ranks
        wanted = rows * scale + ranks
        if len(keys) == 0:  # no retrieved doc has a gain (every label 0 at -l0, say): no DCG anywhere
            return np.zeros(len(rows))
        at = np.searchsorted(keys, wanted) - 1  # the last item before
        same = (at >= 0) & (self.rows[np.maximum(at, 0)] == rows)
        return np.where(same, self.dcg[np.maximum(at, 0)], 0.0)


def _position_in_row(sorted_rows: np.ndarray) -> np.ndarray:
    index = np.arange(len(sorted_rows))
    start = np.ones(len(sorted_rows), bool)
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=start[1:])
    return index - np.maximum.accumulate(np.where(start, index, 0)) + 1


def g_measure(gains: Gains) -> np.ndarray:
    """G: for each retrieved doc with a gain, gain / log2(2 + cost - gained), where cost sums each place's ideal gain
    (at least 1) and gained the run's gains, both up to that doc; over the ideal's total gain."""
    judged, rows, ranks = gains.judged, gains.rows, gains.ranks
    count = np.minimum(ranks, gains.ideal_count[rows])
    ideal_total = np.cumsum(gains.ideal_gain)  # integer-valued: exact in any order
    before = np.where(gains.ideal_start[rows] > 0, ideal_total[np.maximum(gains.ideal_start[rows] - 1, 0)], 0.0)
    cost = np.where(count > 0, ideal_total[np.maximum(gains.ideal_start[rows] + count - 1, 0)] - before, 0.0)
    cost = cost + (ranks - count)  # places past the ideal cost 1 each
    gained = _running_sums(rows, gains.gain)  # integer-valued
    total = np.bincount(rows, weights=gains.gain / np.log2(2 + cost - gained), minlength=judged.n)
    ideal = np.bincount(gains.ideal_rows, weights=gains.ideal_gain, minlength=judged.n)
    return np.where(ideal > 0, total / np.where(ideal > 0, ideal, 1.0), 0.0)


def ndcg_rel(gains: Gains) -> np.ndarray:
    """ndcg_rel: nDCG at each retrieved doc with a gain (the run's DCG there over the ideal DCG at that place),
    plus the final nDCG once for each ideal doc not retrieved, over the number of ideal docs."""
    judged, rows, ranks = gains.judged, gains.rows, gains.ranks
    ideal_here = gains.ideal_dcg_at(rows, ranks)
    terms = gains.dcg / ideal_here
    total = np.bincount(rows, weights=terms, minlength=judged.n)
    final = gains.dcg_before(np.arange(judged.n), judged.num_ret + 1)
    ideal_final = gains.ideal_dcg_at(np.arange(judged.n), gains.ideal_count)
    found = np.bincount(rows, minlength=judged.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = total + ((gains.ideal_count - found).astype(np.float64)) * final / ideal_final
    return np.where((gains.ideal_count > 0) & (total > 0), total / np.maximum(gains.ideal_count, 1), 0.0)


def rndcg(gains: Gains) -> np.ndarray:
    """Rndcg: the mean of the nDCG read where the ideal gain changes (before that place), and once more at the end
    of the ranking when it runs more than one place past the ideal; 0 when nothing is relevant. A query with
    relevant docs but no gain (every label 0 at -l0) reads no nDCG at all: 0 / 0, NaN, as trec_eval prints it."""
    judged = gains.judged
    rows, position = gains.ideal_rows, gains.ideal_position  # the ideal's places, 1-based
    last = position == gains.ideal_count[rows]
    following = np.append(gains.ideal_gain[1:], 0.0)
    changes = last | (gains.ideal_gain != following)  # the gain changes after this place: a boundary at its end
    b_rows, boundary = rows[changes], position[changes]  # boundary: places before it
    seen = np.minimum(boundary, judged.num_ret[b_rows])
    terms = gains.dcg_before(b_rows, seen + 1) / gains.ideal_dcg_at(b_rows, boundary)
    # the ranking runs on past the ideal's end and one more place (read only when the ideal has a DCG, as trec_eval)
    extra = (judged.num_ret > gains.ideal_count + 1) & (gains.ideal_count > 0)
    everyone = np.arange(judged.n)
    last_term = gains.dcg_before(everyone, judged.num_ret + 1) / np.where(
        gains.ideal_count > 0, gains.ideal_dcg_at(everyone, gains.ideal_count), 1.0)
    all_rows = np.concatenate([b_rows, everyone[extra]])
    order = np.lexsort((np.concatenate([boundary, np.full(int(extra.sum()), np.iinfo(np.int64).max)]), all_rows))
    values = np.concatenate([terms, last_term[extra]])[order]
    total = np.bincount(all_rows[order], weights=values, minlength=judged.n)
    count = np.bincount(all_rows, minlength=judged.n)
    with np.errstate(invalid="ignore", divide="ignore"):  # relevant docs but no gain at all: 0 / 0, as trec_eval
        return np.where(judged.num_rel > 0, total / count, 0.0)


def dcg(gains: Gains) -> np.ndarray:
    """The run's DCG over its whole ranking."""
    everyone = np.arange(gains.judged.n)
    return gains.dcg_before(everyone, gains.judged.num_ret + 1)


def ideal_dcg(gains: Gains) -> np.ndarray:
    """The DCG of the ideal ranking (every doc with a gain, highest first)."""
    return gains.ideal_dcg_at(np.arange(gains.judged.n), gains.ideal_count)


def _powers(p: float, n: int) -> np.ndarray:
    """p^0 .. p^n, each the one before times p (as trec_eval's cur_p = cur_p * p)."""
    return np.cumprod(np.concatenate(([1.0], np.full(n, p))))


def rbp(gains: Gains, p: float) -> np.ndarray:
    """(1 - p) x the sum of gain x p^(rank - 1), gains scaled into [0, 1] when the query's top label is above 1."""
    judged, rows, ranks = gains.judged, gains.rows, gains.ranks
    top = np.zeros(judged.n)
    np.maximum.at(top, judged.rows[judged.labels >= 0], judged.labels[judged.labels >= 0].astype(np.float64))
    scaled = np.where(top[rows] > 1, (gains.gain - 0.0) / (top[rows] - 0.0), gains.gain)
    powers = _powers(p, int(ranks.max(initial=0)))
    total = np.bincount(rows, weights=scaled * powers[ranks - 1], minlength=judged.n)
    return (1.0 - p) * total


def rbp_resid(judged: Judged, p: float, chunk: int = 1 << 22) -> np.ndarray:
    """p^N + (1 - p) x the sum of p^(rank - 1) over the ranks of unjudged docs (N docs retrieved); 0 when every
    retrieved doc is judged. Summed over every rank, judged ones adding an exact 0, in rank order."""
    powers = _powers(p, int(judged.num_ret.max(initial=0)))
    judged_at = judged.labels >= 0
    keys_rows, keys_ranks = _by_row_and_rank(judged.rows, judged.ranks, judged_at & (judged.ranks > 0))
    scale = int(judged.num_ret.max(initial=0)) + 1
    keys = keys_rows * scale + keys_ranks
    total = np.zeros(judged.n)
    unjudged = judged.num_ret - np.bincount(keys_rows, minlength=judged.n)
    queries = np.flatnonzero(unjudged > 0)
    bounds = np.searchsorted(np.cumsum(judged.num_ret[queries]), np.arange(chunk, int(judged.num_ret.sum()) + chunk,
                                                                           chunk), side="right")
    low = 0
    for high in np.append(bounds, len(queries)):
        part = queries[low : max(high, low + 1)]
        low = max(high, low + 1)
        if len(part) == 0:
            continue
        counts = judged.num_ret[part]
        rows = np.repeat(part, counts)
        ranks = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts) + 1
        here = np.searchsorted(keys, rows * scale + ranks)
        is_judged = (here < len(keys)) & (keys[np.minimum(here, len(keys) - 1)] == rows * scale + ranks)
        total += np.bincount(rows, weights=np.where(is_judged, 0.0, powers[ranks - 1]), minlength=judged.n)
        if low >= len(queries):
            break
    return np.where(unjudged > 0, powers[judged.num_ret] + (1 - p) * total, 0.0)


def relstring(judged: Judged, length: int) -> list[str]:
    """The first min(length, N) docs' labels as characters: 0-9, '>' above 9, '.' judged below 0, '-' not judged."""
    out = [["-"] * min(max(length, 0), int(n)) for n in judged.num_ret.tolist()]
    shown = (judged.ranks > 0) & (judged.ranks <= length)
    for row, rank, label in zip(judged.rows[shown].tolist(), judged.ranks[shown].tolist(),
                                judged.labels[shown].tolist()):
        if rank <= len(out[row]):
            out[row][rank - 1] = ">" if label > 9 else str(label) if label >= 0 else "."
    return ["".join(chars) for chars in out]
