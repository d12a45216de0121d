"""The answer report: one answer run (``ragretrieval answer``, a web evaluation) as a versioned JSON document, stored in
the runs history as ``kind="answer"`` beside retrieval runs (docs/answers/reports.md, "The answer report").

Per question it holds what a reader needs to judge the answer without running anything again: the question, its
reference answer, the answer, the contexts in the order the generator saw them, the citations read from the answer,
every check value, the tokens, latency and cost, the generator's error if it failed, and, when retrieval ran, the
retrieval metrics of that same ranking. Values that `compare` pairs live in ``metrics[level]`` exactly as in an
`EvalReport` (``answer`` for the checks, ``doc`` and ``chunk`` for retrieval), so one code path serves both kinds.
``judges`` is where LLM judges (docs/answers/check.md, "Scorers") put their verdicts with their reasoning.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from ..errors import RagretrievalError
from ..evaluation.report import (
    ANSWER_LEVEL,  # noqa: F401 (its home before 0.3 was here: still importable from this module)
    STORED,
    DatasetInfo,
    EvalConfig,
    EvalReport,
    ReportError,
    RetrievedChunk,
    metrics_frame,
)
from ..io.jsonfiles import json_damage, load_json, save_json, supported_version
from ..io.redact import redact_urls
from ..scoring.answer_metrics import current_names

ANSWER_REPORT_VERSION = 2  # 2: the checks' aggregates are checks_score, checks_correctness, checks_safety
CONTEXT_MODES = ("retrieved", "given")


def answered_label(answered: int, total: int) -> str:
    """``10 of 30 answered``: how many questions of an answer run got an answer (its answer means are over those)."""
    return f"{answered} of {total} answered"


class AnswerReportError(RagretrievalError):
    """A file that is not a readable answer report."""


class CheckConfig(BaseModel):
    """How answers were checked; every field changes numbers, so all of them are part of the run's identity."""

    model_config = ConfigDict(extra="forbid")
    lemmatizer: str = "none"  # the lemmatiser's identity (fst: names the files' hash)
    match: str = "substring"
    refusal_message: str
    unsafe_words: str | None = None  # "file name@sha256:..." of --unsafe-words
    citation_pattern: str | None = None


class AnswerConfig(BaseModel):
    """Everything that decides an answer run's numbers."""

    model_config = ConfigDict(extra="forbid")
    generator: str  # the --generator spec: extractive, openai:<model>, http:<url>, file:<path>
    generator_settings: dict = Field(default_factory=dict)  # public settings: endpoint, temperature, prompt hash, ...
    contexts: str = "retrieved"  # retrieved | given | generator (contexts came with the answers)
    context_k: int | None = 5  # chunks shown to the generator (retrieved contexts)
    shuffle_context: bool = False
    seed: int | None = None  # of --shuffle-context
    retrieval: EvalConfig | None = None  # set when retrieval ran
    checks: CheckConfig
    scorers: dict[str, dict] = Field(default_factory=dict)  # per-question scorers beyond the checks (judges)


class ContextUsed(BaseModel):
    """One context as shown to the generator (position = index in the list, the number it cites)."""

    doc_id: str | None = None
    chunk_id: str | None = None
    title: str = ""
    text: str
    score: float | None = None


class Citation(BaseModel):
    position: int
    doc_id: str | None = None  # None: a position outside the contexts


class AnsweredQuestion(BaseModel):
    id: str
    text: str
    question_type: str | None = None
    ground_truth: str | None = None
    answer: str = ""
    contexts: list[ContextUsed] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    metrics: dict[str, dict[str, float]] = Field(default_factory=dict)  # level -> metric -> value
    score: float | None = None  # the mean of the question's own checks (None: it has none)
    judges: dict[str, dict] = Field(default_factory=dict)  # judge name -> {value, reasoning, ...}
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    latency: float = 0.0  # seconds the generator took (for a cached answer: when it was asked)
    cost: float = 0.0
    cached: bool = False
    error: str | None = None  # the generator failed for this question; its checks are not scored
    evidence_shown: bool | None = None  # a relevant span (or document) among the contexts; None: unknown
    failure_class: str | None = None  # answers/failures.py: why it went wrong (or right); None in runs before 0.3
    relevant: list[str] = Field(default_factory=list)
    relevant_grades: dict[str, int] = Field(default_factory=dict)
    retrieved_chunks: list[RetrievedChunk] = Field(default_factory=list)
    retrieved_documents: list[str] = Field(default_factory=list)


class JudgeSummary(BaseModel):
    """One judge over a run (answers/judges/summary.py): how many verdicts it gave, failed or skipped, what they cost,
    how often repeated samples disagreed, and how well it agrees with the matching deterministic check."""

    judged: int = 0  # questions with a verdict
    failed: int = 0  # no verdict: malformed after one repair request, or a refused request; left out of the mean
    skipped: int = 0  # the judge does not apply (no reference answer, no contexts)
    failures: list[str] = Field(default_factory=list)  # the first distinct reasons
    skipped_because: dict[str, int] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    requests: int = 0  # answers taken, repair requests and repeated samples included (cached ones too)
    latency: float = 0.0  # seconds the judge's requests took, summed
    samples: int = 1  # --judge-samples
    disagreement_rate: float | None = None  # share of judged questions whose samples did not all agree
    agreement: dict | None = None  # with the matching check: check, statistic, value, n, observed or p


def current_question(question):
    """An answered question as stored (JSON) with its checks' aggregates under today's names (`current_names`)."""
    metrics = question.get("metrics") if isinstance(question, dict) else None
    if not isinstance(metrics, dict) or not isinstance(metrics.get(ANSWER_LEVEL), dict):
        return question
    return {**question, "metrics": {**metrics, ANSWER_LEVEL: current_names(metrics[ANSWER_LEVEL])}}


class AnswerReport(BaseModel):
    """One answer run: configuration, data fingerprints, means with 95% CIs, usage, per-question results."""

    kind: Literal["answer"] = "answer"
    report_version: int = ANSWER_REPORT_VERSION
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    ragretrieval_version: str
    config: AnswerConfig
    dataset: DatasetInfo
    answer_labels_fingerprint: str
    embedder_identity: str | None = None
    embedded_texts: int = 0
    retriever: dict = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    means: dict[str, dict[str, float]] = Field(default_factory=dict)  # level -> metric -> mean
    intervals: dict[str, dict[str, tuple[float, float]]] = Field(default_factory=dict)  # bootstrap 95% CIs
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)  # level -> metric -> questions that have it
    by_type: dict[str, dict[str, float]] = Field(default_factory=dict)  # question_type -> metric -> mean
    usage: dict[str, float] = Field(default_factory=dict)
    failed: int = 0
    judges: dict[str, JudgeSummary] = Field(default_factory=dict)  # judge name -> its summary over the run
    judged_from: str | None = None  # judge-answers --new-run: the id of the run whose answers were judged
    failure_classes: dict[str, int] = Field(default_factory=dict)  # class -> questions (answers/failures.py)
    judge_noise: dict[str, dict] = Field(default_factory=dict)  # judge name -> its audit (answers/judges/audit.py)
    # the `AnswerSettings` the run was made with (AnswerSettings.recorded: no secret), for `runs show --config`;
    # not part of the configuration key (`config` is); None before 0.3
    settings: dict | None = None
    # the data's language the run's prompts and checks were chosen for (zh, en, pl): what judges added later read;
    # a run stored without it gets the language of its questions when it is read
    language: Literal["zh", "en", "pl"] | None = None  # answers/prompt.py's LANGUAGES
    questions: list[AnsweredQuestion]

    @model_validator(mode="before")
    @classmethod
    def _from_version_1(cls, data):
        """A version 1 report named the checks' aggregates ``score``, ``correctness`` and ``safety``, as the judges
        are named: read under today's names (`current_names`), so an old run compares with a new one."""
        if not isinstance(data, dict) or data.get("report_version") != 1:
            return data
        data = {**data, "report_version": ANSWER_REPORT_VERSION}
        for field in ("means", "intervals", "counts"):
            found = data.get(field)
            if isinstance(found, dict) and isinstance(found.get(ANSWER_LEVEL), dict):
                data[field] = {**found, ANSWER_LEVEL: current_names(found[ANSWER_LEVEL])}
        if isinstance(data.get("by_type"), dict):
            data["by_type"] = {kind: current_names(means) if isinstance(means, dict) else means
                               for kind, means in data["by_type"].items()}
        if isinstance(data.get("questions"), list):
            data["questions"] = [current_question(question) for question in data["questions"]]
        return data

    @model_validator(mode="after")
    def _language(self):
        if self.language is None:
            from .prompt import pick_language

            self.language = pick_language([q.text for q in self.questions])
        return self

    @field_validator("report_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("report_version", version, ANSWER_REPORT_VERSION)

    def save(self, path) -> None:
        save_json(self, path)

    def __str__(self) -> str:
        """The table `ragretrieval answer` prints."""
        from .render import metric_table

        return metric_table(self)

    def to_pandas(self):
        """A pandas DataFrame with one row per question and metric: question_id, question, level (answer, doc,
        chunk), metric, value."""
        return metrics_frame(self)
    @property
    def answered(self) -> str:
        """``10 of 30 answered``: what every table of the run says next to its means (they are over those)."""
        return answered_label(len(self.questions) - self.failed, len(self.questions))

    @classmethod
    def load(cls, path) -> "AnswerReport":
        return load_json(cls, path, AnswerReportError, "not an answer report (--out of `ragretrieval answer`)",
                         "report", context={STORED: True})


def _kind(value) -> str:
    """Reports written before answer runs existed carry no kind: they are retrieval reports."""
    if isinstance(value, dict):
        return value.get("kind", "retrieval")
    return getattr(value, "kind", "retrieval")


Report = Annotated[Union[Annotated[EvalReport, Tag("retrieval")], Annotated[AnswerReport, Tag("answer")]],
                   Discriminator(_kind)]


class _AnyReport(BaseModel):
    report: Report


def parse_report(text: str) -> EvalReport | AnswerReport:
    """A stored report of either kind from its JSON text."""
    return _AnyReport.model_validate_json('{"report":' + text + "}", context={STORED: True}).report


ANY_REPORT = "an eval or answer report (--out of `ragretrieval eval` or `ragretrieval answer`)"
ANSWER_REPORT = "an answer report (--out of `ragretrieval answer`)"


def load_report(path, expected: str = ANY_REPORT) -> EvalReport | AnswerReport:
    """An ``eval --out`` or ``answer --out`` file, whichever it is; problems name the file and the field. A file that
    is not JSON (empty, truncated, something else) says so and names `expected`, the kind the caller reads."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ReportError(f"{path}: cannot read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not UTF-8 text, so not JSON; expected {expected}") from None
    damage = json_damage(text)
    if damage:
        raise ReportError(f"{path}: {damage}; expected {expected}")
    head = json.loads(text)
    if isinstance(head, dict) and head.get("kind") == "answer":
        try:
            return AnswerReport.load(path)
        except AnswerReportError as error:
            raise ReportError(str(error)) from None
    return EvalReport.load(path)


def answer_config_key(config: AnswerConfig, corpus_fingerprint: str, questions_fp: str, labels_fp: str | None,
                      answer_labels_fp: str) -> str:
    """What identifies an answer run's inputs (runs/identity.py explains configuration keys): the whole
    configuration (generator and its public settings with the prompt's hash, contexts, checks, scorers, and the
    retrieval settings a retrieval run's key covers), the corpus, the questions and both kinds of labels."""
    settings = config.model_dump(mode="json")
    if config.retrieval is not None:
        settings["retrieval"] = config.retrieval.identity_settings()
    parts = {"kind": "answer", "config": settings, "corpus": corpus_fingerprint, "questions": questions_fp,
             "labels": labels_fp, "answer_labels": answer_labels_fp}
    text = redact_urls(json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
