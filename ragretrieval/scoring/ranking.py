"""From a run to the rank of every judged document: order by score, drop repeated docs, find the judged docs.

Every metric of this scorer depends on a ranking only through the ranks at which the judged documents were retrieved
(an unjudged document is non-relevant; it only takes up a rank). So `judged_ranks` reduces (qrels, run) to one number
per judgement: the 1-based rank of that document in its query's ranking, or 0 when it was not retrieved. Rows are
handled in blocks. A block whose rows are already in order (scores strictly falling, empty slots last) and free of
repeated documents, the usual case, is only checked, never sorted; other blocks go through `ranked_codes` and
`drop_duplicates`.
"""

from __future__ import annotations

import numpy as np

from .types import PAD, Qrels, Run, ScoringError

BLOCK_ROWS = 4096  # queries per block: temporaries of a few bytes x BLOCK_ROWS x depth stay in the CPU caches
_FEW_JUDGED = 16  # judgements per query up to which one comparison per judged doc beats a sorted lookup
_NO_DOC = -2  # a code that matches nothing, not even an empty slot


class LexicalOrder:
    """Each doc code's position in the byte order of the doc ids, computed on first use (only ties need it)."""

    def __init__(self, doc_ids: np.ndarray):
        self.doc_ids, self._rank = doc_ids, None

    @property
    def rank(self) -> np.ndarray:
        if self._rank is None:
            self._rank = np.empty(len(self.doc_ids), dtype=np.int64)
            self._rank[np.argsort(self.doc_ids.astype(str), kind="stable")] = np.arange(len(self.doc_ids))
        return self._rank


def ranked_codes(run: Run, ties: str) -> np.ndarray:
    """The run's doc codes in rank order, empty slots last (see `rank_rows`)."""
    return rank_rows(np.asarray(run.codes), run.scores, ties, LexicalOrder(run.doc_ids))


def rank_rows(codes: np.ndarray, scores, ties: str, lexical: LexicalOrder) -> np.ndarray:
    """Rows of doc codes in rank order, empty slots last.

    With ``ties="score"``: score descending, equal scores by doc id descending (byte order, as trec_eval); rows
    already in that order are not sorted. With ``ties="rank"``: the order given.
    """
    pad = codes == PAD
    if ties == "rank" or scores is None or codes.shape[1] < 2:
        return codes if not _pads_inside(pad) else np.take_along_axis(codes, np.argsort(pad, axis=1, kind="stable"), 1)
    score_key = np.where(pad, np.inf, -scores)
    if not _ascending(score_key, pad):
        order = np.argsort(score_key, axis=1, kind="stable")
        codes, score_key, pad = (np.take_along_axis(a, order, axis=1) for a in (codes, score_key, pad))
    tied = (score_key[:, 1:] == score_key[:, :-1]) & ~pad[:, 1:]  # ties are neighbours once sorted by score
    if not tied.any():
        return codes
    doc_key = np.where(pad, 1, -lexical.rank[np.where(pad, 0, codes)])
    order = np.lexsort((doc_key, score_key), axis=1)
    return np.take_along_axis(codes, order, axis=1)


def _ascending(key: np.ndarray, pad: np.ndarray) -> bool:
    """True when every row's key rises (or stays) from left to right, ignoring empty slots at the end."""
    with np.errstate(invalid="ignore"):  # inf - inf between two empty slots
        step = np.diff(key, axis=1)
    return bool(((step >= 0) | pad[:, 1:]).all())


def _pads_inside(pad: np.ndarray) -> bool:
    """True when some row has an empty slot before a filled one."""
    return bool((pad[:, :-1] & ~pad[:, 1:]).any()) if pad.shape[1] > 1 else False


def drop_duplicates(codes: np.ndarray, mode: str = "first", query_ids=None, doc_ids=None) -> np.ndarray:
    """Keep the best-ranked occurrence of each code in each row and close the gaps (dense re-ranking)."""
    if codes.shape[1] < 2:
        return codes
    order = np.argsort(codes, axis=1, kind="stable")  # equal codes stay in rank order
    sorted_codes = np.take_along_axis(codes, order, axis=1)
    repeat_sorted = (sorted_codes[:, 1:] == sorted_codes[:, :-1]) & (sorted_codes[:, 1:] != PAD)
    if not repeat_sorted.any():
        return codes
    if mode == "error":
        row, col = (int(x[0]) for x in np.nonzero(repeat_sorted))
        query = query_ids[row] if query_ids is not None else row
        doc = doc_ids[sorted_codes[row, col]] if doc_ids is not None else sorted_codes[row, col]
        raise ScoringError(f"query {query!r} retrieves document {doc!r} more than once")
    repeat = np.zeros(codes.shape, dtype=bool)
    np.put_along_axis(repeat, order[:, 1:], repeat_sorted, axis=1)
    compacted = np.take_along_axis(codes, np.argsort(repeat, axis=1, kind="stable"), axis=1)
    compacted[np.sort(repeat, axis=1)] = PAD
    return compacted


def _in_rank_order(codes: np.ndarray, scores, ties: str) -> bool:
    """Cheap check that `rank_rows` would leave the rows as they are: empty slots only at row ends and, when ranking
    by score, scores strictly falling along each row (so no ties either)."""
    pad = codes == PAD if codes.size and codes.min() == PAD else None
    if pad is not None and _pads_inside(pad):
        return False
    if ties == "rank" or scores is None or codes.shape[1] < 2:
        return True
    falling = scores[:, 1:] < scores[:, :-1]
    if pad is not None:
        falling |= pad[:, 1:]
    return bool(falling.all())


def _has_repeats(codes: np.ndarray) -> bool:
    """True when some row lists a doc code twice (empty slots aside)."""
    if codes.shape[1] < 2:
        return False
    ordered = np.sort(codes, axis=1)
    repeated = ordered[:, 1:] == ordered[:, :-1]
    if ordered[:, 0].min(initial=0) == PAD:
        repeated &= ordered[:, 1:] != PAD
    return bool(repeated.any())


def _canonical_block(run: Run, run_rows, ties, duplicates, lexical, narrow) -> np.ndarray:
    """The block's rows in rank order without repeated docs, as int32 codes when `narrow`."""
    if len(run_rows) and run_rows[-1] - run_rows[0] == len(run_rows) - 1 and np.all(np.diff(run_rows) == 1):
        run_rows = slice(int(run_rows[0]), int(run_rows[-1]) + 1)  # consecutive rows: a view, not a copy
    codes = run.codes[run_rows]
    scores = None if run.scores is None else run.scores[run_rows]
    if not _in_rank_order(codes, scores, ties):
        codes = rank_rows(codes, scores, ties, lexical)
    compact = codes.astype(np.int32) if narrow else codes
    if _has_repeats(compact):
        codes = drop_duplicates(codes, duplicates, run.query_ids[run_rows], run.doc_ids)
        compact = codes.astype(np.int32) if narrow else codes
    return compact


def judged_ranks(
    qrels: Qrels,
    run: Run,
    run_rows: np.ndarray,
    judged_run_codes: np.ndarray,
    *,
    ties: str,
    duplicates: str,
    depth: int | None,
) -> np.ndarray:
    """Rank (1-based) of each judgement's document in its query's ranking, aligned with ``qrels.doc_codes``; 0 when
    the document is not retrieved (or only below `depth`).

    `run_rows[i]` is the run row of qrels query i (-1 when the run lacks it); `judged_run_codes` gives, per
    judgement, the document's code in the run's vocabulary (-1 when the run never retrieves it, or when its rank is
    not wanted: it is then left at 0).
    """
    ranks = np.zeros(len(qrels.doc_codes), dtype=np.int64)
    lexical = LexicalOrder(run.doc_ids)
    narrow = len(run.doc_ids) < np.iinfo(np.int32).max
    targets = np.where(judged_run_codes >= 0, judged_run_codes, _NO_DOC)
    present = np.flatnonzero(run_rows >= 0)
    for lo in range(0, len(present), BLOCK_ROWS):
        rows = present[lo : lo + BLOCK_ROWS]
        codes = _canonical_block(run, run_rows[rows], ties, duplicates, lexical, narrow)
        if depth is not None:
            codes = codes[:, :depth]
        _locate(qrels.indptr, targets, rows, codes, ranks)
    return ranks


def _locate(indptr, targets, rows, codes, ranks) -> None:
    """Write into `ranks` the rank of each judged doc of `rows` found in `codes` (one row per query, no repeats)."""
    first, counts = indptr[rows], indptr[rows + 1] - indptr[rows]
    most, width = int(counts.max(initial=0)), codes.shape[1]
    if most == 0 or width == 0:
        return
    if most <= _FEW_JUDGED:
        for j in range(most):
            has = counts > j
            at = np.where(has, first + j, 0)
            target = np.where(has, targets[at], _NO_DOC).astype(codes.dtype)
            cells = np.flatnonzero(codes == target[:, None])
            row = cells // width
            ranks[at[row]] = cells - row * width + 1
        return
    entries = np.repeat(np.arange(len(rows)), counts)
    judged = np.repeat(first, counts) + np.arange(len(entries)) - np.repeat(np.cumsum(counts) - counts, counts)
    retrievable = targets[judged] >= 0
    entries, judged = entries[retrievable], judged[retrievable]
    n_docs = int(max(codes.max(initial=0), targets.max(initial=0))) + 1
    keys = entries * n_docs + targets[judged]
    order = np.argsort(keys, kind="stable")
    keys, judged = keys[order], judged[order]
    if len(keys) == 0:
        return
    cell_keys = np.arange(len(rows))[:, None] * n_docs + codes.astype(np.int64)
    found = np.minimum(np.searchsorted(keys, cell_keys), len(keys) - 1)
    row, col = np.nonzero((keys[found] == cell_keys) & (codes != PAD))
    ranks[judged[found[row, col]]] = col + 1
