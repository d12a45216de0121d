"""Export a stored run: its rankings as TREC run files, or the whole run as one JSON document.

TREC scores are derived from the rank (n, n-1, ..., 1) rather than copied from the retriever: trec_eval and our
scorer order documents by score and break ties by id, so only rank-derived scores reproduce the stored order exactly
when the retriever gave two chunks the same score (BM25 often does; identical chunk texts always do). The
retriever's own chunk scores are in the JSON export.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..answers.report import AnswerReport
from ..evaluation.report import STORED, EvalReport
from ..io.atomic import write_text_atomic
from ..scoring import PAD, Run
from ..scoring.trec import TrecWriteError, write_run
from .history import RunHistoryError, StoredRun

LEVELS = ("doc", "chunk")


def ranking(report: EvalReport | AnswerReport, level: str) -> Run:
    """The stored doc-level or chunk-level ranking of every question, as a scorer `Run` without scores."""
    if level not in LEVELS:
        raise RunHistoryError(f"level must be doc or chunk, got {level!r}")
    if report.kind == "answer" and report.config.retrieval is None:
        raise RunHistoryError(f"this answer run retrieved nothing (its contexts were {report.config.contexts}): "
                              "it has no ranking to export")
    rows = [q.retrieved_documents if level == "doc" else [c.chunk_id for c in q.retrieved_chunks]
            for q in report.questions]
    if level == "chunk" and report.questions and not any(rows):
        raise RunHistoryError("this run holds no chunk-level ranking (its retriever returned documents only)")
    vocabulary: dict[str, int] = {}
    depth = max((len(r) for r in rows), default=0)
    codes = np.full((len(rows), depth), PAD, np.int64)
    for i, row in enumerate(rows):
        codes[i, : len(row)] = [vocabulary.setdefault(item, len(vocabulary)) for item in row]
    return Run.from_arrays([q.id for q in report.questions], list(vocabulary), codes)


def write_trec(run: StoredRun, path, level: str = "doc") -> None:
    """One TREC run file (``qid Q0 docid rank score tag``, tag = the run id), written atomically. An id with a space
    or a control character is refused, not rewritten: trec_eval splits fields on whitespace, and an id changed on
    the way out would no longer match the qrels or the corpus."""
    try:
        write_run(ranking(run.report, level), Path(path), tag=run.id)
    except TrecWriteError as error:
        raise TrecWriteError(f"{error}; rename the file it comes from and build the dataset again, or export the run "
                             "with --format json, which holds any id") from None


def to_json(run: StoredRun) -> str:
    """The run as one JSON document: `StoredRun` (``format_version``, id, name, tags, provenance, report)."""
    return json.dumps(run.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n"


def write_json(run: StoredRun, path) -> None:
    write_text_atomic(path, to_json(run))


def read_json(path) -> StoredRun:
    """Read a file written by `write_json` (``runs export --format json``)."""
    path = Path(path)
    try:
        return StoredRun.model_validate_json(path.read_text(encoding="utf-8"), context={STORED: True})
    except (OSError, ValueError) as error:
        raise RunHistoryError(f"{path}: not a run exported by `ragretrieval runs export --format json`: "
                              f"{str(error).splitlines()[0]}") from None
