"""Diagnostics that say how far to trust a run's numbers: the random-retriever baseline, saturation of doc-level
Recall@k on small corpora, and confusable pairs (documents retrieved at rank 1 in place of the relevant one).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

from ..evaluation.report import EvalReport

SATURATION_RECALL = 0.9  # doc-level Recall@k at or above this is "near 1"
SATURATION_SHARE = 0.1  # ... and suspicious when k covers at least this share of the corpus


def random_baseline(n_documents: int, relevant_counts: Sequence[int], ks: Iterable[int]) -> dict[str, float]:
    """Expected document-level metrics of a uniformly random ranking of all N documents, averaged over questions.

    Computed analytically (no simulation). For a question with R relevant documents and m = min(k, N):
    - E[recall@k]    = m / N
    - E[precision@k] = R m / (N k)
    - E[hit_rate@k]  = 1 - C(N - R, m) / C(N, m)      (hypergeometric: no relevant document among the first m)
    - E[mrr@k]       = Σ_{i=1..m} (1/i) P(first relevant at rank i), with
                       P(first at i) = Π_{j<i} (N - R - j + 1)/(N - j + 1) · R / (N - i + 1)
    Keys are ``family@k`` as in the scorer.
    """
    if n_documents <= 0:
        raise ValueError(f"the corpus must hold at least one document, got {n_documents}")
    counts = [min(max(int(r), 0), n_documents) for r in relevant_counts]
    if not counts:
        raise ValueError("no questions")
    n = n_documents
    out: dict[str, float] = {}
    for k in sorted(set(ks)):
        m = min(k, n)
        totals = Counter()
        for r in counts:
            none_yet, mrr = 1.0, 0.0  # P(no relevant document in the first i - 1 ranks)
            for i in range(1, m + 1):
                first_here = none_yet * r / (n - i + 1)
                mrr += first_here / i
                none_yet *= (n - r - i + 1) / (n - i + 1)
            totals["recall"] += m / n if r else 0.0
            totals["precision"] += r * m / (n * k)
            totals["hit_rate"] += 1.0 - none_yet
            totals["mrr"] += mrr
        for family, total in totals.items():
            out[f"{family}@{k}"] = total / len(counts)
    return out


def report_baseline(report: EvalReport) -> dict[str, float]:
    """`random_baseline` for a report's corpus, questions and cutoffs."""
    return random_baseline(report.dataset.n_documents, [len(q.relevant) for q in report.questions], report.config.ks)


def saturation_warnings(report: EvalReport, label: str = "run") -> list[str]:
    """Warn where doc-level Recall@k >= SATURATION_RECALL while k covers >= SATURATION_SHARE of the documents
    (one message per run, naming every such k)."""
    means = report.means.get("doc", {})
    n = report.dataset.n_documents
    baseline = report_baseline(report)
    saturated = [k for k in report.config.ks
                 if means.get(f"recall@{k}", 0.0) >= SATURATION_RECALL and k / n >= SATURATION_SHARE]
    if not saturated:
        return []
    details = "; ".join(f"Recall@{k} = {means[f'recall@{k}']:.3f} with k covering {min(k / n, 1):.0%} of the corpus "
                        f"(random ranking: {baseline[f'recall@{k}']:.3f})" for k in saturated)
    return [f"{label}: document-level Recall@k is near 1 where k covers a large share of the {n} documents: "
            f"{details}. Such numbers say little; compare at a smaller k or on a larger corpus."]


def confusable_pairs(reports: Iterable[EvalReport], top: int = 10) -> list[tuple[str, str, int]]:
    """(relevant doc, doc retrieved at rank 1 instead, count) over every question whose rank-1 document is not
    relevant, counted once per relevant document of the question, most frequent first."""
    counts: Counter = Counter()
    for report in reports:
        for question in report.questions:
            if question.retrieved_documents and question.retrieved_documents[0] not in question.relevant:
                for relevant in question.relevant:
                    counts[(relevant, question.retrieved_documents[0])] += 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [(relevant, wrong, n) for (relevant, wrong), n in ranked[:top]]
