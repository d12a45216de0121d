"""The evaluation report: a versioned JSON schema (docs/report-format.md) and its text rendering."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .validation import load_json, save_json, supported_version

REPORT_VERSION = 1
GRANULARITIES = ("doc", "chunk")
SUMMARY_COLUMNS = (("recall", "Recall"), ("precision", "Precision"), ("mrr", "MRR"), ("hit_rate", "Hit Rate"),
                   ("f1", "F1"), ("ndcg", "nDCG"))


class ReportError(Exception):
    """A file that is not a readable evaluation report."""


class EvalConfig(BaseModel):
    """Everything that decides an evaluation's numbers."""

    model_config = ConfigDict(extra="forbid")
    retriever: str = "dense"
    model: str | None = "m3e-small"
    store: str = "faiss"
    store_options: dict = Field(default_factory=dict)
    retriever_options: dict = Field(default_factory=dict)  # http / run-file settings, docs/bring-your-own.md
    chunk_size: int = 300
    chunk_overlap: int = 50
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10])
    top_k: int = 5
    granularity: str = "both"
    rel_level: int = 1

    @model_validator(mode="after")
    def _model_only_for_dense(self):
        """Only the dense retriever has a model: a bm25 run must not be recorded as using one."""
        if self.retriever != "dense":
            self.model = None
        return self


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


class EvalReport(BaseModel):
    """One evaluation: configuration, data fingerprints, timings, means per granularity, per-question results."""

    report_version: int = REPORT_VERSION
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    ragretrieval_version: str
    config: EvalConfig
    embedder_identity: str | None = None
    dataset: DatasetInfo
    timings: dict[str, float]
    embedded_texts: int = 0
    notes: list[str] = Field(default_factory=list)
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


def question_line(i: int, n: int, result: QuestionResult, granularity: str, k: int) -> str:
    values = result.metrics[granularity]
    return (f"[{i}/{n}] {result.text}... Recall={values[f'recall@{k}']:.2f}, "
            f"Precision={values[f'precision@{k}']:.2f}, MRR={values[f'mrr@{k}']:.2f}")


def summary_table(report: EvalReport) -> str:
    """Plain-text summary: one row per k, one block per granularity, then sizes and timings."""
    cfg, ds = report.config, report.dataset
    names = {"doc": "document", "chunk": "chunk"}
    lines = []
    for granularity, means in report.means.items():
        lines.append(f"{names[granularity]} level ({ds.n_questions} questions, {ds.n_documents} documents, "
                     f"{ds.n_chunks} chunks)")
        header = f"  {'k':>4}" + "".join(f"  {title + '@k':>12}" for _, title in SUMMARY_COLUMNS)
        lines.append(header)
        for k in cfg.ks:
            cells = "".join(f"  {means[f'{family}@{k}']:>12.4f}" for family, _ in SUMMARY_COLUMNS)
            lines.append(f"  {k:>4}{cells}")
        lines.append("")
    what = f"{cfg.retriever}" + (f" ({cfg.model}, {cfg.store})" if cfg.retriever == "dense" else "")
    lines.append(f"retriever: {what}; chunks: size {cfg.chunk_size}, overlap {cfg.chunk_overlap}")
    timing = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in report.timings.items())
    lines.append(f"time: {timing}; texts embedded: {report.embedded_texts}")
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)
