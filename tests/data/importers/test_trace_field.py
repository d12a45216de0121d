"""An agent-evaluation record's ``trace`` (seed 004: an MLflow trace as a JSON string; here also an object, and
MLflow 2's layout) gives the record what it lacks; what it has is kept. Then hostile traces and trace files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset

from .conftest import CASES

LUYU = "q-2bd241432d4e"


def invoke(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def write(path, rows) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def first_trace(mlflow_traces):
    """The 清蒸鲈鱼 trace (case 0) as MLflow wrote it, its MLflow 2 layout, and what MLflow says of it."""
    path, truth = mlflow_traces
    line = path.read_text(encoding="utf-8").splitlines()[0]
    return line, truth[0]["mlflow2"], truth[0]


def subset(demo_dataset, tmp_path, *ids):
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(q.model_dump_json() + "\n" for q in load_dataset(demo_dataset).questions
                                 if q.id in ids), encoding="utf-8")
    return questions


def test_a_trace_string_gives_response_context_tokens_and_latency(first_trace, demo_dataset, tmp_path):
    line, _, truth = first_trace
    answers = tmp_path / "answers.jsonl"
    write(answers, [{"request_id": LUYU, "request": "如何做清蒸鲈鱼？", "trace": line}])
    invoke("answer", "--dataset", demo_dataset, "--questions", subset(demo_dataset, tmp_path, LUYU), "--generator",
           f"file:{answers}", "--no-save", "--no-progress", "--out", tmp_path / "r.json")
    got = AnswerReport.load(tmp_path / "r.json").questions[0]
    assert got.answer == CASES[0]["answer"]
    assert [(c.doc_id, c.text) for c in got.contexts] == [("aquatic/清蒸鲈鱼.md", "大火蒸 8 分钟"),
                                                          ("aquatic/红烧带鱼.md", "带鱼先煎")]
    assert (got.input_tokens, got.output_tokens) == (200, 50)
    assert got.latency == pytest.approx((truth["end"] - truth["start"]) / 1e9)
    invoke("eval", "--dataset", demo_dataset, "--questions", subset(demo_dataset, tmp_path, LUYU), "--retriever",
           "run-file", "--run", answers, "--granularity", "doc", "--k", "1", "--no-save", "--no-progress", "--out",
           tmp_path / "e.json")
    assert json.loads((tmp_path / "e.json").read_text("utf-8"))["means"]["doc"]["recall@1"] == 1.0


def test_the_records_own_fields_win_and_an_object_in_mlflow2_layout_is_read(first_trace, demo_dataset, tmp_path):
    _, old, _ = first_trace
    answers = tmp_path / "answers.jsonl"
    write(answers, [{"request": "如何做清蒸鲈鱼？", "response": "我自己的回答", "agent/input_token_count": 7,
                     "retrieved_context": [{"doc_uri": "aquatic/油焖大虾.md"}], "trace": old}])
    invoke("answer", "--dataset", demo_dataset, "--questions", subset(demo_dataset, tmp_path, LUYU), "--generator",
           f"file:{answers}", "--no-save", "--no-progress", "--out", tmp_path / "r.json")
    got = AnswerReport.load(tmp_path / "r.json").questions[0]
    assert got.answer == "我自己的回答" and [c.doc_id for c in got.contexts] == ["aquatic/油焖大虾.md"]
    assert (got.input_tokens, got.output_tokens) == (7, 50)  # the record's input count, the trace's output count


def test_a_request_comes_from_the_trace_when_the_record_has_none(first_trace, demo_dataset, tmp_path):
    line, _, _ = first_trace
    labelled = tmp_path / "set.jsonl"
    write(labelled, [{"trace": line, "expected_retrieved_context": [{"doc_uri": "aquatic/清蒸鲈鱼.md"}]}])
    invoke("questions", "import", labelled, "--dataset", demo_dataset, "--out", tmp_path / "q.jsonl")
    question = json.loads((tmp_path / "q.jsonl").read_text("utf-8"))
    assert question["text"] == "如何做清蒸鲈鱼？" and question["relevant"][0]["doc_id"] == "aquatic/清蒸鲈鱼.md"


def span_edit(line: str, index: int, **changes) -> dict:
    trace = json.loads(line)
    trace["data"]["spans"][index].update(changes)
    return trace


def retriever_outputs(line: str, outputs) -> dict:
    trace = json.loads(line)
    span = next(s for s in trace["data"]["spans"] if '"RETRIEVER"' in s["attributes"]["mlflow.spanType"])
    span["attributes"]["mlflow.spanOutputs"] = json.dumps(outputs)
    return trace


def usage(line: str, value) -> dict:
    trace = json.loads(line)
    span = next(s for s in trace["data"]["spans"] if "mlflow.chat.tokenUsage" in s["attributes"])
    span["attributes"]["mlflow.chat.tokenUsage"] = json.dumps(value)
    return trace


@pytest.mark.parametrize("make, message", [
    (lambda line: "{not json", "not JSON"),
    (lambda line: 42, 'expected an MLflow trace: {"info": {...}, "data": {"spans": [...]}}'),
    (lambda line: {"info": {}, "data": {"spans": []}}, "field 'info.trace_id' (MLflow 3)"),
    (lambda line: {**json.loads(line), "data": {"spans": []}}, "no spans"),
    (lambda line: span_edit(line, 0, span_id=None), "span 0 ('app'): no span id"),
    (lambda line: span_edit(line, 0, start_time_unix_nano="soon"), "span 0 ('app'): start time: 'soon' is not"),
    (lambda line: retriever_outputs(line, [{"page_content": "x", "metadata": {}}]),
     "document 0: the document has no URI (doc_uri) to name it by"),
    (lambda line: retriever_outputs(line, {"page_content": "x"}), "a retriever's outputs should be a list"),
    (lambda line: usage(line, {"input_tokens": -3}), "-3 is not a token count"),
    (lambda line: usage(line, {"input_tokens": 1e30}), "is not a token count"),
    (lambda line: usage(line, {"input_tokens": 10**13}), "10000000000000 is not a token count (a whole number from 0 to"),
])
def test_bad_traces_are_named_by_file_line_and_field(first_trace, demo_dataset, tmp_path, make, message):
    line, _, _ = first_trace
    answers = tmp_path / "answers.jsonl"
    write(answers, [{"request": "如何做清蒸鲈鱼？", "response": "ok"}, {"request": "如何做清蒸鲈鱼？", "trace": make(line)}])
    result = invoke("answer", "--dataset", demo_dataset, "--questions", subset(demo_dataset, tmp_path, LUYU),
                    "--generator", f"file:{answers}", "--no-save", "--no-progress", code=1)
    assert "answers.jsonl:2: field 'trace': " in result.output and message in result.output, result.output


# ----------------------------------------------------------------------------------------- hostile trace files
def test_hostile_trace_files(otlp_traces, mlflow_traces, demo_dataset, tmp_path):
    path, _ = otlp_traces
    lines = path.read_text(encoding="utf-8").splitlines()
    out = tmp_path / "out.jsonl"

    def refused(text, format_, message, code=1, *extra):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(text, encoding="utf-8")
        result = invoke("questions", "import-traces", bad, "--format", format_, "--out", out, *extra, code=code)
        assert message in result.output, result.output
        assert not out.exists()

    refused(lines[0] + "\n{broken\n", "otlp", "bad.jsonl:2: invalid JSON")
    refused('{"resourceSpans": 3}\n', "otlp", "bad.jsonl:1: expected OTLP JSON: an object with a 'resourceSpans'")
    refused('{"spans": []}\n', "otlp", "bad.jsonl:1: expected OTLP JSON")
    refused(lines[0].replace('"traceId": "', '"traceId": "zz', 1) + "\n", "otlp", "is neither a hex nor a base64 id")
    refused(lines[0].replace('"stringValue": "RETRIEVER"', '"intValue": "many"', 1) + "\n", "otlp",
            "is not a number")
    refused("\n\n", "otlp", "bad.jsonl: no traces found")
    refused(lines[0] + "\n", "mlflow", "bad.jsonl:1: expected an MLflow trace")
    one = json.loads(lines[0])
    for span in one["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["parentSpanId"] = span["spanId"]  # every span its own parent: no root
    refused(json.dumps(one) + "\n", "otlp", "no root span")
    mlflow_path, _ = mlflow_traces
    refused(mlflow_path.read_text(encoding="utf-8"), "mlflow", "--questions and --unmatched go with --dataset", 2,
            "--unmatched", tmp_path / "u.jsonl")
    out.write_text("keep me", encoding="utf-8")
    result = invoke("questions", "import-traces", mlflow_path, "--format", "mlflow", "--out", out, code=2)
    assert "already exists; pass --force" in result.output and out.read_text(encoding="utf-8") == "keep me"
    result = invoke("questions", "import-traces", mlflow_path, "--format", "mlflow", "--out", mlflow_path, "--force", code=2)
    assert "must be four different files" in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("questions", "import-traces", empty, "--format", "mlflow", "--out", tmp_path / "x.jsonl", code=1)
    assert "no .json or .jsonl files in the folder" in result.output


def test_a_trace_without_retriever_gives_an_empty_context_not_ours(mlflow_traces, demo_dataset, tmp_path):
    path, truth = mlflow_traces
    lines = path.read_text(encoding="utf-8").splitlines()
    answers = tmp_path / "answers.jsonl"
    egg = "q-da1f371c63b5"
    write(answers, [{"request_id": LUYU, "trace": lines[4]}, {"request_id": egg, "trace": lines[1]}])  # 4: no retriever
    questions = subset(demo_dataset, tmp_path, LUYU, egg)
    invoke("eval", "--dataset", demo_dataset, "--questions", questions, "--retriever", "run-file", "--run", answers,
           "--granularity", "doc", "--k", "1", "--no-save", "--no-progress", "--out", tmp_path / "e.json")
    scored = {q["id"]: q["metrics"]["doc"]["recall@1"] for q in json.loads((tmp_path / "e.json").read_text("utf-8"))[
        "questions"]}
    assert scored == {LUYU: 0.0, egg: 1.0}
    invoke("answer", "--dataset", demo_dataset, "--questions", questions, "--generator", f"file:{answers}",
           "--retriever", "bm25", "--no-save", "--no-progress", "--out", tmp_path / "r.json")
    got = next(q for q in AnswerReport.load(tmp_path / "r.json").questions if q.id == LUYU)
    assert got.answer == CASES[4]["answer"] and got.contexts == []  # bm25's contexts do not stand in for production's


@pytest.mark.parametrize("field, value, message", [
    ("agent/input_token_count", -1, "greater than or equal to 0"),
    ("agent/output_token_count", "many", "valid integer"),
    ("agent/latency_seconds", -0.5, "greater than or equal to 0"),
    ("response", None, None),  # null: no response; the question fails, the run goes on
])
def test_hostile_answer_fields(demo_dataset, tmp_path, field, value, message):
    answers = tmp_path / "answers.jsonl"
    write(answers, [{"request_id": LUYU, "request": "如何做清蒸鲈鱼？", "response": "ok", field: value},
                    {"request_id": "q-da1f371c63b5", "request": "如何做煮鸡蛋？", "response": "六分钟"},
                    {"request_id": "q-96e76df9f7c8", "request": "如何做麻婆豆腐？", "response": "焯水"}])
    questions = subset(demo_dataset, tmp_path, LUYU, "q-da1f371c63b5", "q-96e76df9f7c8")
    result = invoke("answer", "--dataset", demo_dataset, "--questions", questions, "--generator", f"file:{answers}",
                    "--no-save", "--no-progress", "--out", tmp_path / "r.json", code=1 if message else 0)
    if message:
        assert f"answers.jsonl:1: field '{field}':" in result.output and message in result.output, result.output
    else:
        failed = next(q for q in AnswerReport.load(tmp_path / "r.json").questions if q.id == LUYU)
        assert "answers.jsonl:1: the record has no response" in failed.error
