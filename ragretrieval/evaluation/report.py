"""The evaluation report: a versioned JSON schema (docs/report-format.md); its text rendering is render.py."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ..data.chunking import ChunkPolicy
from ..embedders.sentence_transformer import DEFAULT_MODEL
from ..errors import RagretrievalError
from ..io.jsonfiles import load_json, save_json, supported_version
from ..retrieval.exact import ExactComparison
from ..retrieval.search_timing import SearchTiming
from ..stores.base import DEFAULT_STORE
from ..work.limits import Integer, cutoffs_problem
from ..work.options import SettingsError, SettingsModel, build_settings, plugin_options

REPORT_VERSION = 1
GRANULARITIES = ("doc", "chunk")
ANSWER_LEVEL = "answer"  # the `metrics` key of an answer run's answer-side values, beside the granularities


class ReportError(RagretrievalError):
    """A file that is not a readable evaluation report."""


# configuration fields that change no number: the per-question lines' k, and how searches are timed
DISPLAY_ONLY = ("top_k", "search_concurrency")
ADDED_LATER = ("embed", "rerank")  # fields added in 0.3: left out of keys while unset, so older keys stay valid
STORED = "stored"  # validation context of a configuration read back from a report: kept as it was recorded


class EvalConfig(SettingsModel):
    """Everything that decides an evaluation's numbers: the one place where the retrieval settings' defaults and
    rules live. ``ragretrieval eval``'s options, sweep grid cells, settings files (``--config``), the web API's
    options and `ragretrieval.evaluate`'s keyword arguments all build one of these; a bad value is a
    `SettingsError` naming the field (docs/python.md, "Settings").

    Plug-in options (`retriever_options`, `store_options`) are validated through the plug-in's options model and
    kept typed and canonical (``k1=1.2`` is the number 1.2 from every surface). A configuration read back from a
    stored report is kept as it was recorded, even when its plug-in is no longer installed."""

    model_config = ConfigDict(extra="forbid")
    retriever: str = Field("dense", min_length=1,
                           description="How to retrieve: dense (embeddings + vector store), bm25, hybrid (both, "
                                       "fused), http or run-file (your own; `ragretrieval plugins` lists them)")
    model: str | None = Field(DEFAULT_MODEL, min_length=1,
                              description="Embedding model: a name from `ragretrieval plugins`, or a "
                                          "sentence-transformers id or folder (dense and hybrid only)")
    store: str = Field(DEFAULT_STORE, min_length=1, description="Vector store (`ragretrieval plugins`)")
    store_options: dict = Field({}, description="The store's options, e.g. kind=hnsw "
                                                                  "(`ragretrieval plugins -v` lists them)")
    retriever_options: dict = Field({},
                                    description="The retriever's options, e.g. k1=1.2 for bm25, mapping=FILE for "
                                                "http (`ragretrieval plugins -v` lists them)")
    # embedding settings that differ from the defaults (EmbedSettings: API endpoint, dimensions, prefixes, ...);
    # None, as in runs made before 0.3, leaves the configuration key unchanged
    embed: dict | None = Field(None, description="Embedding settings (EmbedSettings: base_url, dimensions, "
                                                 "input_type, query_prefix, ...) that differ from the defaults")
    rerank: dict | None = Field(None, description="A reranking stage after the retriever (RerankSettings: name, "
                                                  "depth, ...); none by default")
    chunk_size: Integer = Field(ChunkPolicy.size, ge=1, description="Most characters per chunk")
    chunk_overlap: Integer = Field(ChunkPolicy.overlap, ge=0, description="Characters shared by consecutive cuts "
                                                                          "of a section")
    ks: list[Integer] = Field([1, 3, 5, 10], min_length=1,
                              description="Cutoffs to score, e.g. 1,3,5,10 (a list, or that text)")
    top_k: Integer | None = Field(None, ge=1, description="The k of the per-question lines (display only) "
                                                          "[default: the largest k]")
    granularity: Literal["doc", "chunk", "both"] = Field("both", description="Levels to score: doc, chunk or both")
    rel_level: Integer = Field(1, ge=1, description="Grade from which a label is relevant")
    search_concurrency: Integer = Field(4, ge=1, le=256,
                                        description="Threads of the concurrent search-timing pass (1: one thread "
                                                    "only); changes no number of the run")

    @field_validator("ks", mode="before")
    @classmethod
    def _ks_from_text(cls, value):
        if isinstance(value, str):
            parts = [part.strip() for part in value.split(",") if part.strip()]
            if not all(part.lstrip("-").isdigit() for part in parts):
                raise SettingsError(f"ks: expected comma-separated positive integers, got {value!r}", ["ks"])
            return [int(part) for part in parts]
        return value

    @field_validator("top_k")
    @classmethod
    def _bounded_top_k(cls, top_k: int | None, info: ValidationInfo) -> int | None:
        """top_k joins the cutoffs: the same bound (kept as recorded in a stored configuration)."""
        problem = None if top_k is None else cutoffs_problem([top_k])
        if problem is not None and not (info.context and info.context.get(STORED)):
            raise SettingsError(f"top_k: {problem}", ["top_k"])
        return top_k

    @field_validator("ks")
    @classmethod
    def _positive_ks(cls, ks: list[int], info: ValidationInfo) -> list[int]:
        """Each cutoff once, in order: [5, 1, 5] and [1, 5] are one setting (one configuration key); each bounded
        (work/limits.py), so that nothing is allocated k deep for a k no ranking reaches. A stored configuration is
        kept as it was recorded."""
        problem = cutoffs_problem(ks)
        if problem is not None and not (min(ks) > 0 and info.context and info.context.get(STORED)):
            raise SettingsError(f"ks: {problem}", ["ks"])
        return sorted(set(ks))

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo):
        """Only retrievers that embed have a model (a bm25 run must not be recorded as using one); the k of the
        per-question lines is one of the cutoffs (the largest by default); plug-in options are typed."""
        if self.chunk_overlap >= self.chunk_size:
            raise SettingsError(f"chunk_overlap must be smaller than chunk_size ({self.chunk_size}); got "
                                f"{self.chunk_overlap}", ["chunk_overlap", "chunk_size"])
        stored = bool(info.context and info.context.get(STORED))
        fields = _config_fields(self.retriever, strict=not stored)
        if "model" not in fields:
            self.model = None
            if not (self.rerank or {}).get("name", "").startswith("embed:"):
                self.embed = None  # nothing of this run embeds: its settings would only change the key
        if not stored:
            self._check_plugins(fields)
        if self.embed is not None:
            from ..embedders.settings import EmbedSettings

            self.embed = build_settings(EmbedSettings, self.embed, "embed.").recorded()
        if self.rerank is not None:
            from ..retrieval.rerank.base import RerankSettings

            if not self.rerank.get("name"):
                given = [f"rerank.{name}" for name in self.rerank if name != "name"]
                raise SettingsError(f"{', '.join(given) or 'rerank'} {'need' if len(given) > 1 else 'needs'} "
                                    "rerank.name, the reranker",
                                    [*given, "rerank.name"])
            self.rerank = build_settings(RerankSettings, self.rerank, "rerank.").recorded()
        if self.top_k is None:
            self.top_k = max(self.ks)
        elif self.top_k not in self.ks:
            self.ks = sorted({*self.ks, self.top_k})
        return self

    def _check_plugins(self, fields) -> None:
        """Plug-in options through the plug-ins' options models; unknown names refused, naming the known ones."""
        from ..retrieval.registry import retriever_class
        from ..retrieval.rerank.registry import check_reranker
        from ..stores import store_class

        plugin = retriever_class(self.retriever)
        self.retriever_options = plugin_options(getattr(plugin, "Options", None), self.retriever_options,
                                                f"retriever {self.retriever}", "retriever_options")
        if "store" in fields:
            try:
                store = store_class(self.store)
            except RagretrievalError as error:
                raise SettingsError(f"store: {error}", ["store"]) from None
            self.store_options = plugin_options(getattr(store, "Options", None), self.store_options,
                                                f"store {self.store}", "store_options")
        if self.rerank and self.rerank.get("name"):
            try:
                check_reranker(str(self.rerank["name"]))
            except RagretrievalError as error:
                raise SettingsError(f"rerank.name: {error}", ["rerank.name"]) from None

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


def _config_fields(retriever: str, strict: bool) -> tuple[str, ...]:
    """The configuration fields the retriever's spec reads (its registry class lists them); an unknown name is a
    `SettingsError` (`strict`) or, for a stored configuration, keeps every field."""
    from ..retrieval.registry import RetrieverError, retriever_class

    try:
        return tuple(retriever_class(retriever).config_fields)
    except RetrieverError as error:
        if strict:
            raise SettingsError(f"retriever: {error}", ["retriever"]) from None
        return ("model", "embed", "store", "store_options")


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
    # an ANN store's run only (retrieval/exact.py): exact_overlap@k, and the exact search's doc-level metrics
    exact_overlap: dict[str, float] = Field(default_factory=dict)
    exact_metrics: dict[str, float] = Field(default_factory=dict)


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
    # the questions file when it is not the dataset's own questions.jsonl (`eval --questions`), so a run's
    # settings file (`runs show --config`) names it; None before 0.3 and for questions given from Python
    questions: str | None = None


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
    search: SearchTiming | None = None  # the per-question timing pass (retrieval/search_timing.py); None before 0.4
    exact: ExactComparison | None = None  # an ANN store against exact search (retrieval/exact.py)

    @field_validator("report_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("report_version", version, REPORT_VERSION)

    def save(self, path) -> None:
        save_json(self, path)

    def __str__(self) -> str:
        """The summary table `ragretrieval eval` prints."""
        from .render import summary_table

        return summary_table(self)

    def to_pandas(self):
        """A pandas DataFrame with one row per question and metric: question_id, question, level, metric, value."""
        return metrics_frame(self)

    @classmethod
    def load(cls, path) -> "EvalReport":
        """Read a report written by `save` (``eval --out``), naming the file and field of any problem."""
        return load_json(cls, path, ReportError, "not an eval report (--out of `ragretrieval eval`)", "report",
                         context={STORED: True})


def metrics_frame(report):
    """One row per question and metric of a report (retrieval or answer): question_id, question, level (doc, chunk,
    answer), metric, value."""
    import pandas as pd

    rows = [(q.id, q.text, level, metric, value) for q in report.questions
            for level, values in q.metrics.items() for metric, value in values.items()]
    return pd.DataFrame(rows, columns=["question_id", "question", "level", "metric", "value"])
