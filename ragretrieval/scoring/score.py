"""`score()`: align queries and documents, find the rank of every judged document, then compute every metric."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .ids import head_of
from .kernels import compute_all
from .metrics import Metric, parse_metrics
from .ranking import judged_ranks
from .types import Qrels, Run, ScoringError, ScoringOptionError
from .vocabulary import index_in

TIES = ("score", "rank")
DUPLICATES = ("first", "error")
QUERIES = ("all", "both")


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

    def __str__(self) -> str:
        """The table ``ragretrieval score`` prints."""
        from .means import means_table

        return means_table(self.means, len(self.query_ids))


def _check_option(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ScoringOptionError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _run_rows(qrels: Qrels, run: Run) -> np.ndarray:
    """Run row of each qrels query, -1 where the run lacks it."""
    if run.query_ids is qrels.query_ids or np.array_equal(run.query_ids, qrels.query_ids):
        return np.arange(qrels.n_queries)
    return index_in(qrels.query_ids, run.query_ids)


def _judged_run_codes(qrels: Qrels, run: Run) -> np.ndarray:
    """Code in the run's vocabulary of each judgement's document; -1 when the run never retrieves it."""
    head = head_of(run.vocabulary)  # the ids already decoded: a run read against these qrels starts with them
    if head is qrels.doc_ids or (
        len(qrels.doc_ids) <= len(head) and np.array_equal(head[: len(qrels.doc_ids)], qrels.doc_ids)
    ):  # the run's vocabulary extends the qrels' one (see `read_run`)
        return qrels.doc_codes
    return index_in(qrels.doc_ids, run.doc_ids)[qrels.doc_codes]


def checked_options(metrics, *, rel_level, ties, duplicates, queries, depth) -> list[Metric]:
    """The metrics, parsed; a `ScoringOptionError` naming the first option that cannot be used."""
    metrics = parse_metrics([metrics] if isinstance(metrics, (str, Metric)) else metrics)
    if not metrics:
        raise ScoringOptionError("no metrics given")
    _check_option("ties", ties, TIES)
    _check_option("duplicates", duplicates, DUPLICATES)
    _check_option("queries", queries, QUERIES)
    if not isinstance(rel_level, (int, np.integer)) or isinstance(rel_level, bool) or rel_level < 1:
        raise ScoringOptionError(f"rel_level must be an integer >= 1, got {rel_level!r}")
    if depth is not None and (not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth <= 0):
        raise ScoringOptionError(f"depth must be a positive integer, got {depth!r}")
    return metrics


def scored(qrels: Qrels, ranks: np.ndarray, in_run: np.ndarray, metrics: list[Metric], rel_level: int,
           queries: str) -> ScoreResult:
    """The metrics from the rank of every judgement (`judged_ranks`); `in_run` marks the qrels queries the run
    ranks. The in-memory and the streamed paths both end here, so the same ranks give the same bits."""
    missing = qrels.query_ids[~in_run].tolist()
    selected = slice(None) if queries == "all" or not missing else np.flatnonzero(in_run)
    if not len(qrels.query_ids[selected]):  # a mean over no query is no number, not 0.0
        raise ScoringError("nothing to score: the qrels judge no query" if not qrels.n_queries else
                           f"nothing to score: none of the {qrels.n_queries} judged queries is in the run "
                           "(queries='both' scores only those)")
    by_name = compute_all(qrels.rows, qrels.labels, ranks, qrels.n_queries, rel_level, metrics)
    per_query = {m.name: by_name[m.name][selected] for m in metrics}
    means = {name: float(values.mean()) for name, values in per_query.items()}
    return ScoreResult(qrels.query_ids[selected], per_query, means, metrics, missing)


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
    metrics = checked_options(metrics, rel_level=rel_level, ties=ties, duplicates=duplicates, queries=queries,
                              depth=depth)
    run_rows = _run_rows(qrels, run)
    wanted = np.where(qrels.labels > 0, _judged_run_codes(qrels, run), -1)  # labels <= 0 add to no metric
    ranks = judged_ranks(qrels, run, run_rows, wanted, ties=ties, duplicates=duplicates, depth=depth)
    return scored(qrels, ranks, run_rows >= 0, metrics, rel_level, queries)
