"""`score`: ``ragretrieval score`` from Python, on dicts, TREC files or pandas DataFrames (docs/python.md)."""

from __future__ import annotations

from pathlib import Path

from ..scoring import Qrels, Run, ScoreResult, ScoringError
from ..scoring import score as score_arrays
from ..scoring.means import DEFAULT_METRICS

QUERY_COLUMNS = ("query_id", "q_id", "qid", "query")
DOC_COLUMNS = ("doc_id", "docid", "doc")
LABEL_COLUMNS = ("relevance", "label", "grade", "score")
SCORE_COLUMNS = ("score",)


def _column(frame, names: tuple[str, ...], what: str, which: str) -> str:
    found = next((name for name in names if name in frame.columns), None)
    if found is None:
        raise ScoringError(f"{what}: no {which} column (one of {', '.join(names)}); columns: "
                           f"{', '.join(map(str, frame.columns))}")
    return found


def _nested(frame, what: str, values: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """A DataFrame of (query, doc, value) rows as ``{query: {doc: value}}``."""
    query, doc = _column(frame, QUERY_COLUMNS, what, "query"), _column(frame, DOC_COLUMNS, what, "document")
    value = _column(frame, values, what, "value")
    nested: dict[str, dict[str, float]] = {}
    for q, d, v in zip(frame[query].astype(str), frame[doc].astype(str), frame[value]):
        nested.setdefault(q, {}).setdefault(d, v)
    return nested


def _is_frame(value) -> bool:
    return hasattr(value, "columns") and hasattr(value, "to_dict")


def as_qrels(qrels) -> Qrels:
    """`Qrels`, ``{query: {doc: grade}}``, a TREC qrels file, or a DataFrame (query_id, doc_id, relevance)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, Path)):
        from ..scoring.trec import read_qrels

        return read_qrels(qrels)
    if _is_frame(qrels):
        return Qrels.from_dict({q: {d: int(v) for d, v in docs.items()}
                                for q, docs in _nested(qrels, "qrels", LABEL_COLUMNS).items()})
    if isinstance(qrels, dict):
        return Qrels.from_dict(qrels)
    raise ScoringError(f"qrels must be a dict, a TREC qrels file or a DataFrame; got {type(qrels).__name__}")


def as_run(run, qrels: Qrels) -> Run:
    """`Run`, ``{query: {doc: score}}`` (or ``{query: [doc, ...]}`` best first), a TREC run file, or a DataFrame
    (query_id, doc_id, score)."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, Path)):
        from ..scoring.trec import read_run

        return read_run(run, doc_ids=qrels.doc_ids)
    if _is_frame(run):
        return Run.from_dict({q: {d: float(v) for d, v in docs.items()}
                              for q, docs in _nested(run, "run", SCORE_COLUMNS).items()})
    if isinstance(run, dict):
        return Run.from_dict(run)
    raise ScoringError(f"run must be a dict, a TREC run file or a DataFrame; got {type(run).__name__}")


def score(qrels, run, metrics=DEFAULT_METRICS, *, rel_level: int = 1, ties: str = "score", duplicates: str = "first",
          queries: str = "all", depth: int | None = None) -> ScoreResult:
    """Score `run` against `qrels`, as ``ragretrieval score`` does (trec_eval's rules, with ``-c``): each may be a
    dict, a TREC file or a DataFrame. `metrics`: names such as ``"ndcg@10"`` (default: the command's). The result
    has ``means`` and ``per_query`` (keyed by metric name) and prints as the command's table."""
    judged = as_qrels(qrels)
    return score_arrays(judged, as_run(run, judged), metrics, rel_level=rel_level, ties=ties, duplicates=duplicates,
                        queries=queries, depth=depth)
