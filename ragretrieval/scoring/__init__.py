"""The scorer: retrieval metrics that agree with trec_eval, vectorized with NumPy. See docs/metrics.md."""

from .granularity import chunk_qrels, collapse_to_parents
from .metrics import FAMILIES, Metric, MetricError, parse_metric, parse_metrics
from .score import ScoreResult, score
from .stream import InterleavedRunError, score_files
from .types import PAD, Qrels, Run, ScoringError

__all__ = [
    "FAMILIES",
    "InterleavedRunError",
    "PAD",
    "Metric",
    "MetricError",
    "Qrels",
    "Run",
    "ScoreResult",
    "ScoringError",
    "chunk_qrels",
    "collapse_to_parents",
    "parse_metric",
    "parse_metrics",
    "score",
    "score_files",
]
