"""Real traces for the trace tests, written by the real libraries in a process of their own (MLflow's tracking URI
and OpenTelemetry's tracer provider are process-wide; the test process stays untouched):

    python trace_writers.py mlflow CASES.json OUT.jsonl TRUTH.json    # mlflow-skinny, a file store in a temp folder
    python trace_writers.py otlp CASES.json OUT.jsonl TRUTH.json      # opentelemetry-sdk + OpenInference names

A case is ``{"request": str | {"messages": [...]}, "retrievals": [[{"doc_uri", "content", "score"?}, ...], ...],
"answer": str | null, "usage": [[input, output], ...]}``: the app retrieves once per entry of ``retrievals`` (each a
RETRIEVER span, in order), calls a chat model once per entry of ``usage`` and returns ``answer`` (null: it raises,
so the trace has no output). TRUTH gets, per case, what the library itself says about the trace through its object
API (trace id, root span times), to compare with what ragretrieval reads from the JSON.

``mlflow`` writes the MLflow 3 layout (``Trace.to_json()``, what the installed MLflow produces). MLflow 2's layout
(``info.request_id``, spans with ``context`` and ``parent_id``) is made by `to_mlflow2` from the same real trace:
MLflow's own ``TraceInfoV2.from_v3`` for the info, and the MLflow 2 span fields filled from MLflow's ``Span``
object; the result is checked to load with ``mlflow.entities.Trace.from_dict``, which reads both layouts.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


class AppFailed(RuntimeError):
    pass


def mlflow_traces(cases: list[dict]) -> tuple[list[str], list[dict]]:
    folder = tempfile.mkdtemp(prefix="rr-mlflow-")
    os.environ.update(MLFLOW_TRACKING_URI=f"file:{folder}/mlruns", MLFLOW_ALLOW_FILE_STORE="true",
                      MLFLOW_ENABLE_ASYNC_TRACE_LOGGING="false")
    import mlflow
    from mlflow.entities import Document, SpanType

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def retrieve(query: str, found: list[dict]):
        return [Document(page_content=d["content"], metadata={"doc_uri": d["doc_uri"]}) for d in found]

    @mlflow.trace(span_type=SpanType.LLM)
    def complete(prompt: str, usage: list[int]):
        return {"text": "draft", "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]}}

    @mlflow.trace(span_type=SpanType.CHAT_MODEL)
    def chat(messages: list[dict], usage: list[int], answer):
        complete(messages[-1]["content"], usage)  # a nested model call: counted once, by its parent
        mlflow.get_current_active_span().set_attribute(
            "mlflow.chat.tokenUsage", {"input_tokens": usage[0], "output_tokens": usage[1],
                                       "total_tokens": usage[0] + usage[1]})
        return {"choices": [{"message": {"role": "assistant", "content": answer}}]}

    def run(case: dict):
        request = case["request"]
        text = request if isinstance(request, str) else request["messages"][-1]["content"]
        for found in case["retrievals"]:
            retrieve(text, found)
        for usage in case["usage"]:
            chat([{"role": "user", "content": text}], usage, case["answer"])
        if case["answer"] is None:
            raise AppFailed("the model is down")
        return case["answer"]

    current: dict = {}  # the case being run: the traced entry points take only what a real app takes

    @mlflow.trace(span_type=SpanType.AGENT)
    def app(question: str):
        return run(current)

    @mlflow.trace(span_type=SpanType.AGENT)
    def chat_app(messages: list[dict]):
        return run(current)

    lines, truth = [], []
    for case in cases:
        current.clear()
        current.update(case)
        try:
            if isinstance(case["request"], str):
                app(case["request"])
            else:
                chat_app(case["request"]["messages"])
        except AppFailed:
            pass
        trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
        root = next(s for s in trace.data.spans if s.parent_id is None)
        lines.append(trace.to_json())
        truth.append({"trace_id": trace.info.trace_id, "start": root.start_time_ns, "end": root.end_time_ns,
                      "mlflow2": to_mlflow2(trace)})
    return lines, truth


def to_mlflow2(trace) -> dict:
    """The MLflow 2 layout of a real trace (see the module's docstring)."""
    from mlflow.entities import Trace
    from mlflow.entities.trace_info_v2 import TraceInfoV2

    spans = [{"name": s.name, "context": {"span_id": "0x" + s.span_id, "trace_id": "0x" + s._trace_id},
              "parent_id": "0x" + s.parent_id if s.parent_id else None, "start_time": s.start_time_ns,
              "end_time": s.end_time_ns, "status_code": s.status.status_code.value,
              "status_message": s.status.description, "attributes": s.to_dict()["attributes"], "events": []}
             for s in trace.data.spans]
    root = next(s for s in trace.data.spans if s.parent_id is None)
    data = {"spans": spans, "request": json.dumps(root.inputs), "response": json.dumps(root.outputs)}
    layout = {"info": TraceInfoV2.from_v3(trace.info).to_dict(), "data": data}
    loaded = Trace.from_dict(json.loads(json.dumps(layout)))
    assert [s.span_id for s in loaded.data.spans] == [s.span_id for s in trace.data.spans]
    assert loaded.info.trace_id == trace.info.trace_id
    return layout


def otlp_lines(cases: list[dict]) -> tuple[list[str], list[dict]]:
    from google.protobuf.json_format import MessageToDict
    from openinference.semconv.trace import DocumentAttributes, OpenInferenceSpanKindValues, SpanAttributes
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "cookbook-rag"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rag-app")
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    docs = SpanAttributes.RETRIEVAL_DOCUMENTS
    for case in cases:
        request = case["request"]
        with tracer.start_as_current_span("rag") as root:
            root.set_attribute(kind, OpenInferenceSpanKindValues.CHAIN.value)
            if isinstance(request, str):
                root.set_attribute(SpanAttributes.INPUT_VALUE, request)
                text = request
            else:
                root.set_attribute(SpanAttributes.INPUT_VALUE, json.dumps(request, ensure_ascii=False))
                root.set_attribute(SpanAttributes.INPUT_MIME_TYPE, "application/json")
                text = request["messages"][-1]["content"]
            for found in case["retrievals"]:
                with tracer.start_as_current_span("retrieve") as span:
                    span.set_attribute(kind, OpenInferenceSpanKindValues.RETRIEVER.value)
                    span.set_attribute(SpanAttributes.INPUT_VALUE, text)
                    for i, d in enumerate(found):
                        span.set_attribute(f"{docs}.{i}.{DocumentAttributes.DOCUMENT_ID}", d["doc_uri"])
                        span.set_attribute(f"{docs}.{i}.{DocumentAttributes.DOCUMENT_CONTENT}", d["content"])
                        span.set_attribute(f"{docs}.{i}.{DocumentAttributes.DOCUMENT_SCORE}", d.get("score", 1.0))
            for usage in case["usage"]:
                with tracer.start_as_current_span("llm") as span:
                    span.set_attribute(kind, OpenInferenceSpanKindValues.LLM.value)
                    span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_PROMPT, usage[0])
                    span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, usage[1])
                    span.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_TOTAL, usage[0] + usage[1])
            if case["answer"] is None:
                root.set_status(Status(StatusCode.ERROR, "the model is down"))
            else:
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, case["answer"])
    finished = exporter.get_finished_spans()
    truth = [{"trace_id": format(s.context.trace_id, "032x"), "start": s.start_time, "end": s.end_time}
             for s in finished if s.parent is None]
    # two batches, as a collector flushes them: every trace's spans split over two lines
    batches = [finished[: len(finished) // 2], finished[len(finished) // 2:]]
    lines = [json.dumps(collector_json(MessageToDict(encode_spans(batch), use_integers_for_enums=True)), ensure_ascii=False) for batch in batches]
    return lines, truth


def collector_json(message: dict) -> dict:
    """protobuf's JSON mapping writes ids in base64; OTLP JSON (and the Collector's file exporter) writes hex, and
    enums as numbers (``use_integers_for_enums`` above)."""
    import base64

    for resource in message.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return message


def main(argv: list[str]) -> None:
    kind, cases_path, out, truth_path = argv
    cases = json.loads(Path(cases_path).read_text(encoding="utf-8"))
    lines, truth = (mlflow_traces if kind == "mlflow" else otlp_lines)(cases)
    Path(out).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    Path(truth_path).write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
