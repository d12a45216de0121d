"""The evaluation report: a versioned JSON schema (docs/report-format.md); its text rendering is render.py."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import RagretrievalError
from ..io.jsonfiles import load_json, save_json, supported_version

REPORT_VERSION = 1
GRANULARITIES = ("doc", "chunk")


class ReportError(RagretrievalError):
    """A file that is not a readable evaluation report."""


DISPLAY_ONLY = ("top_k",)  # configuration fields that change no number
ADDED_LATER = ("embed", "rerank")  # fields added in 0.3: left out of keys while unset, so older keys stay valid


class EvalConfig(BaseModel):
    """Everything that decides an evaluation's numbers."""

    model_config = ConfigDict(extra="forbid")
    retriever: str = "dense"
    model: str | None = "m3e-small"
    store: str = "faiss"
    store_options: dict = Field(default_factory=dict)
    retriever_options: dict = Field(default_factory=dict)  # http / run-file / hybrid settings
    # embedding settings that differ from the defaults (EmbedSettings: API endpoint, dimensions, prefixes, ...);
    # None, as in runs made before 0.3, leaves the configuration key unchanged
    embed: dict | None = None
    rerank: dict | None = None  # RerankSettings of a reranking stage after the retriever (None: no reranking)
    chunk_size: int = 300
    chunk_overlap: int = 50
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10])
    top_k: int | None = None  # display only: the k of per-question lines [default: the largest k]; not identity
    granularity: str = "both"
    rel_level: int = 1

    @model_validator(mode="after")
    def _consistent(self):
        """Only retrievers that embed have a model (a bm25 run must not be recorded as using one); the k of the
        per-question lines is one of the cutoffs (the largest by default)."""
        if not _uses_model(self.retriever):
            self.model = None
            if not (self.rerank or {}).get("name", "").startswith("embed:"):
                self.embed = None  # nothing of this run embeds: its settings would only change the key
        if self.embed is not None:
            from ..embedders.settings import EmbedSettings

            self.embed = EmbedSettings.parse(self.embed).recorded()
        if self.rerank is not None:
            from ..retrieval.rerank.base import RerankSettings

            self.rerank = RerankSettings.parse(self.rerank).recorded()
        if self.ks:
            if self.top_k is None:
                self.top_k = max(self.ks)
            elif self.top_k not in self.ks:
                self.ks = sorted({*self.ks, self.top_k})
        return self


    def identity_settings(self) -> dict:
        """The settings that change a number, as a run's configuration key covers them (runs/identity.py): all but
        the display-only ``top_k``, the fields added in 0.3 while unset (so older keys stay valid), and embedding
        settings that change only speed or the bill."""
        from ..embedders.settings import SPEED_ONLY

        settings = {k: v for k, v in self.model_dump(mode="json").items()
                    if k not in DISPLAY_ONLY and not (k in ADDED_LATER and v is None)}
        embed = {k: v for k, v in (settings.pop("embed", None) or {}).items() if k not in SPEED_ONLY}
        if embed:
            settings["embed"] = embed
        return settings


def _uses_model(retriever: str) -> bool:
    """Whether the retriever's spec reads --model (its registry class lists it); unknown names keep theirs."""
    from ..retrieval.registry import RetrieverError, retriever_class

    try:
        return "model" in retriever_class(retriever).config_fields
    except RetrieverError:
        return True


class RetrievedChunk(BaseModel):
    chunk_id: str
    parent_id: str
    score: float


class QuestionResult(BaseModel):
    id: str
    text: str
    relevant: list[str]
    relevant_grades: dict[str, int] = Field(default_factory=dict)  # doc id -> graded label (empty in old reports)
    retrieved_chunks: list[RetrievedChunk]
    retrieved_documents: list[str]
    metrics: dict[str, dict[str, float]]  # granularity -> metric name -> value


class DatasetInfo(BaseModel):
    path: str
    corpus_fingerprint: str
    chunks_fingerprint: str
    n_documents: int
    n_questions: int
    n_chunks: int
    label_sources: list[str] = Field(default_factory=list)
    # sha256 over every label that decides a number: question ids, texts, relevant documents, grades, spans, and the
    # content of a --judgements file; None in reports written before 0.2 (runs/identity.py)
    labels_fingerprint: str | None = None


class EvalReport(BaseModel):
    """One evaluation: configuration, data fingerprints, timings, means per granularity, per-question results."""

    kind: Literal["retrieval"] = "retrieval"  # answer runs are `AnswerReport`s (answers/report.py)
    report_version: int = REPORT_VERSION
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    ragretrieval_version: str
    config: EvalConfig
    embedder_identity: str | None = None
    dataset: DatasetInfo
    timings: dict[str, float]
    embedded_texts: int = 0
    notes: list[str] = Field(default_factory=list)
    # how it retrieved, beyond the configuration: the retriever spec, embedder identities, parts (empty before 0.2)
    retriever: dict = Field(default_factory=dict)
    means: dict[str, dict[str, float]]  # granularity -> metric name -> mean over questions
    questions: list[QuestionResult]

    @field_validator("report_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("report_version", version, REPORT_VERSION)

    def save(self, path) -> None:
        save_json(self, path)

    @classmethod
    def load(cls, path) -> "EvalReport":
        """Read a report written by `save` (``eval --out``), naming the file and field of any problem."""
        return load_json(cls, path, ReportError, "not an eval report (--out of `ragretrieval eval`)", "report")
