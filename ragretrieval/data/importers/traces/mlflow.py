"""MLflow traces (``Trace.to_json()``: ``{"info": ..., "data": {"spans": [...]}}``) in both layouts:

- MLflow 3: ``info.trace_id``; spans with ``span_id``, ``parent_span_id``, ``start_time_unix_nano``,
  ``end_time_unix_nano`` (OpenTelemetry's names);
- MLflow 2: ``info.request_id``; spans with ``context.span_id``, ``parent_id``, ``start_time``, ``end_time``
  (nanoseconds), and ``data.request`` / ``data.response`` beside the spans.

In both, span attributes hold JSON-encoded values: ``mlflow.spanType`` (``RETRIEVER``, ``CHAT_MODEL``, ``LLM``,
...), ``mlflow.spanInputs``, ``mlflow.spanOutputs`` and, from MLflow 3, ``mlflow.chat.tokenUsage``
(``{"input_tokens", "output_tokens", "total_tokens"}``). A retriever's outputs are documents ``{"page_content",
"metadata": {"doc_uri", ...}, "id"}``; a model span without ``mlflow.chat.tokenUsage`` reports the tokens in its
outputs' ``usage`` (OpenAI's ``prompt_tokens`` / ``completion_tokens``, or ``input_tokens`` / ``output_tokens``).
"""

from __future__ import annotations

import json
from typing import Any

from .files import decoded
from .spans import Derived, Span, TraceError, Usage, as_text, count, derive, document_item

MODEL_KINDS = ("LLM", "CHAT_MODEL")


def read_trace(value: Any) -> dict:
    """A trace given as a JSON string or an object, as a dict with ``info`` and ``data.spans``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise TraceError(f"not JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(value, dict) or not isinstance(value.get("info"), dict) or \
            not isinstance(value.get("data"), dict) or not isinstance(value["data"].get("spans"), list):
        raise TraceError('expected an MLflow trace: {"info": {...}, "data": {"spans": [...]}}')
    return value


def trace_id_of(trace: dict) -> str:
    info = trace["info"]
    found = info.get("trace_id") or info.get("request_id")
    if not isinstance(found, str) or not found:
        raise TraceError("field 'info.trace_id' (MLflow 3) or 'info.request_id' (MLflow 2): missing")
    return found


def _documents(outputs: Any, where: str) -> list[dict]:
    if outputs is None:
        return []
    if not isinstance(outputs, list):
        raise TraceError(f"{where}: a retriever's outputs should be a list of documents, found "
                         f"{type(outputs).__name__}")
    items = []
    for i, document in enumerate(outputs):
        if not isinstance(document, dict):
            raise TraceError(f"{where}, document {i}: expected an object with page_content and metadata")
        metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
        uri = metadata.get("doc_uri") or metadata.get("source") or document.get("id")
        items.append(document_item(uri, document.get("page_content"), f"{where}, document {i}"))
    return items


def _usage(kind: str, attributes: dict, outputs: Any, where: str) -> Usage | None:
    reported = decoded(attributes.get("mlflow.chat.tokenUsage"))
    if isinstance(reported, dict):
        return Usage(count(reported.get("input_tokens"), where), count(reported.get("output_tokens"), where),
                     count(reported.get("total_tokens"), where))
    usage = outputs.get("usage") if kind in MODEL_KINDS and isinstance(outputs, dict) else None
    if isinstance(usage, dict):
        return Usage(count(usage.get("prompt_tokens", usage.get("input_tokens")), where),
                     count(usage.get("completion_tokens", usage.get("output_tokens")), where),
                     count(usage.get("total_tokens"), where))
    return None


def _span(raw: Any, index: int) -> Span:
    where = f"span {index}"
    if not isinstance(raw, dict):
        raise TraceError(f"{where}: expected an object")
    attributes = raw.get("attributes") if isinstance(raw.get("attributes"), dict) else {}
    name = raw.get("name") if isinstance(raw.get("name"), str) else ""
    where = f"span {index} ({name!r})" if name else where
    if "context" in raw:  # MLflow 2
        context = raw["context"] if isinstance(raw["context"], dict) else {}
        span_id, parent, start, end = context.get("span_id"), raw.get("parent_id"), raw.get("start_time"), \
            raw.get("end_time")
    else:
        span_id, parent, start, end = raw.get("span_id"), raw.get("parent_span_id"), \
            raw.get("start_time_unix_nano"), raw.get("end_time_unix_nano")
    if not isinstance(span_id, str) or not span_id:
        raise TraceError(f"{where}: no span id")
    start, end = _nanoseconds(start, f"{where}: start time"), _nanoseconds(end, f"{where}: end time", True)
    kind = decoded(attributes.get("mlflow.spanType"))
    kind = kind.upper() if isinstance(kind, str) else ""
    outputs = decoded(attributes.get("mlflow.spanOutputs"))
    return Span(span_id=span_id, parent_id=parent if isinstance(parent, str) and parent else None, name=name,
                kind=kind, start=start, end=end, inputs=decoded(attributes.get("mlflow.spanInputs")),
                outputs=outputs, documents=_documents(outputs, where) if kind == "RETRIEVER" else None,
                usage=_usage(kind, attributes, outputs, where))


def _nanoseconds(value: Any, where: str, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"{where}: {value!r} is not a time in nanoseconds")
    return value


def derive_mlflow(value: Any) -> Derived:
    """What an MLflow trace (either layout; a JSON string or an object) says about its request."""
    trace = read_trace(value)
    derived = derive(trace_id_of(trace), [_span(raw, i) for i, raw in enumerate(trace["data"]["spans"])])
    if derived.response is None and "response" in trace["data"]:  # MLflow 2 keeps the root's outputs here too
        derived.response = as_text(decoded(trace["data"]["response"]))
    return derived
