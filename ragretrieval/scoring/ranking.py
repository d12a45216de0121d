"""From a run to the rank of every judged document: order by score, drop repeated docs, find the judged docs.

Every metric of this scorer depends on a ranking only through the ranks at which the judged documents were retrieved
(an unjudged document is non-relevant; it only takes up a rank). So `judged_ranks` reduces (qrels, run) to one number
per judgement: the 1-based rank of that document in its query's ranking, or 0 when it was not retrieved. Rows are
handled in blocks, read in place when they lie close together in the run. A block whose rows are already in order
(scores strictly falling, empty slots last) and free of repeated documents, the usual case, is only checked, never
sorted; other blocks go through `ranked_codes` and `drop_duplicates`.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from .ids import id_bytes, ids_of
from .types import PAD, THREADS, Qrels, Run, ScoringError

BLOCK_ROWS = 4096  # queries per block: temporaries of a few bytes x BLOCK_ROWS x depth stay in the CPU caches
_FEW_JUDGED = 16  # judgements per query up to which one comparison per judged doc beats a sorted lookup
_NO_DOC = -2  # a code that matches nothing, not even an empty slot
DENSE_SPAN = 1.5  # a block whose queries' run rows span at most this many rows per query reads them in place
GLOBAL_SHARE = 0.25  # tied docs (summed over blocks), as a share of the vocabulary, beyond which all ids are sorted


class LexicalOrder:
    """Orders doc codes by their ids, descending in byte order (trec_eval's tie-break, `strcmp`), within groups.

    Ties are usually few, so `order` reads only the ids of the codes it is given (the tied docs of a block) as
    zero-padded UTF-8 bytes. Only once the codes asked about add up to `GLOBAL_SHARE` of the vocabulary is the whole
    vocabulary ranked, once, and then reused: a run tied everywhere pays one sort, not one per block.
    """

    def __init__(self, vocabulary):
        self.vocabulary, self._rank, self._asked = vocabulary, None, 0
        self._lock = threading.Lock()  # blocks are ranked on several threads

    def order(self, codes: np.ndarray, group: np.ndarray) -> np.ndarray:
        """The stable order that sorts 1-d `codes` by `group` (non-negative ints), then by id descending."""
        with self._lock:
            if self._rank is None:
                self._asked += len(codes)
                if self._asked > GLOBAL_SHARE * len(self.vocabulary):
                    self._rank = _byte_rank(id_bytes(self.vocabulary, np.arange(len(self.vocabulary))))
            rank = self._rank
        if rank is not None:
            return np.lexsort((-rank[codes], group))
        ids = id_bytes(self.vocabulary, codes)
        key = np.empty((len(codes), 8 + ids.shape[1]), np.uint8)  # the group big-endian, then the id
        key[:, :8] = group.astype(">u8").view(np.uint8).reshape(-1, 8)
        np.invert(ids, out=key[:, 8:])  # descending; no UTF-8 byte is 0xFF, so no key ends in a NUL
        return np.argsort(key.view(f"S{key.shape[1]}").ravel(), kind="stable")  # bytes compare unsigned


def _byte_rank(matrix: np.ndarray) -> np.ndarray:
    """Rank of each id (a zero-padded UTF-8 row, see `ids.id_bytes`) among the distinct rows in byte order: an
    integer sort per 8 bytes, read as big-endian words, much faster than comparing strings. Byte-equal rows share a
    rank (ids that differ only by trailing NULs, such as "a" and "a\\0", pad to the same row), so a stable sort by
    rank keeps them in the order given, as the per-tie sort in `LexicalOrder.order` does."""
    words = matrix.view(">u8")
    order = np.lexsort(words.T[::-1])
    ordered = words[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    rank = np.empty(len(matrix), dtype=np.int64)
    rank[order] = np.cumsum(new) - 1
    return rank


def ranked_codes(run: Run, ties: str) -> np.ndarray:
    """The run's doc codes in rank order, empty slots last (see `rank_rows`)."""
    return rank_rows(np.asarray(run.codes), run.scores, ties, LexicalOrder(run.vocabulary))


def rank_rows(codes: np.ndarray, scores, ties: str, lexical: LexicalOrder, wanted: np.ndarray | None = None
              ) -> np.ndarray:
    """Rows of doc codes in rank order, empty slots last.

    With ``ties="score"``: score descending, equal scores by doc id descending (byte order, as trec_eval); rows
    already in that order are not sorted. With ``ties="rank"``: the order given. With `wanted` (a bool per doc
    code), only the runs of equal scores holding a wanted doc are ordered by id: the others keep their order, which
    moves no wanted doc's rank (see `_break_ties`).
    """
    pad = codes == PAD
    if ties == "rank" or scores is None or codes.shape[1] < 2:
        return codes if not _pads_inside(pad) else np.take_along_axis(codes, np.argsort(pad, axis=1, kind="stable"), 1)
    score_key = np.where(pad, np.nan, -scores)  # NaN sorts last, after docs scored -inf, and equals nothing
    if not _ascending(score_key, pad):
        order = np.argsort(score_key, axis=1, kind="stable")
        codes, score_key = np.take_along_axis(codes, order, axis=1), np.take_along_axis(score_key, order, axis=1)
    tied = score_key[:, 1:] == score_key[:, :-1]  # equal scores are neighbours once sorted by score
    return _break_ties(codes, tied, lexical, wanted) if tied.any() else codes


def _break_ties(codes: np.ndarray, tied: np.ndarray, lexical: LexicalOrder, wanted: np.ndarray | None = None
                ) -> np.ndarray:
    """Order each run of equal scores (``tied[:, j]``: cells j and j + 1 tie) by doc id descending. Only the tied
    cells are read: one sort of them all by (run of ties, id), whose result fills the cells those runs hold.

    With `wanted`, runs without a wanted doc are left as they are. A run of ties holds the same cells whatever its
    order, so the order inside it changes the rank of its own docs only: when none of them is wanted (a relevant
    doc, for `judged_ranks`), no rank that is read changes, and their ids need not be read."""
    after = np.zeros(codes.shape, dtype=bool)  # the cell ties with the one before it
    after[:, 1:] = tied
    grouped = after.copy()
    grouped[:, :-1] |= tied
    cells = np.flatnonzero(grouped)  # row by row, left to right: each run of ties is contiguous
    group = np.cumsum(~after.ravel()[cells])
    codes = codes.copy()  # C-contiguous, so `ravel` below is a view
    flat = codes.ravel()
    if wanted is not None:
        holds = np.zeros(group[-1] + 1, dtype=bool)
        holds[group[wanted[flat[cells]]]] = True
        keep = holds[group]
        cells, group = cells[keep], group[keep]
        if len(cells) == 0:
            return codes
    tied_codes = flat[cells]
    flat[cells] = tied_codes[lexical.order(tied_codes, group)]  # back into the same cells
    return codes


def _ascending(key: np.ndarray, pad: np.ndarray) -> bool:
    """True when every row's key rises (or stays) from left to right, ignoring empty slots at the end."""
    with np.errstate(invalid="ignore"):  # inf - inf between two empty slots
        step = np.diff(key, axis=1)
    return bool(((step >= 0) | pad[:, 1:]).all())


def _pads_inside(pad: np.ndarray) -> bool:
    """True when some row has an empty slot before a filled one."""
    return bool((pad[:, :-1] & ~pad[:, 1:]).any()) if pad.shape[1] > 1 else False


def drop_duplicates(codes: np.ndarray, mode: str = "first", query_ids=None, doc_ids=None) -> np.ndarray:
    """Keep the best-ranked occurrence of each code in each row and close the gaps (dense re-ranking). With
    ``mode="error"``, raise instead, naming the query and the doc (`doc_ids`: an array or `LazyIds`)."""
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
        doc = ids_of(doc_ids, [sorted_codes[row, col]])[0] if doc_ids is not None else int(sorted_codes[row, col])
        raise ScoringError(f"query {query!r} retrieves document {doc!r} more than once")
    repeat = np.zeros(codes.shape, dtype=bool)
    np.put_along_axis(repeat, order[:, 1:], repeat_sorted, axis=1)
    compacted = np.take_along_axis(codes, np.argsort(repeat, axis=1, kind="stable"), axis=1)
    compacted[np.sort(repeat, axis=1)] = PAD
    return compacted


def _rows_out_of_order(codes: np.ndarray, scores, ties: str) -> np.ndarray:
    """Rows that `rank_rows` would change, found cheaply: those with an empty slot before a doc or, when ranking by
    score, with scores that do not strictly fall along the row (ties among them)."""
    n_rows, width = codes.shape
    if width < 2 or n_rows == 0:
        return np.zeros(0, dtype=np.int64)
    pad = codes.ravel() == PAD if codes.min() == PAD else None
    if ties == "score" and scores is not None:
        flat = scores.ravel()
        wrong = ~(flat[1:] < flat[:-1])  # not falling; NaN compares False: such a row is ranked
        if pad is not None:
            wrong &= ~pad[1:]  # an empty slot may follow anything
    elif pad is None:
        return np.zeros(0, dtype=np.int64)
    else:
        wrong = np.zeros(n_rows * width - 1, dtype=bool)
    if pad is not None:
        wrong |= pad[:-1] & ~pad[1:]  # but only an empty slot may follow an empty slot
    return _rows_with_pair(wrong, width)


def _rows_with_repeats(codes: np.ndarray) -> np.ndarray:
    """Rows that list a doc code twice (empty slots aside): each row sorted, then equal neighbours found."""
    n_rows, width = codes.shape
    if width < 2 or n_rows == 0:
        return np.zeros(0, dtype=np.int64)
    ordered = np.sort(codes, axis=1).ravel()
    repeated = ordered[1:] == ordered[:-1]
    if ordered[::width].min() == PAD:  # empty slots sort first
        repeated &= ordered[1:] != PAD
    return _rows_with_pair(repeated, width)


def _rows_with_pair(pairs: np.ndarray, width: int) -> np.ndarray:
    """Rows holding a flagged pair of neighbours. `pairs[i]` flags cells i and i + 1 of a block of rows `width` wide
    read as one flat sequence (one comparison of two 1-d slices, much faster than of two 2-d ones, then one reduction
    per row); the pairs that straddle two rows are cleared first (`pairs` is changed)."""
    pairs[width - 1 :: width] = False
    return np.flatnonzero(np.logical_or.reduceat(pairs, np.arange(0, len(pairs), width)))


def _canonical_block(run: Run, run_rows, ties, duplicates, lexical, narrow, wanted=None, keep=None, depth=None
                     ) -> np.ndarray:
    """The block's rows in rank order without repeated docs, as int32 codes when `narrow`. Only the rows out of
    order are ranked, and only the rows with a repeated doc are de-duplicated: a few messy rows cost what they are.
    With `wanted`, ties are broken only where they move a wanted doc (`_break_ties`). With `keep` (positions in
    `run_rows`), only those rows are ranked and de-duplicated: the others come back as they are. With
    ``duplicates="error"``, only the first `depth` docs of a ranking are checked (trec_eval checks the docs it keeps
    after ``-M``)."""
    if len(run_rows) and run_rows[-1] - run_rows[0] == len(run_rows) - 1 and np.all(np.diff(run_rows) == 1):
        run_rows = slice(int(run_rows[0]), int(run_rows[-1]) + 1)  # consecutive rows: a view, not a copy
    codes = run.codes[run_rows]
    scores = None if run.scores is None else run.scores[run_rows]
    compact = codes.astype(np.int32) if narrow else codes  # astype copies
    shared = compact is codes and isinstance(run_rows, slice)  # the run's own array: copied before any write
    messy = _kept(_rows_out_of_order(codes, scores, ties), keep, len(codes))
    if len(messy):
        if shared:
            compact, shared = compact.copy(), False
        compact[messy] = rank_rows(codes[messy], None if scores is None else scores[messy], ties, lexical, wanted)
    checked = compact if depth is None or duplicates == "first" else compact[:, :depth]
    repeats = _kept(_rows_with_repeats(checked), keep, len(codes))
    if len(repeats):  # with duplicates="error", drop_duplicates raises
        fixed = drop_duplicates(checked[repeats], duplicates, run.query_ids[run_rows][repeats], run.vocabulary)
        if shared:
            compact = compact.copy()
        compact[repeats] = fixed
    return compact


def _kept(rows: np.ndarray, keep: np.ndarray | None, n_rows: int) -> np.ndarray:
    """The `rows` (sorted positions) that are among `keep` (all of them when `keep` is None)."""
    if keep is None or len(rows) == 0:
        return rows
    kept = np.zeros(n_rows, dtype=bool)
    kept[keep] = True
    return rows[kept[rows]]


def judged_ranks(
    qrels: Qrels,
    run: Run,
    run_rows: np.ndarray,
    judged_run_codes: np.ndarray,
    *,
    ties: str,
    duplicates: str,
    depth: int | None,
    lengths: np.ndarray | None = None,
) -> np.ndarray:
    """Rank (1-based) of each judgement's document in its query's ranking, aligned with ``qrels.doc_codes``; 0 when
    the document is not retrieved (or only below `depth`).

    `run_rows[i]` is the run row of qrels query i (-1 when the run lacks it); `judged_run_codes` gives, per
    judgement, the document's code in the run's vocabulary (-1 when the run never retrieves it, or when its rank is
    not wanted: it is then left at 0). `lengths` (one int per qrels query), when given, receives the number of docs
    in each ranking the run holds (after de-duplication and `depth`), and then every such ranking is read.
    """
    ranks = np.zeros(len(qrels.doc_codes), dtype=np.int64)
    lexical = LexicalOrder(run.vocabulary)
    narrow = run.n_docs < np.iinfo(np.int32).max
    targets = np.where(judged_run_codes >= 0, judged_run_codes, _NO_DOC)
    wanted = np.zeros(run.n_docs, dtype=bool)  # the docs whose rank is read: only their ties need breaking
    wanted[judged_run_codes[judged_run_codes >= 0]] = True
    has_rows = run_rows >= 0
    if duplicates == "first" and lengths is None:  # a query none of whose docs is wanted has no rank to read
        has_rows &= np.bincount(qrels.rows[targets >= 0], minlength=qrels.n_queries) > 0
    present: np.ndarray = np.flatnonzero(has_rows)
    if np.any(np.diff(run_rows[present]) < 0):  # the run lists queries in another order: take blocks in its order
        by_run_row = np.full(run.n_queries, -1, dtype=np.int64)  # run rows are distinct: placed, not sorted
        by_run_row[run_rows[present]] = present
        present = by_run_row[by_run_row >= 0]

    rank_block = partial(_rank_block, qrels=qrels, run=run, run_rows=run_rows, targets=targets, wanted=wanted,
                         lexical=lexical, narrow=narrow, ties=ties, duplicates=duplicates, depth=depth, ranks=ranks,
                         lengths=lengths)
    blocks = [present[lo : lo + BLOCK_ROWS] for lo in range(0, len(present), BLOCK_ROWS)]
    if THREADS == 1 or len(blocks) < 2:
        for rows in blocks:
            rank_block(rows)
    else:  # NumPy releases the GIL in its loops; results are read in block order, so the first error is the same
        with ThreadPoolExecutor(THREADS) as pool:
            for done in [pool.submit(rank_block, rows) for rows in blocks]:
                done.result()
    return ranks


def _rank_block(rows, *, qrels, run, run_rows, targets, wanted, lexical, narrow, ties, duplicates, depth, ranks,
                lengths=None) -> None:
    """Write into `ranks` the ranks of the judged docs of qrels queries `rows` (present in the run, in run order),
    and into `lengths`, when given, the length of their rankings."""
    block = run_rows[rows]
    start, span = int(block[0]), int(block[-1]) - int(block[0]) + 1
    if span <= DENSE_SPAN * len(rows):  # read the run's rows in place, passing over the few not wanted
        queries = np.full(span, -1, dtype=np.int64)
        queries[block - start] = rows
        codes = _canonical_block(run, np.arange(start, start + span), ties, duplicates, lexical, narrow, wanted,
                                 keep=block - start, depth=depth)
    else:
        queries = rows
        codes = _canonical_block(run, block, ties, duplicates, lexical, narrow, wanted, depth=depth)
    if depth is not None:
        codes = codes[:, :depth]
    if lengths is not None:
        scored = queries >= 0
        lengths[queries[scored]] = np.count_nonzero(codes[scored] != PAD, axis=1)
    _locate(qrels.indptr, targets, queries, codes, ranks)  # blocks hold distinct queries: disjoint writes


def _locate(indptr, targets, rows, codes, ranks) -> None:
    """Write into `ranks` the rank of each judged doc of `rows` found in `codes` (one row per query, no repeats; a
    row of query -1 is not read)."""
    first = indptr[np.maximum(rows, 0)]
    counts = np.where(rows >= 0, indptr[rows + 1] - first, 0)
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
