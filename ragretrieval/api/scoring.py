"""`score`: ``ragretrieval score`` from Python, on dicts, TREC files or pandas DataFrames (docs/python.md)."""

from __future__ import annotations

from pathlib import Path

from ..scoring import Qrels, Run, ScoreResult, ScoringError, score_files
from ..scoring import score as score_arrays
from ..scoring.means import DEFAULT_METRICS
from ..scoring.stream import check_interleaved

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


def _read(value, what: str, kind, read, columns: tuple[str, ...], cast):
    """A `kind` (`Qrels`, `Run`) from itself, a TREC file (`read`), a DataFrame (`columns` holding the values) or a
    dict."""
    if isinstance(value, kind):
        return value
    if isinstance(value, (str, Path)):
        return read(value)
    if _is_frame(value):
        value = {q: {d: cast(v) for d, v in docs.items()} for q, docs in _nested(value, what, columns).items()}
    if isinstance(value, dict):
        return kind.from_dict(value)
    raise ScoringError(f"{what} must be a dict, a TREC {what} file or a DataFrame; got {type(value).__name__}")


def as_qrels(qrels) -> Qrels:
    """`Qrels`, ``{query: {doc: grade}}``, a TREC qrels file, or a DataFrame (query_id, doc_id, relevance)."""
    from ..scoring.trec import read_qrels

    return _read(qrels, "qrels", Qrels, read_qrels, LABEL_COLUMNS, int)


def as_run(run, qrels: Qrels) -> Run:
    """`Run`, ``{query: {doc: score}}`` (or ``{query: [doc, ...]}`` best first), a TREC run file, or a DataFrame
    (query_id, doc_id, score)."""
    from ..scoring.trec import read_run

    return _read(run, "run", Run, lambda path: read_run(path, doc_ids=qrels.doc_ids), SCORE_COLUMNS, float)


def score(qrels, run, metrics=DEFAULT_METRICS, *, rel_level: int = 1, ties: str = "score", duplicates: str = "first",
          queries: str = "all", depth: int | None = None, interleaved: str = "group", progress=None) -> ScoreResult:
    """Score `run` against `qrels`, as ``ragretrieval score`` does (trec_eval's rules, with ``-c``): each may be a
    dict, a TREC file or a DataFrame. `metrics`: names such as ``"ndcg@10"`` (default: the command's). The result
    has ``means`` and ``per_query`` (keyed by metric name) and prints as the command's table.

    A run given as a file (gzip too) is read as the command reads it, in batches of whole queries (`score_files`):
    memory never holds the whole run. `interleaved` says what to do when a query's lines are not together: "group"
    them on disk or "refuse" the run; `progress` (a `work.progress.Progress`) follows the reading."""
    check_interleaved(interleaved)  # whatever the run is, so a typo is never ignored
    judged = as_qrels(qrels)
    if isinstance(run, (str, Path)):
        return score_files(judged, run, metrics, rel_level=rel_level, ties=ties, duplicates=duplicates,
                           queries=queries, depth=depth, interleaved=interleaved, progress=progress)
    return score_arrays(judged, as_run(run, judged), metrics, rel_level=rel_level, ties=ties, duplicates=duplicates,
                        queries=queries, depth=depth)
