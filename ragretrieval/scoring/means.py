"""What ``ragretrieval score`` and `ragretrieval.score` show by default, and how they print a run's means."""

from __future__ import annotations

# A small RAG-retrieval view when no metric is named: ranking quality at the top, coverage at 10 and 100, first hit.
DEFAULT_METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "precision@10", "map")


def means_table(means: dict[str, float], n_queries: int) -> str:
    """Aligned metric / mean lines, 4 decimals as trec_eval prints them."""
    width = max(len("metric"), *(len(name) for name in means))
    lines = [f"{'metric':<{width}}  {'mean':>8}"]
    lines += [f"{name:<{width}}  {value:>8.4f}" for name, value in means.items()]
    lines.append(f"({n_queries} quer{'y' if n_queries == 1 else 'ies'} averaged)")
    return "\n".join(lines)
