"""What identifies a run's inputs: the question-set fingerprint, the configuration key, and package versions.

The configuration key is what a sweep uses to recognise a finished cell, and what tells two runs apart as "same
settings on the same data": it hashes the whole `EvalConfig` with the corpus and question fingerprints, and leaves
out the dataset's folder (the same data in another folder is the same experiment).
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from importlib import metadata
from typing import Iterable

from ..report import EvalConfig, EvalReport

# Distributions whose versions can change a run's numbers or speed.
TRACKED_PACKAGES = ("ragretrieval", "numpy", "faiss-cpu", "sentence-transformers", "torch", "transformers", "bm25s",
                    "pydantic", "sqlalchemy")


def _digest(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def questions_fingerprint(questions: Iterable[tuple[str, str, Iterable[str]]]) -> str:
    """sha256 over (id, text, relevant document ids) of each question, in order.

    Computed from what a report holds, so a stored run and a loaded dataset give the same value; label grades and
    spans are not part of a report and so not part of this fingerprint.
    """
    return _digest([[qid, text, list(relevant)] for qid, text, relevant in questions])


def report_questions_fingerprint(report: EvalReport) -> str:
    return questions_fingerprint((q.id, q.text, q.relevant) for q in report.questions)


def config_key(config: EvalConfig, corpus_fingerprint: str, questions_fp: str) -> str:
    return _digest({"config": config.model_dump(mode="json"), "corpus": corpus_fingerprint,
                    "questions": questions_fp})[:32]


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
