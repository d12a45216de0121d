"""How far an approximate (ANN) store is from exact search over the same vectors.

For a dense run whose store is not exact, the chunk and question vectors of the run are searched again by the
``numpy`` store's exact inner product (stores/numpy_store.py), and the run gains:

- ``exact_overlap@k`` per question and as a mean, for every cutoff k: the share of the exact top-k that the ANN's
  top-k holds. With s_k the exact k-th best score of a question, a chunk the ANN returned counts as found when its
  exact score is at least s_k (to within float32 rounding), so a chunk tied with the exact k-th counts whichever of
  the tied chunks exact search happened to list; the count is capped at k and divided by min(k, chunks in the store).
  An exact store (``numpy``, ``faiss kind=flat``) is its own reference: 1.0 by construction, recorded as such
  (`ExactComparison.exact_store`), without searching again.
- the exact search's own document-level metrics per question, and a paired test of the ANN run against it on one
  metric (recall at 5, or at the largest cutoff when 5 is not one), the ``t`` test of `runs compare`
  (analysis/stats.py), worded at its default level (work/significance.py): "this setting loses relevant documents:
  recall@5 -0.012, p = 0.003".

Retrievers without a store, hybrid and reranked runs get none of this (their figures would
mix in another stage).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from ..stores.numpy_store import top_k
from ..work.significance import ALPHA
from .base import Ranking

REFERENCE = "the numpy store's exact inner product over the run's own chunk and question vectors"
EXACT_STORE = "the store searches exactly: 1.0 by construction"
QUERY_BATCH = 256  # questions scored against every chunk at once: memory stays at 256 x chunks floats
TIE = 1e-12  # a difference this small is none (analysis/stats.py's TIE_TOLERANCE)
TOLERANCE = 1e-5  # relative: float32 inner products of the same vectors differ in the last bits between engines


class PairedTest(BaseModel):
    """The ANN run against exact search on one metric, question by question (paired t-test)."""

    metric: str
    level: str
    ann: float
    exact: float
    diff: float  # ann - exact
    p: float | None  # None when no test is possible (fewer than 2 questions)
    sentence: str


class ExactComparison(BaseModel):
    """Means of ``exact_overlap@k``, the exact search's means at `level`, and the paired test (docs/stores.md)."""

    reference: str = REFERENCE
    exact_store: bool = False  # the store itself searches exactly: every overlap is 1.0 by construction
    overlap: dict[str, float]
    level: str | None = None
    exact_means: dict[str, float] = {}
    test: PairedTest | None = None


def overlap_at(k: int, ann: np.ndarray, queries: np.ndarray, chunks: np.ndarray, exact_scores: np.ndarray
               ) -> np.ndarray:
    """Per question, the share of the exact top-k found in the ANN's top-k positions `ann` (module docstring)."""
    need = min(k, len(chunks))
    if need == 0:
        return np.ones(len(queries))
    kth = exact_scores[:, need - 1]
    head = ann[:, :k]
    valid = head >= 0
    scores = np.einsum("qd,qkd->qk", queries, chunks[np.where(valid, head, 0)])
    found = (valid & (scores >= kth[:, None] - TOLERANCE * np.maximum(1.0, np.abs(kth))[:, None])).sum(axis=1)
    return np.minimum(found, need) / need


def exact_ranking(queries: np.ndarray, chunks: np.ndarray, depth: int) -> Ranking:
    parts = [top_k(queries[lo:lo + QUERY_BATCH] @ chunks.T, depth) for lo in range(0, len(queries), QUERY_BATCH)]
    if not parts:
        return Ranking(np.zeros((0, depth), np.int64), np.zeros((0, depth), np.float32))
    return Ranking(np.vstack([p.indices for p in parts]), np.vstack([p.scores for p in parts]))


def chunk_vectors(retriever) -> np.ndarray:
    """The vectors the store holds: kept by the retriever when it built the store, else (an index loaded from a
    folder) embedded again through the cache."""
    vectors = getattr(retriever, "chunk_vectors", None)
    if vectors is None:
        vectors = retriever._embed(retriever.passage_embedder, retriever.store.records.texts,
                                   "embedding chunks for the exact reference")
    return np.ascontiguousarray(vectors, dtype=np.float32)


def test_metric(ks) -> str:
    return "recall@5" if 5 in ks else f"recall@{max(ks)}"


def paired_sentence(metric: str, diff: float, p: float | None) -> str:
    figures = f"{metric} {diff:+.3f}, p = {'n/a' if p is None else f'{p:.3g}'}"
    if p is not None and p < ALPHA and diff < 0:
        return f"this setting loses relevant documents: {figures}"
    if p is not None and p < ALPHA and diff > 0:
        return f"this setting finds more relevant documents than exact search: {figures}"
    return f"no significant difference from exact search: {figures}"


def paired_t_p(d: np.ndarray) -> float | None:
    """The paired t-test's p-value on the differences, as `runs compare`'s ``t`` test computes it
    (analysis/stats.py; that room reads evaluation reports, so the pipeline cannot import it): None under two
    questions, 1 when every difference is zero, 0 when all are one nonzero value."""
    from scipy import stats

    if len(d) < 2:
        return None
    if np.all(d == d[0]):
        return 1.0 if abs(d[0]) <= TIE else 0.0
    return float(stats.ttest_rel(d, np.zeros_like(d)).pvalue)


def paired_test(metric: str, level: str, ann: np.ndarray, exact: np.ndarray) -> PairedTest:
    ann, exact = np.asarray(ann, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    d = ann - exact
    diff = float(d.mean()) if len(d) else 0.0
    p = paired_t_p(d)
    return PairedTest(metric=metric, level=level, ann=round(float(ann.mean()), 6) if len(ann) else 0.0,
                      exact=round(float(exact.mean()), 6) if len(exact) else 0.0, diff=round(diff, 6), p=p,
                      sentence=paired_sentence(metric, diff, p))


def compare_with_exact(report, retriever, ranking: Ranking, table, doc_qrels, chunk_policy: str) -> None:
    """Give `report` (an `EvalReport`) its `exact` comparison and per-question values when its store is ANN."""
    from ..scoring import score
    from ..scoring.metrics import parse_metric
    from .rollup import roll_up

    store, queries = getattr(retriever, "store", None), getattr(retriever, "query_vectors", None)
    if store is None or queries is None or len(queries) != len(report.questions):
        return
    if getattr(store, "exact", True):
        overlap = {f"exact_overlap@{k}": 1.0 for k in report.config.ks}
        for question in report.questions:
            question.exact_overlap = dict(overlap)
        report.exact = ExactComparison(reference=EXACT_STORE, exact_store=True, overlap=overlap)
        return
    chunks = chunk_vectors(retriever)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    exact = exact_ranking(queries, chunks, ranking.depth)
    overlap = {f"exact_overlap@{k}": overlap_at(k, ranking.positions, queries, chunks, exact.scores)
               for k in report.config.ks}
    for i, question in enumerate(report.questions):
        question.exact_overlap = {name: round(float(v[i]), 6) for name, v in overlap.items()}
    comparison = ExactComparison(overlap={name: round(float(v.mean()), 6) for name, v in overlap.items()})
    if "doc" in report.means:
        found = roll_up(exact, doc_qrels.query_ids, table, max(report.config.ks), chunk_policy)
        metrics = [parse_metric(name) for name in report.means["doc"]]
        scored = score(doc_qrels, found.doc_run, metrics, rel_level=report.config.rel_level, ties="rank")
        for i, question in enumerate(report.questions):
            question.exact_metrics = {name: float(v[i]) for name, v in scored.per_query.items()}
        metric = test_metric(report.config.ks)
        ann = np.array([q.metrics["doc"][metric] for q in report.questions])
        comparison.level, comparison.exact_means = "doc", dict(scored.means)
        comparison.test = paired_test(metric, "doc", ann, np.asarray(scored.per_query[metric], dtype=np.float64))
    report.exact = comparison
