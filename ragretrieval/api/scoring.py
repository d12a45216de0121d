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


def _nested(frame, what: str, values: tuple[str, ...], cast) -> dict[str, dict]:
    """A DataFrame of (query, doc, value) rows as ``{query: {doc: cast(value)}}``. A missing cell (None, NaN,
    pd.NA) or a value `cast` cannot take is a `ScoringError` naming the row (its index label) and the column:
    ``str(pd.NA)`` would otherwise be a query called "<NA>", and a NaN grade a bare ValueError."""
    query, doc = _column(frame, QUERY_COLUMNS, what, "query"), _column(frame, DOC_COLUMNS, what, "document")
    value = _column(frame, values, what, "value")
    columns = [query, doc, value]
    missing = frame[columns].isna()
    if missing.to_numpy().any():
        row = missing.any(axis=1).to_numpy().argmax()
        column = next(name for name in columns if missing[name].iloc[row])
        raise ScoringError(f"{what}: row {frame.index.tolist()[row]!r}: column {column!r} is missing (None, NaN or "
                           "NA)")
    nested: dict[str, dict] = {}
    for row, q, d, v in zip(frame.index.tolist(), frame[query].astype(str), frame[doc].astype(str), frame[value]):
        try:
            typed = cast(v)
        except (TypeError, ValueError):
            raise ScoringError(f"{what}: row {row!r}: column {value!r}: {v!r} is not {_KINDS[cast]}") from None
        nested.setdefault(q, {}).setdefault(d, typed)
    return nested


def _grade(value) -> int:
    """A relevance label: a whole number (2 and 2.0; not 1.5, which int() would make 1, nor a boolean)."""
    if isinstance(value, bool) or value != int(value):
        raise ValueError(value)
    return int(value)


_KINDS = {_grade: "a whole number (a grade)", float: "a number"}


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
        value = _nested(value, what, columns, cast)
    if isinstance(value, dict):
        return kind.from_dict(value)
    raise ScoringError(f"{what} must be a dict, a TREC {what} file or a DataFrame; got {type(value).__name__}")


def as_qrels(qrels) -> Qrels:
    """`Qrels`, ``{query: {doc: grade}}``, a TREC qrels file, or a DataFrame (query_id, doc_id, relevance)."""
    from ..scoring.trec import read_qrels

    return _read(qrels, "qrels", Qrels, read_qrels, LABEL_COLUMNS, _grade)


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
