"""``answer --judge`` against a chat server on 127.0.0.1 that plays generator and judge: every judge metric, token
counts and latency in the stored run; nothing asked twice; failures counted and never scored; samples; prompt files;
an endpoint that goes down."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply

from .conftest import BLOCK, judge_requests, plays_both, share, which_judge

QUESTIONS = Path(__file__).resolve().parents[3] / "datasets" / "demo" / "answer_questions.jsonl"
FIVE = "score5,correctness,groundedness,chunk_relevance,context_sufficiency"
JUDGE_METRICS = ("average_score", "response/llm_judged/correctness/rating", "response/llm_judged/groundedness/rating",
                 "retrieval/llm_judged/chunk_relevance_precision", "retrieval/llm_judged/context_sufficiency/rating")


def args(server, dataset, *extra):
    return ["answer", "--dataset", str(dataset), "--questions", str(QUESTIONS), "--generator", "openai:gen-model",
            "--base-url", server.url, "--retriever", "bm25", "--judge-model", "judge-model", "--max-retries", "1",
            "--judge-max-retries", "1", "--sleep-time", "0", "--no-progress", *map(str, extra)]


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, list(arguments))
    assert result.exit_code == code, result.output
    return result


def test_five_judges_give_every_metric_tokens_and_latency_and_nothing_is_asked_twice(demo_dataset, llm_env,
                                                                                     judge_server, tmp_path):
    runs = tmp_path / "runs.sqlite"
    result = invoke(*args(judge_server, demo_dataset, "--judge", FIVE, "--out", tmp_path / "r.json", "--runs-db", runs,
                          "--name", "judged"))
    asked = judge_server.count()
    # per question: score5, correctness, groundedness, context_sufficiency once, chunk_relevance once per context
    assert judge_requests(judge_server) == 5 * (4 + 5) and asked == 5 + 45
    invoke(*args(judge_server, demo_dataset, "--judge", FIVE, "--no-save"))
    assert judge_server.count() == asked  # answers and verdicts all come from the answer cache

    report = AnswerReport.load(tmp_path / "r.json")
    for name in JUDGE_METRICS:
        assert name in report.means["answer"] and report.counts["answer"][name] == 5, name
    for name in ("agent/input_token_count", "agent/output_token_count", "agent/total_token_count"):
        assert report.means["answer"][name] > 0
    usage = report.usage
    assert usage["latency_p50"] > 0 and usage["latency_p95"] >= usage["latency_p50"]
    assert usage["judge_total_tokens"] == usage["judge_input_tokens"] + usage["judge_output_tokens"] > 0
    assert usage["judge_requests"] == 45 and set(report.judges) == set(FIVE.split(","))
    assert "judge trust" in result.output and "tokens per answer" in result.output
    for question in report.questions:
        assert question.metrics["answer"]["agent/total_token_count"] == question.total_tokens > 0
        verdict = question.judges["score5"]
        assert verdict["value"] == 1 + round(4 * share(question.ground_truth, question.answer))  # the server's rule
        assert verdict["reasoning"].startswith("covers") and verdict["input_tokens"] > 0
        chunks = question.judges["chunk_relevance"]["details"]
        assert [d["position"] for d in chunks] == list(range(5))
        assert question.metrics["answer"]["retrieval/llm_judged/chunk_relevance_precision"] == \
            sum(d["rating"] == "yes" for d in chunks) / 5
    judge_prompt = next(r for r in judge_server.requests if r["model"] == "judge-model")["messages"][0]["content"]
    assert "参考答案" in judge_prompt or "上下文" in judge_prompt  # the demo is Chinese: the zh prompts
    assert report.config.scorers["score5"]["prompt"] == "default:score5_zh"
    assert report.config.scorers["score5"]["model"] == "judge-model"

    exported = invoke("runs", "export", "judged", "--format", "json", "--runs-db", runs).output
    stored = json.loads(exported)["report"]
    assert stored["means"]["answer"]["average_score"] == report.means["answer"]["average_score"]
    assert "agent/total_token_count" in stored["questions"][0]["metrics"]["answer"]
    for path in (tmp_path / "r.json", runs):
        assert TEST_API_KEY.encode() not in path.read_bytes()


def test_malformed_and_off_scale_verdicts_are_failures_counted_apart(demo_dataset, llm_env, tmp_path):
    def sloppy(request):
        if request["model"] != "judge-model":
            return plays_both(request)
        name = which_judge(request["messages"][0]["content"])
        question = BLOCK.findall(request["messages"][0]["content"])[0]
        if name == "correctness" and "鸡" in question:  # two of the five questions
            return Reply("Yes, I think it is correct.")  # never JSON, not even after the repair request
        if name == "score5" and "鲈鱼" in question:
            return Reply('{"score": 7, "reasoning": "even better than perfect"}')
        return plays_both(request)

    with ChatServer(sloppy) as server:
        result = invoke(*args(server, demo_dataset, "--judge", "score5,correctness", "--out", tmp_path / "r.json",
                              "--no-save"))
        assert judge_requests(server, "correctness") == 5 + 2  # each verdict, then one repair request for two
        assert judge_requests(server, "score5") == 4 + 2
    report = AnswerReport.load(tmp_path / "r.json")
    assert report.counts["answer"]["response/llm_judged/correctness/rating"] == 3  # the failed two are never a 0
    assert report.judges["correctness"].failed == 2 and report.judges["correctness"].judged == 3
    assert report.judges["score5"].failed == 1 and report.counts["answer"]["average_score"] == 4
    luyu = next(q for q in report.questions if q.id == "a-luyu")
    assert luyu.judges["score5"]["value"] is None and "score must be a whole number from 1 to 5" in \
        luyu.judges["score5"]["failure"]
    assert "llm_judge_score" not in luyu.metrics["answer"]
    assert "judge correctness: 2 of 5 verdicts failed" in result.output


def test_a_refused_judge_request_fails_that_verdict_only(demo_dataset, llm_env, tmp_path):
    def picky(request):
        if request["model"] == "judge-model" and "鸡蛋汤" in request["messages"][0]["content"]:
            return Reply(status=400)
        return plays_both(request)

    with ChatServer(picky) as server:
        invoke(*args(server, demo_dataset, "--judge", "score5", "--out", tmp_path / "r.json", "--no-save"))
    summary = AnswerReport.load(tmp_path / "r.json").judges["score5"]
    assert summary.judged == 4 and summary.failed == 1 and "HTTP 400" in summary.failures[0]


def test_samples_give_the_majority_and_the_disagreement(demo_dataset, llm_env, tmp_path):
    seen: dict[str, int] = {}

    def wavering(request):
        if request["model"] != "judge-model":
            return plays_both(request)
        key = request["messages"][0]["content"]
        seen[key] = seen.get(key, 0) + 1
        rating = "no" if seen[key] == 2 else "yes"  # the second sample of each request disagrees
        return Reply(json.dumps({"rating": rating, "rationale": f"sample {seen[key]}"}))

    with ChatServer(wavering) as server:
        invoke(*args(server, demo_dataset, "--judge", "correctness", "--judge-samples", 3, "--out",
                     tmp_path / "r.json", "--no-save"))
        judged = [r for r in server.requests if r["model"] == "judge-model"]
        assert len(judged) == 15 and {r["temperature"] for r in judged} == {0.7}
        invoke(*args(server, demo_dataset, "--judge", "correctness", "--judge-samples", 3, "--no-save"))
        assert judge_requests(server) == 15  # each sample is cached apart
        refused = invoke(*args(server, demo_dataset, "--judge", "correctness", "--judge-samples", 3,
                               "--judge-temperature", 0, "--no-save"), code=2)
        assert "--judge-samples above 1 needs --judge-temperature above 0" in refused.output
    report = AnswerReport.load(tmp_path / "r.json")
    for question in report.questions:
        verdict = question.judges["correctness"]
        assert verdict["samples"] == [1.0, 0.0, 1.0] and verdict["value"] == 1.0 and verdict["disagreement"]
    assert report.judges["correctness"].samples == 3 and report.judges["correctness"].disagreement_rate == 1.0
    assert report.config.scorers["correctness"]["samples"] == 3


def test_a_prompt_file_replaces_one_judges_prompt(demo_dataset, llm_env, judge_server, tmp_path):
    prompt = tmp_path / "strict.md"
    prompt.write_text("STRICT GRADER. Give it a score from 1 to 5.\nQuestion:\n<<<\n$question\n>>>\nReference:\n<<<\n"
                      "$ground_truth\n>>>\nAnswer:\n<<<\n$answer\n>>>\nscore it from 1 to 5, as JSON.", encoding="utf-8")
    invoke(*args(judge_server, demo_dataset, "--judge", "score5,correctness", "--judge-prompt", f"score5={prompt}",
                 "--out", tmp_path / "r.json", "--no-save"))
    prompts = [r["messages"][0]["content"] for r in judge_server.requests if r["model"] == "judge-model"]
    assert sum(p.startswith("STRICT GRADER") for p in prompts) == 5 and len(prompts) == 10
    scorers = AnswerReport.load(tmp_path / "r.json").config.scorers
    assert scorers["score5"]["prompt"] == str(prompt) and scorers["correctness"]["prompt"] == "default:correctness_zh"

    broken = tmp_path / "broken.md"
    broken.write_text("$question $answer $secret", encoding="utf-8")
    before = judge_server.count()
    failed = invoke(*args(judge_server, demo_dataset, "--judge", "score5", "--judge-prompt", broken, "--no-save"),
                    code=1)
    assert "unknown placeholder $secret" in failed.output and judge_server.count() == before
    stray = invoke(*args(judge_server, demo_dataset, "--judge", "score5", "--judge-prompt", f"safety={prompt}",
                         "--no-save"), code=2)
    assert "judge 'safety' is not among --judge score5" in stray.output
    unknown = invoke(*args(judge_server, demo_dataset, "--judge", "score5,nope", "--no-save"), code=2)
    assert "unknown judge 'nope'" in unknown.output and "context_sufficiency" in unknown.output


def test_a_judge_endpoint_that_goes_down_stops_the_run_and_a_rerun_finishes_it(demo_dataset, llm_env, tmp_path):
    with ChatServer(plays_both) as server:
        server.fail_after = 14
        down = invoke(*args(server, demo_dataset, "--judge", "score5,correctness", "--threads", 1, "--no-save"),
                      code=1)
        assert "gave up after 2 attempts" in down.output
        answered = [json.dumps(r, sort_keys=True) for r in server.requests[:14]]
        server.fail_after = None
        invoke(*args(server, demo_dataset, "--judge", "score5,correctness", "--threads", 1, "--no-save", "--out",
                     tmp_path / "r.json"))
        again = [json.dumps(r, sort_keys=True) for r in server.requests[14:]]
    assert not set(answered) & set(again)  # nothing answered before the failure was asked again
    report = AnswerReport.load(tmp_path / "r.json")
    assert report.judges["score5"].judged == 5 and report.judges["correctness"].judged == 5
