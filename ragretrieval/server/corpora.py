"""Corpora: the dataset folders under ``serve --datasets DIR`` (each with a ``manifest.json``, as `build-dataset` and
the importers write them), named by their path relative to DIR, so a folder right under DIR is named by its folder
name. DIR itself counts when it is a dataset. Folders are searched three levels deep, skipping virtual
environments, version control and caches, so ``--datasets .`` at a project's root finds ``.demo/dataset``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..answers.checks import CheckError, check_expect
from ..data.dataset import MANIFEST_FILE, QUESTIONS_FILE, DatasetError, Manifest, QuestionRecord, read_jsonl
from ..errors import MissingInputError
from ..io.jsonfiles import load_json
from .store import Invalid

MAX_DEPTH = 3
SKIPPED = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".ragretrieval", ".pytest_cache",
           ".mypy_cache", ".ruff_cache", "site-packages", ".tox"}


@dataclass(frozen=True)
class ServedCorpus:
    """A dataset folder the web app serves, by name (not `data.corpus.Corpus`, the documents themselves)."""

    name: str
    path: Path
    documents: int
    questions: int


def _walk(root: Path):
    for folder, subfolders, files in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED and depth < MAX_DEPTH)
        if MANIFEST_FILE in files:
            yield Path(folder)


def find_corpora(root) -> list[ServedCorpus]:
    """Every readable dataset folder under `root`, by name; unreadable manifests are left out."""
    root = Path(root).resolve()
    found = []
    for folder in _walk(root):
        try:
            manifest = load_json(Manifest, folder / MANIFEST_FILE, DatasetError, "not a dataset manifest", "manifest")
        except (DatasetError, MissingInputError, OSError):  # gone since the walk saw it
            continue
        name = folder.relative_to(root).as_posix() if folder != root else root.name
        found.append(ServedCorpus(name, folder, manifest.n_documents, manifest.n_questions))
    return sorted(found, key=lambda c: c.name)


def find_corpus(root, name: str) -> ServedCorpus:
    for corpus in find_corpora(root):
        if corpus.name == name:
            return corpus
    raise Invalid(f"no corpus {name!r} under {Path(root).resolve()} (a corpus is a dataset folder made by "
                  "dataset build; GET /api/v1/corpora lists them)")


def corpus_questions(corpus: ServedCorpus) -> list[QuestionRecord]:
    """The dataset's own questions (its ``questions.jsonl``), validated: their checks too, so that a value no check
    can score (a dataset imported before the checks existed) is refused when the set is made, naming the question
    and the field, not when an evaluation runs."""
    path = corpus.path / QUESTIONS_FILE
    records = read_jsonl(path, QuestionRecord)
    for record in records:
        try:
            check_expect(record.expect, f"{path}: question {record.id!r}")
        except CheckError as error:
            raise Invalid(str(error)) from None
    return records


def question_fields(record: QuestionRecord) -> dict:
    """A dataset question as a question-set row: its type and ground truth where the record has them (as typed
    fields or in its metadata, as the LLM question builder writes them), else USER_DEFINED and empty."""
    metadata = record.metadata or {}
    kind = getattr(record, "question_type", None) or metadata.get("question_type") or "USER_DEFINED"
    truth = getattr(record, "ground_truth", None) or metadata.get("ground_truth") or ""
    return {"question_type": str(kind)[:50], "question_text": record.text, "ground_truth": str(truth),
            "source_record": record.model_dump(mode="json")}
