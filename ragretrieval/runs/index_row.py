"""A run's row in the runs index: what `save` copies out of the report, and what `list` reads back into a summary.

Why copies: `runs list` shows hundreds of runs from this one table without parsing a single report.
"""

from __future__ import annotations

import json
from datetime import datetime

from ..answers.report import AnswerReport
from ..evaluation.report import EvalReport
from ..io.redact import redact_urls
from ..scoring.answer_metrics import current_names
from .identity import package_versions, report_config_key, report_questions_fingerprint


def index_row(report: EvalReport | AnswerReport, name: str | None, created: datetime) -> dict:
    """The run's row in the index table: copies of the report's configuration, fingerprints and means."""
    cfg, ds = report.config, report.dataset
    retrieval = cfg if report.kind == "retrieval" else cfg.retrieval
    return dict(
        name=name, created_at=created.isoformat(timespec="microseconds"), kind=report.kind,
        retriever=retrieval.retriever if retrieval else f"({cfg.contexts} contexts)",
        model=retrieval.model if retrieval else None, store=retrieval.store if retrieval else "-",
        chunk_size=retrieval.chunk_size if retrieval else 0,
        chunk_overlap=retrieval.chunk_overlap if retrieval else 0, dataset_path=ds.path,
        corpus_fingerprint=ds.corpus_fingerprint, questions_fingerprint=report_questions_fingerprint(report),
        chunks_fingerprint=ds.chunks_fingerprint,
        config_key=report_config_key(report), labels_fingerprint=ds.labels_fingerprint,
        n_questions=ds.n_questions, n_answered=answered_count(report),
        n_documents=ds.n_documents, n_chunks=ds.n_chunks, embedded_texts=report.embedded_texts,
        total_seconds=float(report.timings.get("total", 0.0)), config=redact_urls(cfg.model_dump_json()),
        means=json.dumps(report.means), timings=json.dumps(report.timings),
        packages=json.dumps(package_versions()),
    )


def summary_fields(row) -> dict:
    """The fields of a `RunSummary` that are read from the row rather than copied: means, time, generator, rerank."""
    return {"means": _current_means(json.loads(row["means"])), "created_at": datetime.fromisoformat(row["created_at"]),
            **_from_config(row)}


def _current_means(means: dict) -> dict:
    """An index row's means, with the checks' aggregates of an answer run stored before under today's names."""
    answer = means.get("answer")
    return {**means, "answer": current_names(answer)} if isinstance(answer, dict) else means


def answered_count(report: EvalReport | AnswerReport) -> int | None:
    """An answer run's questions that got an answer; None for a retrieval run."""
    return sum(q.error is None for q in report.questions) if report.kind == "answer" else None


def _from_config(row) -> dict:
    """A run's `generator` (an answer run's spec; a retrieval run has none) and `rerank` (the --rerank spec of its
    retrieval, nested in an answer run's), read from its stored configuration, parsed once."""
    config = json.loads(row["config"])
    answer = row["kind"] == "answer"
    retrieval = (config.get("retrieval") or {}) if answer else config
    return {"generator": config.get("generator") if answer else None,
            "rerank": (retrieval.get("rerank") or {}).get("name")}
