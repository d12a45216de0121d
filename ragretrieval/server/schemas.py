"""The JSON the API takes and gives (field names of the evaluation design: docs/web.md shows each with an example).

Inputs forbid unknown fields, so a client that sends an API key (``api_key``, ``openai_api_key``, ...) is told no
rather than having it silently stored: keys stay in the server's environment. A URL carrying a credential (user info,
a ``token=`` in its query: io/redact.py) is refused for the same reason, and the URLs an evaluation shows are
written without credentials (a row stored by an older version may hold one).
"""

from __future__ import annotations

import re
from typing import Generic, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from ..data.dataset import QuestionText
from ..io.redact import looks_secret, public_url, redact_urls, url_credentials
from .jobs.options import EvaluationOptions, default_retriever, web_retrievers

STATUSES = ("PENDING", "RUNNING", "PAUSED", "COMPLETED", "FAILED")
KINDS = ("answer", "retrieval")  # what an evaluation measures: answers (and their retrieval), or retrieval alone
ANSWER_ONLY = ("generator", "base_url", "judge", "judge_model", "judge_base_url")  # fields a retrieval one refuses
QUESTION_TYPES = ("FACTUAL", "INFERENTIAL", "USER_DEFINED")  # the design's; any other short label is kept as given
MAX_QUESTIONS = 20_000  # per request and per set
_JUDGE = re.compile(r"^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$")


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def service_generator(value: str) -> str:
    """A generator spec whose ``http:`` URL, if it has one, is a plain URL (checked like every URL field)."""
    if value.startswith("http:"):
        plain_url(value[len("http:"):], "the generator's URL")
    return value


class _Endpoints(_Input):
    """The URL fields an evaluation's endpoints are given by: plain http(s) URLs, never with credentials."""

    @field_validator("base_url", "judge_base_url", check_fields=False)
    @classmethod
    def _urls(cls, value, info):
        return plain_url(value, info.field_name)


def plain_url(value: str | None, field: str) -> str | None:
    """An http(s) URL without credentials in it (a stored row must never hold a password or a token); the refusal
    names where the credential is, never its value."""
    if value is None or value == "":
        return None
    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an unclosed [ in the host, and the like
        valid = False
    if not valid:
        raise ValueError(f"{field} must be an http:// or https:// URL; got {public_url(value)!r}")
    found = url_credentials(value)
    if found:
        raise ValueError(f"{field} must not carry credentials ({', '.join(found)}): keys stay in the server's "
                         "environment")
    return value


# ---------------------------------------------------------------------------------------------------- question sets
class QuestionIn(_Input):
    id: str | None = None  # given when a set's full list is sent back (PUT): that row is updated, not added
    question_type: str = Field(default="USER_DEFINED", min_length=1, max_length=50)
    question_text: QuestionText = Field(max_length=20_000)  # stripped, then the datasets' rule
    ground_truth: str = Field(default="", max_length=100_000)
    source_record: dict | None = None  # a dataset question record (relevance labels, checks), kept for answering


class QuestionOut(BaseModel):
    id: str
    question_type: str
    question_text: str
    ground_truth: str
    source_record: dict | None = None


class QuestionSetIn(_Input):
    name: str = Field(min_length=1, max_length=255)
    description: str = Field(default="", max_length=10_000)
    dataset: str | None = Field(default=None, max_length=500)
    questions: list[QuestionIn] = Field(default_factory=list, max_length=MAX_QUESTIONS)


class QuestionSetUpdate(_Input):
    name: str | None = Field(default=None, min_length=1, max_length=255)
    description: str | None = Field(default=None, max_length=10_000)
    dataset: str | None = Field(default=None, max_length=500)
    questions: list[QuestionIn] | None = Field(default=None, max_length=MAX_QUESTIONS)  # the whole list, if given


class QuestionsIn(_Input):
    questions: list[QuestionIn] = Field(min_length=1, max_length=MAX_QUESTIONS)


class QuestionUpdate(_Input):
    question_type: str | None = Field(default=None, min_length=1, max_length=50)
    question_text: QuestionText | None = Field(default=None, max_length=20_000)
    ground_truth: str | None = Field(default=None, max_length=100_000)


class QuestionSetSummary(BaseModel):
    id: str
    name: str
    description: str
    dataset: str | None
    question_count: int
    evaluations: int = 0  # how many evaluations use it (such a set cannot be deleted)
    gmt_created: str
    gmt_updated: str


class QuestionSetOut(QuestionSetSummary):
    questions: list[QuestionOut]


class FromDatasetIn(_Input):
    dataset: str = Field(min_length=1)


class GenerateIn(_Input):
    dataset: str = Field(min_length=1)
    model: str = Field(min_length=1, max_length=200)
    base_url: str | None = None
    count: int = Field(default=10, ge=1, le=200)
    per_doc: int = Field(default=2, ge=1, le=10)
    question_types: list[Literal["FACTUAL", "INFERENTIAL"]] = Field(default=["FACTUAL", "INFERENTIAL"], min_length=1)
    language: Literal["auto", "zh", "en"] = "auto"
    prompt: str | None = Field(default=None, max_length=50_000)  # placeholders $n $types $title $document

    @field_validator("base_url")
    @classmethod
    def _url(cls, value):
        return plain_url(value, "base_url")


class GenerateOut(BaseModel):
    questions: list[QuestionIn]  # no ids: they are not stored
    counts: dict
    usage: dict
    failed_documents: list[dict]


# ------------------------------------------------------------------------------------------------------ evaluations
class EvaluationIn(_Endpoints):
    name: str = Field(min_length=1, max_length=255)
    kind: Literal["answer", "retrieval"] = Field(
        default="answer", description="answer: answers, checks, judges and their retrieval; retrieval: the "
                                      "document- and chunk-level grid of `eval` alone, stored as a retrieval run")
    dataset: str = Field(min_length=1, max_length=500)
    question_set_id: str = Field(min_length=1, max_length=24)
    generator: str | None = Field(default=None, min_length=1, max_length=500)
    base_url: str | None = None
    # null: the default (EvalConfig's), which the evaluation then records
    retriever: str | None = Field(default=default_retriever(), max_length=100,
                                  description="How contexts are retrieved: " + ", ".join(web_retrievers()))
    judge: str | None = Field(default=None, max_length=300)
    judge_model: str | None = Field(default=None, max_length=200)
    judge_base_url: str | None = None
    # more answer settings (e.g. context_k, chunk_size), no secrets
    options: EvaluationOptions = Field(default_factory=EvaluationOptions)

    @field_validator("generator")
    @classmethod
    def _generator(cls, value: str | None) -> str | None:
        """An http: URL is checked here like every URL field; the name itself against the generators' registry when
        the evaluation is created (routes/evaluations.py)."""
        return None if value is None else service_generator(value)

    @model_validator(mode="after")
    def _fields_of_its_kind(self):
        """An answer evaluation names what answers; a retrieval evaluation asks no generator and no judge."""
        if self.kind == "answer" and not self.generator:
            raise ValueError("generator: an answer evaluation needs a generator (extractive, openai:<model>, "
                             "http:<url>)")
        if self.kind == "retrieval":
            given = [name for name in ANSWER_ONLY if getattr(self, name)]
            if given:
                raise ValueError(f"{', '.join(given)}: a retrieval evaluation asks no generator and no judge")
        return self

    @field_validator("judge")
    @classmethod
    def _judge(cls, value):
        names = (value or "").replace(" ", "")
        if names and not _JUDGE.match(names):
            raise ValueError(f"judge must be judge names separated by commas (e.g. score5,correctness); got {value!r}")
        return names or None

    @field_validator("options", mode="before")
    @classmethod
    def _no_secrets(cls, value):
        """A name with a word such as key, apikey or token (not max_tokens) is refused with this reason; any other
        unknown name is refused by the engine's options (jobs/options.py)."""
        for name in value if isinstance(value, dict) else ():
            if looks_secret(name):
                raise ValueError(f"option {name!r} looks like a secret: API keys stay in the server's environment "
                                 "and are never stored")
        return value


class EndpointIn(_Endpoints):
    """Where a FAILED or PAUSED evaluation's answers and verdicts are asked, corrected before it is resumed: the
    base URL of its model, its judges', or the URL of its ``http:`` service. A field given as null or "" goes back to
    its default (OpenAI's URL; for the judges, the model's); a field left out is kept."""

    generator: str | None = Field(default=None, max_length=500)
    base_url: str | None = None
    judge_base_url: str | None = None

    @field_validator("generator")
    @classmethod
    def _service_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith("http:"):
            raise ValueError("only an http: service's URL can be corrected (http:<url>); another model or kind of "
                             "generator would make it another evaluation: run it again with those settings")
        return service_generator(value)


class IdsIn(_Input):
    """Several evaluations or question sets at once (bulk delete): each id once, up to 500."""

    ids: list[str] = Field(min_length=1, max_length=500)

    @field_validator("ids")
    @classmethod
    def _ids(cls, value: list[str]) -> list[str]:
        for position, item in enumerate(value):
            if not re.fullmatch(r"[a-z]{1,4}_[0-9a-z_]{1,40}", item):  # not echoed: it may be anything
                raise ValueError(f"ids[{position}] is not an id (eval_... or qs_...)")
        return list(dict.fromkeys(value))


class Deleted(BaseModel):
    deleted: list[str]


class DecodedOut(BaseModel):
    """A file's text, decoded on the server when it was not UTF-8 (io/text_encoding.py)."""

    text: str
    encoding: str
    converted: bool


# ------------------------------------------------------------------------------------------------------ annotations
MAX_REVIEWER = 100  # characters of a reviewer's name (rr_annotations.reviewer)


class AnnotationIn(_Input):
    """A reviewer's verdict on one answer. `version` (required): the annotation's version the reviewer saw (0: none
    yet); when another reviewer has changed it since, the request is refused (409) instead of overwriting theirs. A
    request without it is refused (422): it would replace a colleague's verdict unchecked."""

    verdict: Literal["correct", "partly_correct", "incorrect"]
    note: str = Field(default="", max_length=10_000)
    version: int = Field(ge=0, le=2**31, description="the annotation's version the reviewer saw; 0: none yet")
    reviewer: str = Field(default="", max_length=MAX_REVIEWER, description="who gives the verdict (the review page "
                          "sends the name it asked once); empty: unnamed, left out of the reviewers' agreement")

    @field_validator("reviewer", mode="before")
    @classmethod
    def _reviewer_is_a_name(cls, value):
        if not isinstance(value, str):
            raise ValueError("reviewer must be a text (a name)")
        if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029" for c in value):
            raise ValueError("reviewer must not hold control characters or line breaks")
        return value


class AnnotationOut(BaseModel):
    question_id: str
    verdict: Literal["correct", "partly_correct", "incorrect"]
    note: str
    version: int
    reviewer: str = ""
    gmt_created: str
    gmt_updated: str


class ResultOut(BaseModel):
    question_id: str
    position: int
    question_type: str
    question_text: str
    ground_truth: str
    rag_answer: str | None
    rag_answer_sources: list
    llm_judge_score: float | None
    llm_judge_reasoning: str | None
    checks: dict
    metrics: dict
    input_tokens: int | None
    output_tokens: int | None
    latency: float | None
    cost: float | None
    error: str | None
    # expected next to retrieved (store/relevance.py): the question's relevant documents, each source marked
    # "relevant", and {"recall", "mrr", "found", "missing"} over the sources (null without relevant documents)
    relevant_documents: list[str] = Field(default_factory=list)
    retrieval: dict | None = None
    annotation: AnnotationOut | None = None  # a reviewer's verdict (PUT .../results/{question_id}/annotation)


class EvaluationOut(BaseModel):
    """An evaluation as the API and the pages show it; `failed_questions` of the `completed_questions` got no
    answer (their result has an ``error``), `answered_questions` did, and the means are over those."""

    id: str
    name: str
    kind: Literal["answer", "retrieval"] = "answer"
    status: Literal["PENDING", "RUNNING", "PAUSED", "COMPLETED", "FAILED"]
    progress: int
    total_questions: int
    completed_questions: int
    answered_questions: int = 0
    failed_questions: int = 0
    # judges that failed on every answered question (no verdict at all, some failures): the list says so
    failed_judges: list[str] = Field(default_factory=list)
    average_score: float | None
    error: str | None
    dataset: str
    question_set_id: str
    generator: str | None  # None for a retrieval evaluation
    base_url: str | None
    retriever: str | None
    judge: str | None
    judge_model: str | None
    judge_base_url: str | None
    options: dict
    run_id: str | None
    started_at: str | None
    finished_at: str | None
    gmt_created: str
    gmt_updated: str

    @field_validator("generator", "base_url", "judge_base_url", "error")
    @classmethod
    def _shown_without_credentials(cls, value):
        return redact_urls(value) if value else value

    @computed_field  # the status stays COMPLETED (it did end); this says that some questions got no answer
    @property
    def completed_with_failures(self) -> bool:
        return self.status == "COMPLETED" and self.failed_questions > 0


class EvaluationDetail(EvaluationOut):
    summary: dict
    results: list[ResultOut]
    results_total: int  # finished results matching the filter (for paging)
    offset: int
    limit: int


T = TypeVar("T")
# the largest offset a list takes: JavaScript's largest exact integer, far below what the databases' 64-bit OFFSET
# holds (past it, a request is a 422, not an OverflowError in the database driver and a 500)
MAX_OFFSET = 2**53 - 1
# the API's pages: the items of one page unless `limit=` says otherwise, and the most one page may hold
PAGE_SIZE = 50
SETS_PAGE_SIZE = 100  # question sets, listed without their questions
MAX_PAGE_SIZE = 500


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int
