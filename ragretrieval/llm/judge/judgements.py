"""The judgements file: graded chunk labels from an LLM judge, which ``eval --judgements FILE`` uses as its
chunk-level labels (format in docs/llm.md).

Chunk ids only mean something under one chunking of one corpus, so the file records the corpus fingerprint, the chunk
size and overlap and the chunks fingerprint, and `qrels` refuses chunks that do not match. This module needs no
`openai`: reading labels is part of evaluating, not of judging.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...data.chunking import chunks_fingerprint
from ...errors import RagretrievalError
from ...io.jsonfiles import load_json, save_json, supported_version
from ...scoring import Qrels
from ...work.options import SettingsError

JUDGEMENTS_VERSION = 1


class JudgementsError(RagretrievalError, ValueError):
    """A judgements file that is missing, malformed, or made for other chunks."""


class ChunkLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question_id: str
    chunk_id: str
    grade: int = Field(ge=0, le=3)
    reasoning: str = ""


class FailedJudgement(BaseModel):
    question_id: str
    chunk_id: str
    reason: str


class Judgements(BaseModel):
    """Graded (question, chunk) pairs: 3 answers the question, 2 partly, 1 on topic only, 0 unrelated."""

    model_config = ConfigDict(extra="forbid")
    format_version: int = JUDGEMENTS_VERSION
    corpus_fingerprint: str
    chunk_size: int
    chunk_overlap: int
    chunks_fingerprint: str
    judge: dict  # model, base_url (no credentials), prompt, prompt_hash, depth, runs
    usage: dict = Field(default_factory=dict)
    labels: list[ChunkLabel]
    failed: list[FailedJudgement] = Field(default_factory=list)

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("format_version", version, JUDGEMENTS_VERSION)

    def save(self, path) -> None:
        save_json(self, path)

    @classmethod
    def load(cls, path) -> "Judgements":
        return load_json(cls, path, JudgementsError,
                         "not a judgements file (--out of `ragretrieval judge chunks`)", "file")

    @classmethod
    def load_labels(cls, path) -> "Judgements":
        """`load`, refusing a file without a single label: scoring with it would give all-zero chunk metrics."""
        judgements = cls.load(path)
        if not judgements.labels:
            raise JudgementsError(f"{path}: holds no labels ({len(judgements.failed)} judgements failed); judge "
                                  "again before scoring chunks with it")
        return judgements

    @property
    def fingerprint(self) -> str:
        """sha256 over what decides chunk metrics: the chunking and every (question, chunk, grade)."""
        labels = sorted((label.question_id, label.chunk_id, label.grade) for label in self.labels)
        text = json.dumps([self.corpus_fingerprint, self.chunks_fingerprint, labels], ensure_ascii=False)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def source(self) -> str:
        return f"judge:{self.judge.get('model')}"

    @property
    def note(self) -> str:
        questions = len({label.question_id for label in self.labels})
        return (f"chunk level: labels from an LLM judge ({self.judge.get('model')}, prompt "
                f"{self.judge.get('prompt_hash')}): {len(self.labels)} graded chunks over {questions} questions, "
                f"pooled from the top {self.judge.get('depth')} of {len(self.judge.get('runs', []))} run(s); "
                "unjudged chunks count as not relevant")

    def qrels(self, question_ids, chunks, corpus_fingerprint: str) -> Qrels:
        """Labels for `question_ids` (in that order) over these `chunks`, which must be the judged chunking."""
        if corpus_fingerprint != self.corpus_fingerprint:
            raise JudgementsError("these judgements were made on another corpus (its fingerprint differs)")
        if chunks_fingerprint(chunks) != self.chunks_fingerprint:
            raise SettingsError(
                f"these judgements label other chunks (made with chunk size {self.chunk_size}, overlap "
                f"{self.chunk_overlap}); evaluate with chunk_size {self.chunk_size} and chunk_overlap "
                f"{self.chunk_overlap} on the same corpus, or judge this chunking", ["chunk_size", "chunk_overlap"])
        return self.as_qrels(question_ids)

    def as_qrels(self, question_ids=None) -> Qrels:
        """The grades as `Qrels` over chunk ids, for `ragretrieval.scoring.score` or a TREC qrels file; questions in
        the given order (default: as first judged), a question without labels has an empty row."""
        order = question_ids if question_ids is not None else dict.fromkeys(label.question_id for label in self.labels)
        by_question: dict[str, dict[str, int]] = {qid: {} for qid in order}
        for label in self.labels:
            if label.question_id in by_question:
                by_question[label.question_id][label.chunk_id] = label.grade
        return Qrels.from_dict(by_question)
