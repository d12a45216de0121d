"""OpenTelemetry spans with OpenInference attributes (Phoenix, Arize, Langfuse's OpenTelemetry endpoint), as OTLP
JSON: what the OpenTelemetry Collector's file exporter writes, one ``ExportTraceServiceRequest`` per line:

```
{"resourceSpans": [{"resource": {...}, "scopeSpans": [{"scope": {...}, "spans": [
  {"traceId": "5b8e...", "spanId": "0a1b...", "parentSpanId": "", "name": "rag", "startTimeUnixNano": "1732...",
   "endTimeUnixNano": "1732...", "attributes": [{"key": "input.value", "value": {"stringValue": "..."}}, ...]}]}]}]}
```

Ids are hex (the OTLP JSON encoding; base64, as protobuf's generic JSON mapping writes them, is read too); attribute
values are typed (``stringValue``, ``intValue`` as a string or a number, ``doubleValue``, ``boolValue``,
``arrayValue``, ``kvlistValue``, ``bytesValue``). Spans are grouped by ``traceId`` over the whole file, whatever line
or resource they came in.

OpenInference attributes read: ``openinference.span.kind`` (``RETRIEVER``, ``LLM``, ``CHAIN``, ``AGENT``, ...),
``input.value`` / ``output.value`` (decoded when their ``input.mime_type`` / ``output.mime_type`` is
``application/json``), ``retrieval.documents.N.document.id|content|score|metadata`` and
``llm.token_count.prompt|completion|total``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Iterable

from .files import decoded
from .spans import Span, TraceError, Usage, count, document_item

DOCUMENT_KEY = re.compile(r"retrieval\.documents\.(\d+)\.document\.(id|content|score|metadata)")
HEX_ID = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")
JSON_MIME = "application/json"


def any_value(value: Any, where: str) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(value, dict):
        raise TraceError(f"{where}: expected a typed value such as {{\"stringValue\": ...}}")
    if "stringValue" in value:
        return value["stringValue"]
    try:
        if "intValue" in value:
            return int(value["intValue"])
        if "doubleValue" in value:
            return float(value["doubleValue"])
    except (TypeError, ValueError):
        raise TraceError(f"{where}: {value} is not a number") from None
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [any_value(v, where) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes_of((value["kvlistValue"] or {}).get("values", []), where)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None  # an empty AnyValue


def attributes_of(pairs: Any, where: str) -> dict:
    if not isinstance(pairs, list):
        raise TraceError(f"{where}: attributes should be a list of {{key, value}}")
    found = {}
    for pair in pairs:
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise TraceError(f"{where}: an attribute without a key")
        found[pair["key"]] = any_value(pair.get("value", {}), f"{where}, attribute {pair['key']!r}")
    return found


def span_id(value: Any, where: str) -> str | None:
    """An id as lower-case hex; base64 ids (protobuf's JSON mapping) are converted."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise TraceError(f"{where}: {value!r} is not an id")
    if HEX_ID.fullmatch(value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        raise TraceError(f"{where}: {value!r} is neither a hex nor a base64 id") from None


def _value(attributes: dict, name: str) -> Any:
    value = attributes.get(f"{name}.value")
    return decoded(value) if attributes.get(f"{name}.mime_type") == JSON_MIME else value


def _documents(attributes: dict, where: str) -> list[dict]:
    fields: dict[int, dict] = {}
    for key, value in attributes.items():
        if match := DOCUMENT_KEY.fullmatch(key):
            fields.setdefault(int(match.group(1)), {})[match.group(2)] = value
    items = []
    for n in sorted(fields):
        document = fields[n]
        metadata = decoded(document.get("metadata"))
        metadata = metadata if isinstance(metadata, dict) else {}
        uri = document.get("id") or metadata.get("doc_uri") or metadata.get("source")
        items.append(document_item(uri, document.get("content"), f"{where}, retrieval.documents.{n}",
                                   score=document.get("score")))
    return items


def _usage(attributes: dict, where: str) -> Usage | None:
    names = ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total")
    if not any(name in attributes for name in names):
        return None
    return Usage(*(count(attributes.get(name), f"{where}, {name}") for name in names))


def _span(raw: Any, where: str) -> tuple[str, Span]:
    if not isinstance(raw, dict):
        raise TraceError(f"{where}: expected a span object")
    trace_id = span_id(raw.get("traceId"), f"{where}: traceId")
    own = span_id(raw.get("spanId"), f"{where}: spanId")
    if trace_id is None or own is None:
        raise TraceError(f"{where}: traceId and spanId are required")
    where = f"{where} ({raw.get('name')!r})"
    attributes = attributes_of(raw.get("attributes", []), where)
    kind = attributes.get("openinference.span.kind")
    kind = kind.upper() if isinstance(kind, str) else ""
    try:
        start = int(raw.get("startTimeUnixNano", 0))
        end = int(raw["endTimeUnixNano"]) if raw.get("endTimeUnixNano") not in (None, "", 0, "0") else None
    except (TypeError, ValueError):
        raise TraceError(f"{where}: startTimeUnixNano / endTimeUnixNano are not times in nanoseconds") from None
    return trace_id, Span(span_id=own, parent_id=span_id(raw.get("parentSpanId"), f"{where}: parentSpanId"),
                          name=str(raw.get("name") or ""), kind=kind, start=start, end=end,
                          inputs=_value(attributes, "input"), outputs=_value(attributes, "output"),
                          documents=_documents(attributes, where) if kind == "RETRIEVER" else None,
                          usage=_usage(attributes, where))


def spans_by_trace(documents: Iterable[tuple[str, Any]]) -> dict[str, list[Span]]:
    """Every span of every ``ExportTraceServiceRequest``, grouped by trace id in order of first appearance."""
    traces: dict[str, list[Span]] = {}
    for where, document in documents:
        if not isinstance(document, dict) or not isinstance(document.get("resourceSpans"), list):
            raise TraceError(f"{where}: expected OTLP JSON: an object with a 'resourceSpans' list")
        for r, resource in enumerate(document["resourceSpans"]):
            scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans", [])) \
                if isinstance(resource, dict) else None
            if not isinstance(scopes, list):
                raise TraceError(f"{where}: resourceSpans.{r}: expected a 'scopeSpans' list")
            for s, scope in enumerate(scopes):
                spans = scope.get("spans", []) if isinstance(scope, dict) else None
                if not isinstance(spans, list):
                    raise TraceError(f"{where}: resourceSpans.{r}.scopeSpans.{s}: expected a 'spans' list")
                for i, raw in enumerate(spans):
                    trace_id, span = _span(raw, f"{where}: resourceSpans.{r}.scopeSpans.{s}.spans.{i}")
                    traces.setdefault(trace_id, []).append(span)
    return traces
