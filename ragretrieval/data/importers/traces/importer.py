"""Production traces as agent-evaluation records, matched to a dataset's questions by their request text.

One record per trace with a readable request: ``request``, ``response`` (absent when the trace has no output),
``retrieved_context`` (the last retriever's documents; empty when the trace has no ``RETRIEVER`` span: production
retrieved nothing), the token counts and ``agent/latency_seconds`` when the trace has them, and ``trace_id``.

With questions to match, a record whose question (the request's last user turn) equals a question's text, else
equals it once both are normalised (`normalised`), gets that question's id as ``request_id``, so `eval --retriever
run-file` and `answer --generator file:` score it against the question's labels. A question asked by several traces
keeps its latest; the others are reported as repeats. Every trace left out or incomplete is reported by id.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

from pydantic import ValidationError

from ....io.jsonfiles import describe
from ...dataset import DatasetError, QuestionRecord
from ..agent_jsonl import AgentRecord
from .files import json_documents
from .mlflow import derive_mlflow
from .otlp import spans_by_trace
from .spans import Derived, TraceError, derive

FORMATS = ("otlp", "mlflow")


def normalised(text: str) -> str:
    """Unicode NFKC, case-folded, keeping letters and digits only: ``What is RAG?`` and ``what is rag`` meet, as do
    ``如何做红烧肉？`` and ``如何做红烧肉?``."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def read_traces(path, format: str) -> list[Derived]:
    """Every trace of an OTLP JSON file (spans grouped by trace id) or of MLflow trace JSON (a file of one trace per
    line, one trace, or a folder of them), in file order."""
    if format not in FORMATS:
        raise DatasetError(f"trace format must be one of {', '.join(FORMATS)}; got {format!r}")
    try:
        if format == "otlp":
            traces = []
            for trace_id, spans in spans_by_trace(json_documents(path)).items():
                try:
                    traces.append(derive(trace_id, spans))
                except TraceError as error:
                    raise TraceError(f"{path}: trace {trace_id}: {error}") from None
            return traces
        traces = []
        for where, document in json_documents(path):
            try:
                traces.append(derive_mlflow(document))
            except TraceError as error:
                raise TraceError(f"{where}: {error}") from None
        return traces
    except TraceError as error:
        raise DatasetError(str(error)) from None


@dataclass
class TraceImport:
    records: list[dict] = field(default_factory=list)  # what --out gets
    unmatched: list[dict] = field(default_factory=list)  # requests that match no question (when matching)
    matched: dict[str, int] = field(default_factory=lambda: {"exact": 0, "normalised": 0})
    no_request: list[str] = field(default_factory=list)  # "trace id: why"
    no_retriever: list[str] = field(default_factory=list)
    no_output: list[str] = field(default_factory=list)
    repeats: list[str] = field(default_factory=list)  # "trace id: question id" (an earlier trace of the question)
    ambiguous: list[str] = field(default_factory=list)  # "trace id: question ids" (one text, several questions)
    traces: int = 0

    def summary(self) -> dict:
        return {"traces": self.traces, "written": len(self.records), "unmatched": len(self.unmatched),
                "matched": self.matched, "no_request": self.no_request, "no_retriever": self.no_retriever,
                "no_output": self.no_output, "repeats": self.repeats, "ambiguous": self.ambiguous}


class QuestionMatcher:
    def __init__(self, questions: Iterable[QuestionRecord]):
        self.exact: dict[str, list[str]] = {}
        self.loose: dict[str, list[str]] = {}
        for question in questions:
            self.exact.setdefault(question.text.strip(), []).append(question.id)
            self.loose.setdefault(normalised(question.text), []).append(question.id)

    def match(self, text: str) -> tuple[list[str], str]:
        """The question ids the text names (none, one, or several when questions share it) and how."""
        if found := self.exact.get(text.strip()):
            return found, "exact"
        key = normalised(text)
        return (self.loose.get(key, []) if key else []), "normalised"


def record_of(derived: Derived) -> tuple[dict | None, str]:
    """The agent-evaluation record of a trace and its question (the request's last user turn), or None and why
    there is none."""
    if derived.request is None:
        return None, "no readable request in the root span's inputs"
    record = {"request_id": derived.trace_id, **derived.fields(), "trace_id": derived.trace_id}
    try:
        return record, AgentRecord.model_validate(record).question
    except ValidationError as error:
        return None, describe(error)


def import_traces(traces: list[Derived], questions: Iterable[QuestionRecord] | None = None) -> TraceImport:
    result = TraceImport(traces=len(traces))
    matcher = QuestionMatcher(questions) if questions is not None else None
    latest: dict[str, tuple[Derived, dict]] = {}  # question id -> its latest trace and record
    matched: list[dict] = []
    for derived in traces:
        record, question = record_of(derived)
        if record is None:
            result.no_request.append(f"{derived.trace_id}: {question}")
            continue
        if derived.retrieved_context is None:
            result.no_retriever.append(derived.trace_id)
        if derived.response is None:
            result.no_output.append(derived.trace_id)
        if matcher is None:
            result.records.append(record)
            continue
        found, how = matcher.match(question)
        if len(found) != 1:
            if found:
                result.ambiguous.append(f"{derived.trace_id}: {', '.join(found)}")
            result.unmatched.append(record)
            continue
        result.matched[how] += 1
        record["request_id"] = found[0]
        matched.append(record)
        earlier = latest.get(found[0])
        if earlier is not None:
            older, newer = sorted([earlier, (derived, record)], key=lambda pair: pair[0].start)
            result.repeats.append(f"{older[0].trace_id}: {found[0]}")
            latest[found[0]] = newer
        else:
            latest[found[0]] = (derived, record)
    if matcher is not None:
        kept = {id(record) for _, record in latest.values()}
        result.records = [record for record in matched if id(record) in kept]
    return result
