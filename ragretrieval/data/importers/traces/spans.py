"""What an evaluation needs from a trace, whatever wrote it: the request, the response, what the last retriever
found, the tokens the models used and how long it took.

Each trace format (mlflow.py, otlp.py) turns its spans into `Span` objects (kind, parent, times, inputs, outputs, the
documents a retriever returned, the tokens a model reported); `derive` reads them all the same way:

- the **root** is the span without a parent in the trace (the earliest, if several);
- ``request`` comes from the root's inputs and ``response`` from its outputs (`as_request`, `as_text`);
- ``retrieved_context`` is the documents of the **last** ``RETRIEVER`` span to start (agent evaluation's rule: with
  several retrieval steps, the last one's results), in their order;
- token counts add up every span that reports usage, except a span under one that already reported it (a model
  call inside an agent step that reports the step's total is not counted twice: MLflow's own rule);
- ``latency`` is the root's end minus its start, in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RETRIEVER = "RETRIEVER"
MAX_TOKENS = 10**12  # more tokens than any request spends: a count beyond it is a broken exporter, not usage


class TraceError(ValueError):
    """A trace that cannot be read: no spans, no root, a field of the wrong type."""


@dataclass
class Usage:
    input: int | None = None
    output: int | None = None
    total: int | None = None

    def complete(self) -> "Usage":
        known = [n for n in (self.input, self.output) if n is not None]
        total = self.total if self.total is not None else (sum(known) if known else None)
        return Usage(self.input, self.output, total)


@dataclass
class Span:
    span_id: str
    parent_id: str | None
    name: str
    kind: str  # RETRIEVER, LLM, CHAT_MODEL, AGENT, CHAIN, ... ("" when the span says none)
    start: int  # nanoseconds since the epoch
    end: int | None
    inputs: Any = None
    outputs: Any = None
    documents: list[dict] | None = None  # a retriever's documents as {"doc_uri", "content", ...}
    usage: Usage | None = None


@dataclass
class Derived:
    """What a trace says about one request; None where it says nothing."""

    trace_id: str
    request: Any = None
    response: str | None = None
    retrieved_context: list[dict] | None = None  # None: no RETRIEVER span
    usage: Usage = field(default_factory=Usage)
    latency: float | None = None
    start: int = 0

    def fields(self) -> dict:
        """The agent-evaluation fields this trace gives (seed 004's names for tokens), absent ones left out; a trace
        without a RETRIEVER span gives an empty ``retrieved_context``."""
        # no RETRIEVER span: production retrieved nothing, so nothing of ours may stand in for it
        context = [] if self.retrieved_context is None else self.retrieved_context
        values = {"request": self.request, "response": self.response, "retrieved_context": context,
                  "agent/input_token_count": self.usage.input, "agent/output_token_count": self.usage.output,
                  "agent/total_token_count": self.usage.total, "agent/latency_seconds": self.latency}
        return {name: value for name, value in values.items() if value is not None}


def as_request(value: Any) -> Any:
    """A request in one of the agent-evaluation shapes, from a root span's inputs: a string; ``{"messages": [...]}``;
    ``{"query": ..., "history": [...]}``; a list of chat messages; or an object with one field holding one of these
    (``{"question": "..."}``, ``{"input": [...]}``, a traced function's single argument). None otherwise."""
    if isinstance(value, str):
        return value if value.strip() else None
    if _is_messages(value):
        return {"messages": value}
    if isinstance(value, dict):
        if _is_messages(value.get("messages")):
            return {"messages": value["messages"]}
        if isinstance(value.get("query"), str):
            return {"query": value["query"], "history": value.get("history") or []}
        if len(value) == 1:
            return as_request(next(iter(value.values())))
    return None


def as_text(value: Any) -> str | None:
    """An answer's text from a root span's outputs: a string; an OpenAI chat completion (``choices[0].message``);
    a list of chat messages or ``{"messages": [...]}`` (the last assistant message); an OpenAI Responses output
    (``output[].content[].text``); ``{"content": "..."}``; or an object with one field holding one of these."""
    if isinstance(value, str):
        return value
    if _is_messages(value):
        replies = [m for m in value if m.get("role") == "assistant" and isinstance(m.get("content"), str)]
        return replies[-1]["content"] if replies else None
    if not isinstance(value, dict):
        return None
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        first = choices[0]
        message = first.get("message") if isinstance(first.get("message"), dict) else {}
        text = message.get("content", first.get("text"))
        return text if isinstance(text, str) else None
    if _is_messages(value.get("messages")):
        return as_text(value["messages"])
    if isinstance(value.get("output"), list):
        texts = [part.get("text") for item in value["output"] if isinstance(item, dict)
                 for part in (item.get("content") if isinstance(item.get("content"), list) else [])
                 if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)]
        return "".join(texts) if texts else None
    if isinstance(value.get("content"), str):
        return value["content"]
    if len(value) == 1:
        return as_text(next(iter(value.values())))
    return None


def _is_messages(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value))


def root_of(spans: list[Span]) -> Span:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if not s.parent_id or s.parent_id not in ids]
    if not roots:
        raise TraceError("no root span (every span names a parent)")
    return min(roots, key=lambda s: s.start)


def total_usage(spans: list[Span]) -> Usage:
    """Usage summed over the spans that report it, skipping those under a span that reported it already."""
    by_id = {s.span_id: s for s in spans}

    def reported_above(span: Span) -> bool:
        seen, parent = set(), by_id.get(span.parent_id or "")
        while parent is not None and parent.span_id not in seen:
            if parent.usage is not None:
                return True
            seen.add(parent.span_id)
            parent = by_id.get(parent.parent_id or "")
        return False

    counted = [s.usage.complete() for s in spans if s.usage is not None and not reported_above(s)]
    sums = {}
    for name in ("input", "output", "total"):
        values = [getattr(u, name) for u in counted if getattr(u, name) is not None]
        sums[name] = sum(values) if values else None
    return Usage(**sums)


def derive(trace_id: str, spans: list[Span]) -> Derived:
    if not spans:
        raise TraceError("no spans")
    root = root_of(spans)
    last = None
    for span in spans:
        if span.kind == RETRIEVER and (last is None or span.start >= last.start):  # equal starts: the later one
            last = span
    latency = (root.end - root.start) / 1e9 if root.end is not None and root.end >= root.start else None
    return Derived(trace_id=trace_id, request=as_request(root.inputs), response=as_text(root.outputs),
                   retrieved_context=(last.documents or []) if last is not None else None,
                   usage=total_usage(spans), latency=latency, start=root.start)


def document_item(uri: Any, content: Any, where: str, **extra) -> dict:
    """One retrieved document as an agent-evaluation context item; a document without a URI is an error."""
    if uri is None or (isinstance(uri, str) and not uri.strip()):
        raise TraceError(f"{where}: the document has no URI (doc_uri) to name it by")
    item = {"doc_uri": str(uri), "content": content if isinstance(content, str) else None}
    item.update({k: v for k, v in extra.items() if v is not None})
    return item


def count(value: Any, where: str) -> int | None:
    """A token count: a whole number >= 0 (a string of digits is read as one), or None when absent."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        raise TraceError(f"{where}: {value!r} is not a token count (a whole number from 0 to {MAX_TOKENS:,})")
    return value
