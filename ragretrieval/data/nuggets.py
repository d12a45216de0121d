"""``nuggets.jsonl``: the atomic facts a good answer to each question holds (docs/dataset-format.md, "nuggets.jsonl";
docs/answers/nuggets.md, "Nugget evaluation").

One line per question: its id, its nuggets (each a short text and an importance, ``vital`` or ``okay``) and who wrote
them: ``written_by`` is ``llm`` for nuggets a model wrote (`ragretrieval questions nuggets`, which also records the
model, the prompt's hash and a fingerprint of what they were written from), anything else (``hand``, the default, or
a person's name) for nuggets written or edited by hand. An empty list says the question has no nuggets: the nuggets
judge does not apply to it (it is never scored 0 or 1).

The file sits beside the dataset's ``questions.jsonl``; it is written once and re-used by every run, and a person may
edit it (set ``written_by`` to ``hand`` on what you edit, so nothing rewrites it without ``--force``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..io.atomic import atomic_writer
from ..io.jsonfiles import supported_version
from .dataset import read_keyed_jsonl

NUGGETS_FILE = "nuggets.jsonl"
NUGGETS_VERSION = 1
IMPORTANCE = ("vital", "okay")
MODEL_WRITTEN = "llm"  # `written_by` of nuggets a model wrote; anything else is a person's


class Nugget(BaseModel):
    """One atomic fact: ``vital`` when an answer without it is not a good answer, ``okay`` when it only helps."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = Field(min_length=1)
    importance: Literal["vital", "okay"]

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("a nugget's text must not be blank")
        return text.strip()


class QuestionNuggets(BaseModel):
    """One line of ``nuggets.jsonl``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    nuggets_version: int = NUGGETS_VERSION
    question_id: str = Field(min_length=1)
    nuggets: list[Nugget]
    written_by: str = Field(default="hand", min_length=1)  # "llm", or a person ("hand", a name)
    model: str | None = None  # the model that wrote them (written_by "llm")
    prompt_hash: str | None = None  # of the prompt that asked for them
    source_sha256: str | None = None  # of the question, reference answer and passages they were written from

    @field_validator("nuggets_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("nuggets_version", version, NUGGETS_VERSION)

    @property
    def by_hand(self) -> bool:
        return self.written_by != MODEL_WRITTEN


def read_nuggets(path) -> dict[str, QuestionNuggets]:
    """Question id -> its nuggets, in file order; a bad line or a question listed twice raises `DatasetError` naming
    the file and the line."""
    found = read_keyed_jsonl(path, QuestionNuggets, lambda record: record.question_id,
                             "question {key} has nuggets twice")
    return {qid: record for qid, (_, record) in found.items()}


def write_nuggets(path, records: Iterable[QuestionNuggets]) -> None:
    """Write the file atomically (a reader sees the old file or the new one)."""
    with atomic_writer(path) as f:
        for record in records:
            f.write(record.model_dump_json(exclude_none=True) + "\n")


def nuggets_fingerprint(records: Iterable[QuestionNuggets]) -> str:
    """sha256 over every question's nuggets (id, text, importance), whoever wrote them: what the nuggets judge's
    verdicts depend on, so part of a judged run's identity."""
    data = sorted([r.question_id, [[n.text, n.importance] for n in r.nuggets]] for r in records)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
