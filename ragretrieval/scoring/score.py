"""`score()`: rank, de-duplicate, align queries and documents, then compute every metric block by block."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .kernels import BlockKernel, ideal_dcg
from .metrics import Metric, parse_metrics
from .types import PAD, Qrels, Run

TIES = ("score", "rank")
DUPLICATES = ("first", "error")
QUERIES = ("all", "both")
BLOCK_SIZE = 16384  # queries per block: bounds memory at ~ BLOCK_SIZE x depth x a few float64 matrices


class ScoringError(ValueError):
    """Inputs or options the scorer cannot accept."""


@dataclass(frozen=True)
class ScoreResult:
    """Per-query values (aligned with `query_ids`) and their means, keyed by metric name as given."""

    query_ids: np.ndarray
    per_query: dict[str, np.ndarray]
    means: dict[str, float]
    metrics: list[Metric]
    missing_queries: list[str] = field(default_factory=list)  # labelled queries absent from the run

    def to_dict(self) -> dict[str, float]:
        return dict(self.means)


def _check_option(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ScoringError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def ranked_codes(run: Run, ties: str) -> np.ndarray:
    """The run's doc codes in rank order, empty slots last.

    With ``ties="score"``: score descending, equal scores by doc id descending (string order, as trec_eval). The
    doc-id order is only computed when some row really has equal scores, and rows already in order are not sorted.
    """
    codes = np.asarray(run.codes)
    pad = codes == PAD
    if ties == "rank" or run.scores is None or codes.shape[1] < 2:
        return codes if not _pads_inside(pad) else np.take_along_axis(codes, np.argsort(pad, axis=1, kind="stable"), 1)
    score_key = np.where(pad, np.inf, -run.scores)
    if not _ascending(score_key, pad):
        order = np.argsort(score_key, axis=1, kind="stable")
        codes, score_key, pad = (np.take_along_axis(a, order, axis=1) for a in (codes, score_key, pad))
    tied = (score_key[:, 1:] == score_key[:, :-1]) & ~pad[:, 1:]  # ties are neighbours once sorted by score
    if not tied.any():
        return codes
    lexical_rank = np.empty(len(run.doc_ids), dtype=np.int64)
    lexical_rank[np.argsort(run.doc_ids.astype(str), kind="stable")] = np.arange(len(run.doc_ids))
    doc_key = np.where(pad, 1, -lexical_rank[np.where(pad, 0, codes)])
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


def _doc_translation(run: Run, qrels: Qrels) -> np.ndarray | None:
    """Run doc code -> qrels doc code (-1 when unjudged), or None when both share one vocabulary."""
    if run.doc_ids is qrels.doc_ids or np.array_equal(run.doc_ids, qrels.doc_ids):
        return None
    judged = {doc_id: code for code, doc_id in enumerate(qrels.doc_ids.tolist())}
    return np.fromiter((judged.get(d, -1) for d in run.doc_ids.tolist()), dtype=np.int64, count=len(run.doc_ids))


_FEW_JUDGED = 16  # per query; up to this many, comparing against each judged doc beats a binary search


def _judged_labels(qrels: Qrels, rows: np.ndarray, codes: np.ndarray, judged_keys: np.ndarray, n_docs: int):
    """Label of each (row, code) in a block: 0 for unjudged docs and empty slots."""
    counts = qrels.indptr[rows + 1] - qrels.indptr[rows]
    most = int(counts.max(initial=0))
    if most == 0:
        return np.zeros(codes.shape, dtype=np.int64)
    if most <= _FEW_JUDGED:
        labels = np.zeros(codes.shape, dtype=np.int64)
        for j in range(most):
            has = counts > j
            at = np.where(has, qrels.indptr[rows] + j, 0)
            doc = np.where(has, qrels.doc_codes[at], -2)  # -2 matches nothing, not even an empty slot
            labels += np.where(codes == doc[:, None], qrels.labels[at][:, None], 0)
        return labels
    keys = rows[:, None] * n_docs + codes
    found = np.minimum(np.searchsorted(judged_keys, keys), len(judged_keys) - 1)
    return np.where((codes != PAD) & (judged_keys[found] == keys), qrels.labels[found], 0)


def score(
    qrels: Qrels,
    run: Run,
    metrics,
    *,
    rel_level: int = 1,
    ties: str = "score",
    duplicates: str = "first",
    queries: str = "all",
    depth: int | None = None,
) -> ScoreResult:
    """Score `run` against `qrels`; the defaults follow trec_eval (with ``-c``). See docs/metrics.md."""
    metrics = parse_metrics([metrics] if isinstance(metrics, (str, Metric)) else metrics)
    if not metrics:
        raise ScoringError("no metrics given")
    _check_option("ties", ties, TIES)
    _check_option("duplicates", duplicates, DUPLICATES)
    _check_option("queries", queries, QUERIES)
    if not isinstance(rel_level, (int, np.integer)) or rel_level < 1:
        raise ScoringError(f"rel_level must be an integer >= 1, got {rel_level!r}")
    if depth is not None and depth <= 0:
        raise ScoringError(f"depth must be a positive integer, got {depth!r}")

    codes = drop_duplicates(ranked_codes(run, ties), duplicates, run.query_ids, run.doc_ids)
    if depth is not None:
        codes = codes[:, :depth]
    translation = _doc_translation(run, qrels)

    if run.query_ids is qrels.query_ids or np.array_equal(run.query_ids, qrels.query_ids):
        run_rows = np.arange(qrels.n_queries)
    else:
        run_row_of = {q: i for i, q in enumerate(run.query_ids.tolist())}
        run_rows = np.array([run_row_of.get(q, -1) for q in qrels.query_ids.tolist()], dtype=np.int64)
    missing = [q for q, r in zip(qrels.query_ids.tolist(), run_rows) if r < 0]
    selected = np.arange(qrels.n_queries) if queries == "all" else np.flatnonzero(run_rows >= 0)

    judged_rows = np.repeat(np.arange(qrels.n_queries), np.diff(qrels.indptr))
    n_docs = max(len(qrels.doc_ids), 1)
    judged_keys = judged_rows * n_docs + qrels.doc_codes
    n_relevant = np.bincount(judged_rows, weights=qrels.labels >= rel_level, minlength=qrels.n_queries)
    ideal = {}
    for exponential in (False, True):
        family = "ndcg_exp" if exponential else "ndcg"
        cutoffs = {m.k for m in metrics if m.family == family}
        if cutoffs:
            ideal.update(ideal_dcg(judged_rows, qrels.labels, qrels.n_queries, cutoffs, exponential))

    per_query = {m.name: np.empty(len(selected)) for m in metrics}
    padded = np.vstack([codes, np.full((1, codes.shape[1]), PAD, dtype=np.int64)])  # row -1: a missing query
    for start in range(0, len(selected), BLOCK_SIZE):
        rows = selected[start : start + BLOCK_SIZE]
        block = padded[run_rows[rows]]
        judged_codes = block if translation is None else np.where(block == PAD, PAD, translation[block])
        labels = _judged_labels(qrels, rows, judged_codes, judged_keys, n_docs)
        kernel = BlockKernel(labels, n_relevant[rows], rel_level, {key: v[rows] for key, v in ideal.items()})
        for metric in metrics:
            per_query[metric.name][start : start + len(rows)] = kernel.compute(metric)

    means = {name: float(values.mean()) if len(values) else 0.0 for name, values in per_query.items()}
    return ScoreResult(qrels.query_ids[selected], per_query, means, metrics, missing)
