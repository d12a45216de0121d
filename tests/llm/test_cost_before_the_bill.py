"""Cost before the bill: --dry-run sends nothing and its estimate is within 10 % of what the run then reports
(answer, judge-answers, build-dataset --generator llm, against a counting chat server); --max-cost stops within one
request of the limit, keeps the journal, and the re-run finishes without repeating a request; hostile limits."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.llm.budget import Budget, BudgetError, BudgetReached, check_max_cost
from ragretrieval.llm.tokens import MESSAGE_TOKENS, Calibration, body_tokens, estimate_tokens
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply

from .conftest import good_reply
from .test_build_questions import DOCS

QUESTIONS = "datasets/demo/answer_questions.jsonl"
PRICES = ["--price-in", "1", "--price-out", "2", "--judge-price-in", "1", "--judge-price-out", "2"]


def plays_both(request):
    return Reply(JUDGE_REPLY if request["model"] == "judge" else "大火蒸 8 分钟 [0]。")


def cli(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output + (result.stderr or "")
    return result


def answer(demo_dataset, server, *extra, code=0):
    return cli("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "openai:gen",
               "--base-url", server.url, "--retriever", "bm25", "--judge", "score5,correctness,chunk_relevance",
               "--judge-model", "judge", "--no-progress", "--no-save", *PRICES, *extra, code=code)


def planned(output: str) -> dict:
    """The dry run's total row: requests, cached, input tokens, output tokens, cost."""
    (row,) = [line.split() for line in output.splitlines() if line.strip().startswith("total")]
    return {"requests": int(row[1]), "cached": int(row[2]), "input": int(row[3]), "output": int(row[4]),
            "cost": float(row[5].lstrip("$"))}


def test_the_character_rule():
    assert estimate_tokens("") == 0 and estimate_tokens("abc") == 2 and estimate_tokens("清蒸鲈鱼") == 2
    body = {"messages": [{"role": "system", "content": "ab"}, {"role": "user", "content": "清蒸鲈鱼要蒸几分钟"}]}
    assert body_tokens(body) == 1 + 5 + 2 * MESSAGE_TOKENS and body_tokens({"prompt": "abcd"}) == 2
    learnt = Calibration(output_prior=50)
    assert learnt.input_tokens(100) == 100 and learnt.output_tokens() == 50
    learnt.add(estimated=100, reported=150, output=10)  # this endpoint's tokenizer: 1.5 times the rule
    learnt.add(estimated=100, reported=0, output=999)  # no usage reported: nothing learnt
    assert learnt.input_tokens(100) == 150 and learnt.output_tokens() == 10


def test_a_dry_run_sends_nothing_and_is_within_ten_percent(demo_dataset, llm_env):
    with ChatServer(plays_both) as server:
        dry = answer(demo_dataset, server, "--dry-run", "-v")
        assert server.count() == 0 and "dry run: nothing was sent" in dry.output
        plan = planned(dry.output)
        assert plan["requests"] == 5 + 5 + 5 + 25 and plan["cached"] == 0  # chunk_relevance: one per context
        assert dry.output.count("  generator: ") == 5 and "judge chunk_relevance: a-luyu ~" in dry.output
        real = answer(demo_dataset, server, "--out", llm_env / "r.json")
        assert server.count() == plan["requests"]
        again = planned(answer(demo_dataset, server, "--dry-run").output)  # everything is in the answer cache now
        assert again == {"requests": 0, "cached": 40, "input": 0, "output": 0, "cost": 0.0}
        assert server.count() == plan["requests"]
    usage = AnswerReport.load(llm_env / "r.json").usage
    reported_in = usage["input_tokens"] + usage["judge_input_tokens"]
    reported = reported_in + usage["output_tokens"] + usage["judge_output_tokens"]
    assert abs(plan["input"] - reported_in) <= 0.10 * reported_in
    assert abs(plan["input"] + plan["output"] - reported) <= 0.10 * reported
    assert abs(plan["cost"] - usage["total_cost"]) <= 0.10 * usage["total_cost"]
    assert "usage:" in real.output


def test_judge_answers_dry_run(demo_dataset, llm_env):
    cli("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "extractive", "--retriever",
        "bm25", "--no-progress", "--out", llm_env / "run.json", "--no-save")
    judged = ["judge", "answers", llm_env / "run.json", "--judge", "groundedness,context_sufficiency", "--judge-model",
              "judge", "--judge-price-in", "1", "--judge-price-out", "2", "--no-progress"]
    with ChatServer(plays_both) as server:
        plan = planned(cli(*judged, "--judge-base-url", server.url, "--dry-run").output)
        assert server.count() == 0
        cli(*judged, "--judge-base-url", server.url, "--out", llm_env / "judged.json")
        assert server.count() == plan["requests"] == 10  # two judges, five questions, one request each
    usage = AnswerReport.load(llm_env / "judged.json").usage
    assert abs(plan["input"] - usage["judge_input_tokens"]) <= 0.10 * usage["judge_input_tokens"]
    assert abs(plan["cost"] - usage["judge_cost"]) <= 0.10 * usage["judge_cost"]


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "dishes"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_build_dataset_dry_run(tmp_path, corpus, llm_env):
    args = ["dataset", "build", corpus, "--generator", "llm", "--model", "m", "--per-doc", "2", "--no-progress",
            "--price-in", "1", "--price-out", "2"]
    with ChatServer(good_reply) as server:
        plan = planned(cli(*args, "--base-url", server.url, "--out", tmp_path / "ds", "--dry-run").output)
        assert server.count() == 0 and not (tmp_path / "ds").exists()
        assert plan["requests"] == len(DOCS)
        cli(*args, "--base-url", server.url, "--out", tmp_path / "ds")
        sent = sum(len("".join(m["content"] for m in r["messages"])) // 2 for r in server.requests)
    assert abs(plan["input"] - sent) <= 0.10 * sent
    cli("dataset", "build", corpus, "--out", tmp_path / "ds2", "--dry-run", code=2)  # filename questions are free


def test_max_cost_stops_within_one_request_and_the_rerun_repeats_none(demo_dataset, llm_env):
    with ChatServer(plays_both) as server:
        full = planned(answer(demo_dataset, server, "--dry-run").output)
        limit = full["cost"] / 2
        stopped = answer(demo_dataset, server, "--max-cost", f"{limit:.6f}", "--threads", "1", code=3)
        first = list(server.requests)
        assert "stopped before passing --max-cost" in stopped.output and "kept in" in stopped.output
        spent = sum((len("".join(m["content"] for m in r["messages"])) // 2 * 1 + len(
            JUDGE_REPLY if r["model"] == "judge" else "大火蒸 8 分钟 [0]。") * 2) / 1e6 for r in first)
        largest = max(len("".join(m["content"] for m in r["messages"])) for r in first) / 1e6 + 200 / 1e6
        assert spent <= limit < spent + largest  # within one request of the limit
        answer(demo_dataset, server, "--out", llm_env / "r.json")
        bodies = Counter(json.dumps(r, sort_keys=True) for r in server.requests)
        assert max(bodies.values()) == 1 and len(bodies) == full["requests"]  # nothing asked twice
    report = AnswerReport.load(llm_env / "r.json")
    assert len(report.questions) == 5 and report.failed == 0


def test_max_cost_zero_allows_only_cached_answers(demo_dataset, llm_env):
    with ChatServer(plays_both) as server:
        answer(demo_dataset, server, "--max-cost", "0", code=3)
        assert server.count() == 0
        answer(demo_dataset, server)  # pays for everything
        paid = server.count()
        answer(demo_dataset, server, "--max-cost", "0")  # from the cache: free, so it finishes
        answer(demo_dataset, server, "--max-cost", "1e300")
        assert server.count() == paid


@pytest.mark.parametrize("value, message", [("-1", "greater than or equal to 0"), ("nan", "finite"),
                                            ("inf", "finite"), ("-inf", "finite"), ("ten", "not a valid float")])
def test_hostile_limits_are_refused(demo_dataset, llm_env, value, message):
    with ChatServer(plays_both) as server:
        result = answer(demo_dataset, server, "--max-cost", value, code=2)
        assert "--max-cost" in result.output and message in result.output and server.count() == 0
    for bad in (-0.01, float("nan"), float("inf"), "1", True, None.__class__):
        with pytest.raises(BudgetError, match="max_cost"):
            check_max_cost(bad)
    assert check_max_cost(None) is None and check_max_cost(0) == 0.0 and check_max_cost(10 ** 400 // 10 ** 390) == 1e10


def test_a_limit_without_prices_is_refused(demo_dataset, llm_env):
    with ChatServer(plays_both) as server:
        result = cli("answer", "--dataset", demo_dataset, "--questions", QUESTIONS, "--generator", "openai:gen",
                     "--base-url", server.url, "--retriever", "bm25", "--no-save", "--max-cost", "1", code=2)
        assert "--max-cost needs the prices" in result.output and server.count() == 0


def test_the_budget_holds_what_is_in_flight():
    budget = Budget(1.0)
    budget.hold(0.6, "a")
    with pytest.raises(BudgetReached, match=r"the next \(b\) would cost about \$0.5000"):
        budget.hold(0.5, "b")  # 0.6 held + 0.5 > 1
    budget.settle(0.6, 0.3)  # it cost less than held
    budget.hold(0.5, "b")
    budget.release(0.5)
    assert (budget.spent, budget.held, budget.requests) == (0.3, 0.0, 1)
    assert BudgetReached.exit_code == 3


def test_build_dataset_max_cost_resumes(tmp_path, corpus, llm_env):
    args = ["dataset", "build", corpus, "--generator", "llm", "--model", "m", "--per-doc", "2", "--no-progress",
            "--price-in", "1", "--price-out", "2", "--out", tmp_path / "ds", "--concurrency", "1"]
    with ChatServer(good_reply) as server:
        cost = planned(cli(*args, "--base-url", server.url, "--dry-run").output)["cost"]
        stopped = cli(*args, "--base-url", server.url, "--max-cost", f"{cost / 2:.6f}", code=3)
        assert "documents done are kept in" in stopped.output and 0 < server.count() < len(DOCS)
        cli(*args, "--base-url", server.url)
        assert server.count() == len(DOCS)  # the documents done were not asked again


def test_the_estimate_of_one_request(llm_env):
    from ragretrieval.llm.client import ChatClient, LLMSettings

    client = ChatClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", max_tokens=30, price_in=1,
                                    price_out=2))
    body = client.request([{"role": "user", "content": "x" * 100}])
    assert client.estimate(body) == (53, 30, (53 * 1 + 30 * 2) / 1e6)  # 50 + 3 a message; 200 expected, capped
    assert client.estimate(body, output_tokens=10)[1] == 10
    assert client.lookup([{"role": "user", "content": "x" * 100}]) == (body, None)  # nothing cached, nothing sent


def test_the_limit_is_one_rule_for_python_and_build_dataset(tmp_path, corpus):
    from ragretrieval.answers.settings import AnswerSettings

    for bad in (-1, float("nan"), float("inf"), "ten", [1]):
        with pytest.raises(ValueError, match="max_cost"):
            AnswerSettings(max_cost=bad, price_in=1)
    with pytest.raises(ValueError, match="max_cost needs the prices"):
        AnswerSettings(max_cost=5)
    assert AnswerSettings(max_cost=0, judge_price_out=1).max_cost == 0
    for value in ("-1", "nan", "inf"):
        result = cli("dataset", "build", corpus, "--generator", "llm", "--out", tmp_path / "ds", "--max-cost", value,
                     code=2)
        assert "--max-cost" in result.output and not (tmp_path / "ds").exists()


# --------------------------------------------------------------------------------- requests in flight at the limit
ANSWER_TEXT = "大火蒸 8 分钟 [0]。"


def paid(requests, reply: str = ANSWER_TEXT) -> float:
    """What the requests the server answered cost at $1 in, $2 out a million tokens (the server reports characters
    of the prompt / 2 and characters of the answer as tokens)."""
    return sum((len("".join(m["content"] for m in r["messages"])) // 2 + 2 * len(reply)) / 1e6 for r in requests)


def slow_answers(request):
    return Reply(ANSWER_TEXT, delay=0.3)  # four requests are in flight together when the limit is reached


def stopped_at_the_limit(demo_dataset, server, concurrency: int = 4):
    return cli("answer", "--dataset", demo_dataset, "--generator", "openai:m", "--base-url", server.url,
               "--retriever", "bm25", "--price-in", "1", "--price-out", "2", "--max-cost", "0.003",
               "--concurrency", concurrency, "--no-save", "--no-progress", code=3)


def test_requests_in_flight_at_the_limit_are_counted_and_their_answers_kept(demo_dataset, llm_env):
    with ChatServer(slow_answers) as server:
        stopped = stopped_at_the_limit(demo_dataset, server)
        sent = server.count()
        message = stopped.stderr.strip().splitlines()[-1]
        assert 0 < sent < 30 and f"${paid(server.requests):.4f} spent on {sent} request(s)" in message, message
        journal = message.split("kept in ")[1].split(". Run")[0]
        assert f"{sent} of 30 questions are answered and kept in {journal}" in message
        assert len(open(journal, encoding="utf-8").read().splitlines()) == sent  # every answer paid for is kept
        cli("answer", "--dataset", demo_dataset, "--generator", "openai:m", "--base-url", server.url,
            "--retriever", "bm25", "--concurrency", "4", "--no-save", "--no-progress")
        assert server.count() == 30  # the answers kept are not asked again


def test_a_resumed_answer_run_logs_every_question(demo_dataset, llm_env):
    with ChatServer(plays_both) as server:
        stopped_at_the_limit(demo_dataset, server, concurrency=1)
        kept = server.count()  # answered, journaled: the next run resumes after them
        log = llm_env / "run.log"
        cli("answer", "--dataset", demo_dataset, "--generator", "openai:m", "--base-url", server.url,
            "--retriever", "bm25", "--concurrency", "4", "--no-save", "--no-progress", "--log", log)
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert kept > 0 and len(lines) == 30 and len({line["id"] for line in lines}) == 30
    assert all(line["answer"] == ANSWER_TEXT and line["error"] is None for line in lines)


def test_build_dataset_stopped_by_the_limit_names_a_journal_only_if_there_is_one(tmp_path, corpus, llm_env):
    args = ["dataset", "build", corpus, "--generator", "llm", "--model", "m", "--per-doc", "2", "--no-progress",
            "--price-in", "1", "--price-out", "2", "--out", tmp_path / "ds", "--concurrency", "4"]
    with ChatServer(lambda request: Reply(good_reply(request).content, delay=0.3)) as server:
        nothing = cli(*args, "--base-url", server.url, "--max-cost", "0.0001", code=3)  # not one request fits
        assert server.count() == 0 and "no document was finished, so no journal was written" in nothing.output
        assert "journal.jsonl" not in nothing.output
        stopped = cli(*args, "--base-url", server.url, "--max-cost", "0.002", code=3)
        sent = server.count()
        journal = stopped.output.split("kept in ")[1].split(". Run")[0]
        assert 0 < sent < len(DOCS) and len(open(journal, encoding="utf-8").read().splitlines()) == sent
        assert f"spent on {sent} request(s)" in stopped.output
