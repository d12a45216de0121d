"""The agent-evaluation JSONL format: one record per line, as agent evaluation tools take it.

``request`` is a string, ``{"messages": [{"role", "content"}, ...]}`` or ``{"query": ..., "history": [...]}``;
``retrieved_context`` (what a retriever found) and ``expected_retrieved_context`` (the relevance labels) are lists
of ``{"doc_uri", "content"}``; ``expected_response`` is the reference answer (a question's ``ground_truth``);
``response`` is the app's answer (``answer --generator file:`` reads it), with its token counts
(``agent/input_token_count``, ``agent/output_token_count``, ``agent/total_token_count``) and
``agent/latency_seconds``. A ``trace`` (an MLflow trace) gives whichever of these a record lacks. Other columns are
allowed and ignored.

The format has no version field of its own and is not ours to change, so what ragretrieval needs for an exact round
trip (grades, character spans, provenance, metadata) travels in one optional ``ragretrieval`` object per record,
which carries our version number; tools that do not know it ignore it.

A ``doc_uri`` names a corpus document by its id (``meat_dish/红烧肉.md``) or by any path or URL that ends with it
(``https://git.example.org/cookbook/blob/main/dishes/meat_dish/红烧肉.md``); the longest such id wins.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Sequence, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from ...io.jsonfiles import describe
from ..corpus import Document
from ..dataset import (
    PRODUCTION,
    DatasetError,
    Provenance,
    QuestionRecord,
    QuestionText,
    RelevantDocument,
    check_questions,
    not_blank,
    read_numbered_jsonl,
)
from ..filename_questions import question_id
from .traces.mlflow import derive_mlflow
from .traces.spans import Derived, TraceError

EXTENSION_VERSION = 1


class Message(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    role: str
    content: str


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    messages: list[Message] = Field(min_length=1)

    @model_validator(mode="after")
    def _has_a_user_turn(self):
        users = [m for m in self.messages if m.role == "user"]
        if not users:
            raise ValueError("messages hold no message with role 'user' (the question)")
        not_blank(users[-1].content)  # the last user turn is the question
        return self


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    query: QuestionText
    history: list[Message] = Field(default_factory=list)


def _request_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "messages" if "messages" in value else "query" if "query" in value else None
    if isinstance(value, (ChatRequest, QueryRequest)):
        return "messages" if isinstance(value, ChatRequest) else "query"
    return None


Request = Annotated[
    Union[Annotated[QuestionText, Tag("text")], Annotated[ChatRequest, Tag("messages")],
          Annotated[QueryRequest, Tag("query")]],
    Discriminator(_request_kind, custom_error_type="request_shape",
                  custom_error_message='expected a string, {"messages": [...]} or {"query": ..., "history": [...]}'),
]


class ContextItem(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    doc_uri: str = Field(min_length=1)
    content: str | None = None


class RagretrievalFields(BaseModel):
    """What the agent format cannot say; written by export, read back by import."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1] = EXTENSION_VERSION
    relevant: list[RelevantDocument] = Field(default_factory=list)
    provenance: Provenance
    metadata: dict = Field(default_factory=dict)
    question_type: str | None = None
    context: list[str] = Field(default_factory=list)
    expect: dict = Field(default_factory=dict)


class AgentRecord(BaseModel):
    """One record. With a ``trace`` (an MLflow trace, as a JSON string or an object), the fields it lacks among
    ``request``, ``response``, ``retrieved_context``, the token counts and the latency are derived from the trace
    (traces/spans.py); the fields it has are kept. The token counts and latency are read and written under their
    agent-evaluation names (``agent/input_token_count``, ...), and may be given by field name in Python."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)
    request_id: str | None = None
    request: Request
    response: str | None = None
    retrieved_context: list[ContextItem] | None = None
    expected_retrieved_context: list[ContextItem] | None = None
    expected_response: str | None = None
    input_tokens: int | None = Field(default=None, ge=0, alias="agent/input_token_count")
    output_tokens: int | None = Field(default=None, ge=0, alias="agent/output_token_count")
    total_tokens: int | None = Field(default=None, ge=0, alias="agent/total_token_count")
    latency: float | None = Field(default=None, ge=0, alias="agent/latency_seconds")
    trace: Any = Field(default=None, exclude=True)  # after validation: the `Derived` view of the trace, or None
    ragretrieval: RagretrievalFields | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _fields_from_the_trace(cls, data, handler):
        if isinstance(data, dict) and data.get("trace") is not None and not isinstance(data["trace"], Derived):
            try:
                derived = derive_mlflow(data["trace"])
            except TraceError as error:
                detail = PydanticCustomError("trace", "{reason}", {"reason": str(error)})
                raise ValidationError.from_exception_data(cls.__name__, [InitErrorDetails(
                    type=detail, loc=("trace",), input=data["trace"])]) from None
            own = {name: value for name, value in data.items() if value is not None}
            data = {**derived.fields(), **own, "trace": derived}
        return handler(data)

    @property
    def question(self) -> str:
        """The text retrieval is asked with: the string, the query, or the last user message."""
        if isinstance(self.request, str):
            return self.request
        if isinstance(self.request, QueryRequest):
            return self.request.query
        return next(m.content for m in reversed(self.request.messages) if m.role == "user")

    @property
    def history(self) -> list[dict]:
        """Earlier turns of a multi-turn request."""
        if isinstance(self.request, QueryRequest):
            return [m.model_dump() for m in self.request.history]
        if isinstance(self.request, ChatRequest):
            last = max(i for i, m in enumerate(self.request.messages) if m.role == "user")
            return [m.model_dump() for m in self.request.messages[:last]]
        return []


def read_agent_jsonl(path) -> list[tuple[int, AgentRecord]]:
    """(line number, record) pairs; a bad record is a `DatasetError` naming the file, line and field."""
    return read_numbered_jsonl(path, AgentRecord)


class DocumentUris:
    """Corpus document ids found from doc_uris: the id itself, or a path/URL ending with it (the longest wins)."""

    def __init__(self, doc_ids: Iterable[str]):
        self.ids = set(doc_ids)

    def resolve(self, uri: str) -> str | None:
        if uri in self.ids:
            return uri
        parsed = urllib.parse.urlsplit(uri)
        path = urllib.parse.unquote(parsed.path if parsed.scheme else uri).replace("\\", "/")
        parts = [p for p in path.split("/") if p]
        return next((suffix for i in range(len(parts)) if (suffix := "/".join(parts[i:])) in self.ids), None)


def _relevant_from_uris(record: AgentRecord, uris: DocumentUris, where: str) -> list[RelevantDocument]:
    relevant: dict[str, None] = {}
    for i, item in enumerate(record.expected_retrieved_context or []):
        doc_id = uris.resolve(item.doc_uri)
        if doc_id is None:
            raise DatasetError(f"{where}: field 'expected_retrieved_context.{i}.doc_uri': {item.doc_uri!r} is not a "
                               "document of the corpus (nor a path or URL ending in one)")
        relevant[doc_id] = None
    return [RelevantDocument(doc_id=d) for d in relevant]


def import_questions(path, documents: Sequence[Document]) -> list[QuestionRecord]:
    """Questions from an agent-evaluation JSONL file: `expected_retrieved_context` becomes the labels and
    `expected_response` the reference answer (a record needs one of them)."""
    records = [(f"{path}:{number}", record) for number, record in read_agent_jsonl(path)]
    return questions_from_records(records, documents, str(path), Path(path).name)


def questions_from_records(records: Sequence[tuple[str, AgentRecord]], documents: Sequence[Document], source: str,
                           origin: str) -> list[QuestionRecord]:
    """Questions from agent records, each with the place it came from (``file:line``, ``row 3``): a file's lines or
    a DataFrame's rows (`agent_records`); `origin` is recorded in each question's provenance."""
    uris, questions, line_of = DocumentUris(d.id for d in documents), [], {}
    if not records:
        raise DatasetError(f"{source}: no record (an empty or blank file, or a table of no rows); nothing to import")
    for where, record in records:
        production = record.response is not None or record.trace is not None or (
            record.ragretrieval is not None and record.ragretrieval.provenance.generator == PRODUCTION)
        if not record.expected_retrieved_context and not record.expected_response and not production:
            raise DatasetError(f"{where}: field 'expected_retrieved_context': needed to import a question (the "
                               "documents that answer it), unless the record has an expected_response (or is a "
                               "production request, with a response or a trace)")
        relevant = _relevant_from_uris(record, uris, where)
        answer_side = {}
        if record.ragretrieval is not None:
            extra = record.ragretrieval
            if {r.doc_id for r in extra.relevant} != {r.doc_id for r in relevant}:
                raise DatasetError(f"{where}: field 'ragretrieval.relevant': documents differ from "
                                   "expected_retrieved_context")
            relevant, provenance, metadata = extra.relevant, extra.provenance, extra.metadata
            answer_side = {"question_type": extra.question_type, "context": extra.context, "expect": extra.expect}
        else:
            labelled = record.expected_retrieved_context or record.expected_response
            provenance = Provenance(generator="agent-jsonl" if labelled else PRODUCTION, source=origin)
            metadata = {"history": record.history} if record.history else {}
        try:
            questions.append(QuestionRecord(id=record.request_id or question_id(record.question),
                                            text=record.question, relevant=relevant, provenance=provenance,
                                            metadata=metadata, ground_truth=record.expected_response,
                                            **answer_side))
        except ValueError as error:
            raise DatasetError(f"{where}: {error}") from None
        if questions[-1].id in line_of:
            raise DatasetError(f"{where}: question id {questions[-1].id!r} was already used at "
                               f"{line_of[questions[-1].id]} (give each record its own request_id)")
        line_of[questions[-1].id] = where
    check_questions(questions, documents, source)
    return questions


def _cell(value):
    """A DataFrame cell as plain data: arrays as lists, missing values (NaN, None, NaT) as None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: _cell(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cell(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN
        return None
    return value


def agent_records(table, source: str = "questions") -> list[tuple[str, AgentRecord]]:
    """A pandas DataFrame (or a list of dicts) in the agent-evaluation shape, as (place, record) pairs; a bad row
    is a `DatasetError` naming the row and the field. Missing cells are left out."""
    if hasattr(table, "to_dict") and hasattr(table, "columns"):
        rows = list(zip(table.index.tolist(), table.to_dict("records")))
    elif isinstance(table, (list, tuple)):
        rows = list(enumerate(table))
    else:
        raise DatasetError(f"{source}: expected a pandas DataFrame or a list of dicts, got {type(table).__name__}")
    records = []
    for label, row in rows:
        where = f"{source} row {label}"
        if not isinstance(row, dict):
            raise DatasetError(f"{where}: expected a dict of columns, got {type(row).__name__}")
        values = {str(k): v for k, v in ((k, _cell(v)) for k, v in row.items()) if v is not None}
        try:
            records.append((where, AgentRecord.model_validate(values)))
        except ValidationError as error:
            raise DatasetError(f"{where}: {describe(error)}") from None
    if not records:
        raise DatasetError(f"{source}: no rows")
    return records


def export_record(question: QuestionRecord, documents: dict[str, Document]) -> AgentRecord:
    """One question as an agent record: relevant spans become `content`, everything else goes in `ragretrieval`."""
    expected = []
    for rel in question.relevant:
        text = documents[rel.doc_id].text
        expected.extend([ContextItem(doc_uri=rel.doc_id, content=text[s:e]) for s, e in rel.spans]
                        or [ContextItem(doc_uri=rel.doc_id)])
    history = question.metadata.get("history")
    request = QueryRequest(query=question.text, history=history) if history else question.text
    return AgentRecord(request_id=question.id, request=request, expected_retrieved_context=expected or None,
                       expected_response=question.ground_truth,
                       ragretrieval=RagretrievalFields(relevant=question.relevant, provenance=question.provenance,
                                                       metadata=question.metadata,
                                                       question_type=question.question_type,
                                                       context=question.context, expect=question.expect))
