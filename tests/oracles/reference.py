"""Reference implementations written the obvious slow way, one item at a time, for the oracle tests.

Nothing here is shared with the library: each function restates a documented rule (docs/metrics.md, the module
docstrings of rollup.py, granularity.py, chunking.py and stats.py) with plain loops, so a one-token slip in the fast
code shows up as a disagreement.
"""

from __future__ import annotations

import math


def first_appearances(items) -> list:
    """Each item once, at its first (best) rank, gaps closed."""
    seen: list = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def metrics_at(ranked: list, labels: dict, k: int, rel_level: int) -> dict[str, float]:
    """The families `evaluate` scores, at cutoff k, for one ranking (best first) and one question's labels."""
    top = ranked[:k]
    label = [labels.get(item, 0) for item in top]
    relevant = [g >= rel_level for g in label]
    n_relevant = sum(1 for g in labels.values() if g >= rel_level)
    hits = sum(relevant)
    precision = hits / k
    recall = hits / n_relevant if n_relevant else 0.0
    first = next((i + 1 for i, r in enumerate(relevant) if r), None)
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(label) if g > 0)
    ideal = sorted((g for g in labels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    precision_at_hits = [sum(relevant[: i + 1]) / (i + 1) for i in range(len(top)) if relevant[i]]
    return {
        f"recall@{k}": recall,
        f"precision@{k}": precision,
        f"hit_rate@{k}": 1.0 if hits else 0.0,
        f"mrr@{k}": 1.0 / first if first else 0.0,
        f"f1@{k}": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        f"ndcg@{k}": dcg / idcg if idcg else 0.0,
        f"map@{k}": sum(precision_at_hits) / n_relevant if n_relevant else 0.0,
    }


def intervals_share_a_character(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Half-open [start, end) intervals compared character by character: touching is not overlapping."""
    return bool(set(range(*a)) & set(range(*b)))


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjustment by hand: walk the finite p-values from the smallest, multiply the j-th (1-based)
    by m - j + 1, cap at 1, and never let an adjusted value fall below the one before it. NaN stays NaN."""
    finite = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    m = len(finite)
    ordered = sorted(finite, key=lambda i: pvalues[i])
    out = list(pvalues)
    running = 0.0
    for j, i in enumerate(ordered, start=1):
        running = max(running, min(1.0, (m - j + 1) * pvalues[i]))
        out[i] = running
    return out


def bonferroni(pvalues: list[float]) -> list[float]:
    m = sum(1 for p in pvalues if not math.isnan(p))
    return [p if math.isnan(p) else min(1.0, m * p) for p in pvalues]
