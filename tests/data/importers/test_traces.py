"""Production traces written by MLflow (both layouts) and by the OpenTelemetry SDK with OpenInference names, read by
`import-traces`: every derived field is checked against what the app did and what the library says, then the records
are scored by `eval --retriever run-file` and `answer --generator file:` against the demo dataset's labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import QuestionRecord, load_dataset, read_jsonl
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply

from .conftest import CASES

QUESTION = {"如何做清蒸鲈鱼？": "q-2bd241432d4e", "如何做 煮鸡蛋?": "q-da1f371c63b5", "如何做麻婆豆腐？": "q-96e76df9f7c8",
            "如何做蛋炒饭？": "q-7d44ea6d0fda"}


def invoke(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def expected(case: dict, truth: dict, with_score: bool) -> dict:
    """The record a trace of `case` must give: what the app received, returned, retrieved last and spent."""
    record = {"request_id": truth["trace_id"], "trace_id": truth["trace_id"], "request": case["request"],
              "agent/latency_seconds": (truth["end"] - truth["start"]) / 1e9}
    last = case["retrievals"][-1] if case["retrievals"] else []
    record["retrieved_context"] = [{"doc_uri": d["doc_uri"], "content": d["content"],
                                    **({"score": d.get("score", 1.0)} if with_score else {})} for d in last]
    if case["answer"] is not None:
        record["response"] = case["answer"]
    if case["usage"]:
        record["agent/input_token_count"] = sum(u[0] for u in case["usage"])
        record["agent/output_token_count"] = sum(u[1] for u in case["usage"])
        record["agent/total_token_count"] = sum(u[0] + u[1] for u in case["usage"])
    return record


def imported(source: Path, format_: str, tmp_path: Path, *extra) -> tuple[list[dict], str]:
    out = tmp_path / f"{source.stem}.records.jsonl"
    result = invoke("questions", "import-traces", source, "--format", format_, "--out", out, *extra)
    return records(out), result.output


# ------------------------------------------------------------------------------------------------ derived fields
def test_mlflow3_traces_give_every_field(mlflow_traces, tmp_path):
    path, truth = mlflow_traces
    got, output = imported(path, "mlflow", tmp_path)
    assert got == [expected(case, t, with_score=False) for case, t in zip(CASES, truth)]
    assert "note: 1 trace(s) have no RETRIEVER span (retrieved_context written empty): " + truth[4]["trace_id"] \
        in output
    assert "note: 1 trace(s) have no output (no response written; answer fails their question): " + \
        truth[5]["trace_id"] in output
    assert "6 traces -> 6 records" in output


def test_mlflow2_layout_gives_the_same_records(mlflow_traces, tmp_path):
    path, truth = mlflow_traces
    old = tmp_path / "mlflow2.jsonl"
    old.write_text("".join(json.dumps(t["mlflow2"], ensure_ascii=False) + "\n" for t in truth), encoding="utf-8")
    assert all("request_id" in t["mlflow2"]["info"] and "context" in t["mlflow2"]["data"]["spans"][0] for t in truth)
    got, _ = imported(old, "mlflow", tmp_path)
    assert got == [expected(case, t, with_score=False) for case, t in zip(CASES, truth)]


def test_a_folder_of_pretty_printed_mlflow_traces(mlflow_traces, tmp_path):
    path, truth = mlflow_traces
    folder = tmp_path / "traces"
    folder.mkdir()
    for i, line in enumerate(records(path)):
        (folder / f"trace-{i:02d}.json").write_text(json.dumps(line, indent=2, ensure_ascii=False), encoding="utf-8")
    (folder / "README.txt").write_text("not a trace", encoding="utf-8")
    got, _ = imported(folder, "mlflow", tmp_path)
    assert got == [expected(case, t, with_score=False) for case, t in zip(CASES, truth)]


def test_otlp_json_gives_every_field(otlp_traces, tmp_path):
    path, truth = otlp_traces
    lines = records(path)
    assert len(lines) == 2 and {"resourceSpans"} == set(lines[0])  # the Collector's layout, one request per line
    span = lines[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and isinstance(span["kind"], int)
    got, output = imported(path, "otlp", tmp_path)
    assert got == [expected(case, t, with_score=True) for case, t in zip(CASES, truth)]
    assert "6 traces -> 6 records" in output


def test_base64_ids_as_protobufs_json_mapping_writes_them_are_read(otlp_traces, tmp_path):
    import base64

    path, truth = otlp_traces
    lines = records(path)
    for line in lines:
        for span in line["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if span.get(key):
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    other = tmp_path / "base64.jsonl"
    other.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    got, _ = imported(other, "otlp", tmp_path)
    assert got == [expected(case, t, with_score=True) for case, t in zip(CASES, truth)]


# ------------------------------------------------------------------------------------ matching and scoring
@pytest.mark.parametrize("fixture, format_", [("mlflow_traces", "mlflow"), ("otlp_traces", "otlp")])
def test_traces_matched_to_the_dataset_score_against_its_labels(request, fixture, format_, demo_dataset, tmp_path):
    path, truth = request.getfixturevalue(fixture)
    unmatched, report = tmp_path / "unmatched.jsonl", tmp_path / "report.json"
    got, output = imported(path, format_, tmp_path, "--dataset", demo_dataset, "--unmatched", unmatched,
                           "--report", report)
    # the second 清蒸鲈鱼 trace is the later one: it is kept, the first reported as a repeat
    assert [(r["request_id"], r["trace_id"]) for r in got] == [
        (QUESTION["如何做 煮鸡蛋?"], truth[1]["trace_id"]), (QUESTION["如何做麻婆豆腐？"], truth[2]["trace_id"]),
        (QUESTION["如何做清蒸鲈鱼？"], truth[3]["trace_id"]), (QUESTION["如何做蛋炒饭？"], truth[5]["trace_id"])]
    assert [r["trace_id"] for r in records(unmatched)] == [truth[4]["trace_id"]]
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["matched"] == {"exact": 4, "normalised": 1}
    assert summary["repeats"] == [f"{truth[0]['trace_id']}: {QUESTION['如何做清蒸鲈鱼？']}"]
    assert "4 traces matched a question exactly, 1 after normalising; 1 unmatched" in output

    runs = tmp_path / "eval.json"
    invoke("eval", "--dataset", demo_dataset, "--retriever", "run-file", "--run",
           tmp_path / f"{path.stem}.records.jsonl", "--granularity", "doc", "--k", "1,2", "--no-save", "--no-progress",
           "--out", runs)
    scored = {q["id"]: q["metrics"]["doc"] for q in json.loads(runs.read_text(encoding="utf-8"))["questions"]}
    assert scored[QUESTION["如何做清蒸鲈鱼？"]]["recall@1"] == 0.0  # the kept trace retrieved 红烧带鱼
    assert scored[QUESTION["如何做 煮鸡蛋?"]]["recall@1"] == 1.0
    assert scored[QUESTION["如何做麻婆豆腐？"]]["recall@1"] == 1.0
    assert scored[QUESTION["如何做麻婆豆腐？"]]["precision@2"] == 0.5

    subset = tmp_path / "asked.jsonl"
    asked = [q for q in load_dataset(demo_dataset).questions if q.id in QUESTION.values()]
    subset.write_text("".join(q.model_dump_json() + "\n" for q in asked), encoding="utf-8")
    invoke("answer", "--dataset", demo_dataset, "--questions", subset, "--generator",
           f"file:{tmp_path / f'{path.stem}.records.jsonl'}", "--no-save", "--no-progress", "--out",
           tmp_path / "answers.json")
    answers = {q.id: q for q in AnswerReport.load(tmp_path / "answers.json").questions}
    mapo = answers[QUESTION["如何做麻婆豆腐？"]]
    assert mapo.answer == CASES[2]["answer"] and (mapo.input_tokens, mapo.output_tokens) == (200, 40)
    assert mapo.latency == pytest.approx((truth[2]["end"] - truth[2]["start"]) / 1e9)
    assert [c.doc_id for c in mapo.contexts] == ["vegetable_dish/麻婆豆腐.md", "meat_dish/回锅肉.md"]
    assert mapo.contexts[0].text == "豆腐切块焯水"
    assert "has no response" in answers[QUESTION["如何做蛋炒饭？"]].error


def test_unmatched_requests_are_judged_on_their_answers(mlflow_traces, demo_dataset, tmp_path, llm_env):
    path, truth = mlflow_traces
    unmatched = tmp_path / "unmatched.jsonl"
    imported(path, "mlflow", tmp_path, "--dataset", demo_dataset, "--unmatched", unmatched)
    invoke("questions", "import", unmatched, "--dataset", demo_dataset, "--out", tmp_path / "requests.jsonl")
    question, = read_jsonl(tmp_path / "requests.jsonl", QuestionRecord)
    assert (question.id, question.text, question.relevant) == (truth[4]["trace_id"], CASES[4]["request"], [])
    assert question.provenance.generator == "trace"
    with ChatServer(lambda request: Reply(JUDGE_REPLY)) as server:
        invoke("answer", "--dataset", demo_dataset, "--questions", tmp_path / "requests.jsonl", "--generator",
               f"file:{unmatched}", "--judge", "relevance_to_query", "--judge-model", "judge", "--judge-base-url",
               server.url, "--no-save", "--no-progress", "--out", tmp_path / "judged.json")
        prompt = server.requests[0]["messages"][-1]["content"]
    assert CASES[4]["request"] in prompt and CASES[4]["answer"] in prompt
    judged = AnswerReport.load(tmp_path / "judged.json").questions[0]
    assert judged.metrics["answer"] == {"response/llm_judged/relevance_to_query/rating": 1.0,
                                        "agent/input_token_count": 30.0, "agent/output_token_count": 8.0,
                                        "agent/total_token_count": 38.0}


def test_a_production_question_round_trips_through_the_agent_format(mlflow_traces, demo_dataset, tmp_path):
    path, truth = mlflow_traces
    unmatched = tmp_path / "unmatched.jsonl"
    imported(path, "mlflow", tmp_path, "--dataset", demo_dataset, "--unmatched", unmatched)
    invoke("questions", "import", unmatched, "--dataset", demo_dataset, "--out", tmp_path / "q.jsonl")
    invoke("questions", "export", "--dataset", demo_dataset, "--questions", tmp_path / "q.jsonl", "--out",
           tmp_path / "exported.jsonl")
    invoke("questions", "import", tmp_path / "exported.jsonl", "--dataset", demo_dataset, "--out", tmp_path / "back.jsonl")
    assert read_jsonl(tmp_path / "back.jsonl", QuestionRecord) == read_jsonl(tmp_path / "q.jsonl", QuestionRecord)
    labelless = tmp_path / "labelless.jsonl"
    labelless.write_text(json.dumps({"request": "随便问问"}, ensure_ascii=False) + "\n", encoding="utf-8")
    result = invoke("questions", "import", labelless, "--dataset", demo_dataset, "--out", tmp_path / "x.jsonl", code=1)
    assert "labelless.jsonl:1: field 'expected_retrieved_context': needed to import a question" in result.output


def test_another_question_set_is_matched_instead_of_the_datasets_own(mlflow_traces, demo_dataset, tmp_path):
    path, truth = mlflow_traces
    questions = tmp_path / "q.jsonl"
    asked = next(q for q in load_dataset(demo_dataset).questions if q.id == QUESTION["如何做麻婆豆腐？"])
    questions.write_text(asked.model_copy(update={"id": "mine"}).model_dump_json() + "\n", encoding="utf-8")
    got, output = imported(path, "mlflow", tmp_path, "--dataset", demo_dataset, "--questions", questions)
    assert [(r["request_id"], r["trace_id"]) for r in got] == [("mine", truth[2]["trace_id"])]
    assert "1 traces matched a question exactly, 0 after normalising; 5 unmatched, not written: --unmatched FILE " \
        "keeps them" in output
