"""The conformance suite every judge runs: subclass `JudgeConformance`, give the judge's name, inherit the tests.

A judge (built in, or a plugin from the entry-point group ``ragretrieval.judges``) proves it behaves as ``answer
--judge``, ``judge-answers`` and the web app expect::

    import pytest
    from ragretrieval.testing.judge_conformance import JudgeConformance

    class TestMyJudge(JudgeConformance):
        @pytest.fixture
        def judge_name(self):
            return "mine"

The suite starts an OpenAI-compatible chat server on 127.0.0.1 (chat_server.py) that answers every request with one
reply, which a test may change. Fixtures a subclass gives or overrides:

- ``judge_name`` (required): the name the registry builds the judge from.
- ``uses_llm``: whether the judge asks a model (default True). Judges that do not skip the tests of requests.
- ``good_reply``: a reply the judge accepts (default: one object that fits the built-in schemas,
  ``{"rating": "yes", "score": 4, "verdicts": [three nugget verdicts], ...}``); ``malformed_reply`` (default: prose,
  no JSON) and ``off_scale_reply`` (default: ``{"rating": "maybe", "score": 9}``) two it must not.
- ``options``: the `JudgeOptions` (default: model ``judge-model`` at the suite's server, English prompts, and the
  suite's nuggets file: three nuggets for each sample and each question of the suite's dataset but ``q-none``, whose
  list is empty, `conformance_nuggets`).

What it checks: the protocol and settings (JSON, no secret); a verdict with a value, tokens and requests on a full
sample, recorded under the judge's metric; no request sent twice for the same sample; a malformed reply gets exactly
one repair request and then a failure without a value, and so does a verdict off the scale; a judge that does not
apply says why and asks nothing; a question without an answer is not judged; the same verdicts from threads as
alone; and a whole session with the judge appended, to a report that summarises it.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from ..answers.batch import run_answers
from ..answers.judges import Judge, JudgeOptions, build_judge
from ..answers.report import ANSWER_LEVEL, AnsweredQuestion, AnswerReport, ContextUsed
from ..answers.session import AnswerSession, AnswerSettings
from .chat_server import JUDGE_REPLY, TEST_API_KEY, ChatServer, Reply
from .demo import demo_nuggets
from .generator_conformance import conformance_dataset

# the built-in judges' verdict, with one verdict for each of the three nuggets of the suite's questions
CONFORMANCE_REPLY = json.dumps({**json.loads(JUDGE_REPLY), "verdicts": ["support", "partial_support", "not_support"]})


def conformance_nuggets(path):
    """The suite's nuggets file, written to `path`: `demo.demo_nuggets`."""
    return demo_nuggets(path)


def sample(n: int = 0, truth: str | None = "Five minutes.",
           contexts: tuple[str, ...] = ("Cut the tomatoes. Boil them for five minutes.", "Simmer rice in milk."),
           error: str | None = None) -> AnsweredQuestion:
    """An answered question as a session leaves it; samples numbered apart differ in their question and answer, so
    none of their requests is in the answer cache for another."""
    question = "How long do the tomatoes boil?" + (f" (sample {n})" if n else "")
    return AnsweredQuestion(id=f"q-soup-{n}", text=question, ground_truth=truth, error=error,
                            answer=f"Boil them for {n + 5} minutes [0].",
                            contexts=[ContextUsed(doc_id=f"doc-{i}", text=t) for i, t in enumerate(contexts)])


class JudgeConformance:
    @pytest.fixture
    def judge_name(self) -> str:
        raise NotImplementedError("a conformance test class must give the `judge_name` fixture")

    @pytest.fixture
    def uses_llm(self) -> bool:
        return True

    @pytest.fixture
    def good_reply(self) -> str:
        return CONFORMANCE_REPLY

    @pytest.fixture
    def malformed_reply(self) -> str:
        return "I think the answer is fine, more or less."

    @pytest.fixture
    def off_scale_reply(self) -> str:
        return json.dumps({"rating": "maybe", "rationale": "unsure", "score": 9, "reasoning": "very good"})

    @pytest.fixture
    def server(self, good_reply):
        state = {"reply": good_reply}
        with ChatServer(lambda request: Reply(state["reply"])) as server:
            server.state = state
            yield server

    @pytest.fixture
    def options(self, server, tmp_path, monkeypatch) -> JudgeOptions:
        monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))  # an empty answer cache per test
        monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
        return JudgeOptions(model="judge-model", base_url=server.url, language="en", max_retries=0,
                            nuggets=conformance_nuggets(tmp_path / "nuggets.jsonl"))

    @pytest.fixture
    def judge(self, judge_name, options) -> Judge:
        return build_judge(judge_name, options)

    def test_follows_the_protocol(self, judge, judge_name):
        assert isinstance(judge, Judge) and judge.name == judge_name
        assert isinstance(judge.metric, str) and judge.metric
        text = json.dumps(judge.settings(), ensure_ascii=False)
        assert os.environ["OPENAI_API_KEY"] not in text

    def test_judges_a_full_sample_and_records_it(self, judge, uses_llm):
        answered = sample()
        result = judge.judge(answered)
        assert result.value is not None and math.isfinite(result.value), result
        assert result.failure is None and result.skipped is None
        json.dumps(result.stored())
        if uses_llm:
            assert result.requests >= 1 and result.input_tokens > 0 and result.output_tokens > 0
        judge.score(None, answered)
        assert answered.metrics[ANSWER_LEVEL][judge.metric] == result.value
        assert answered.judges[judge.name]["value"] == result.value

    def test_asks_nothing_twice(self, judge, server, uses_llm):
        if not uses_llm:
            pytest.skip("the judge asks no model")
        first = judge.judge(sample())
        asked = server.count()
        again = judge.judge(sample())
        assert server.count() == asked and again.value == first.value and again.cached

    @pytest.mark.parametrize("bad", ["malformed_reply", "off_scale_reply"])
    def test_a_bad_reply_gets_one_repair_then_fails(self, judge, server, uses_llm, bad, request):
        if not uses_llm:
            pytest.skip("the judge asks no model")
        judge.judge(sample(1))
        per_sample = server.count()
        server.state["reply"] = request.getfixturevalue(bad)
        result = judge.judge(sample(2))
        assert server.count() == 3 * per_sample  # each request, then its one repair request
        assert result.value is None and result.failure and "repair" in result.failure
        answered = sample(2)
        judge.score(None, answered)
        assert judge.metric not in answered.metrics.get(ANSWER_LEVEL, {})  # a failure is never a 0 or a 1

    def test_what_it_cannot_judge_is_skipped_without_asking(self, judge, server):
        for partial in (sample(truth=None), sample(contexts=())):
            before = server.count()
            result = judge.judge(partial)
            assert result.failure is None
            if result.skipped is not None:
                assert result.value is None and server.count() == before

    def test_a_question_without_an_answer_is_not_judged(self, judge, server):
        failed = sample(error="the generator failed")
        judge.score(None, failed)
        assert judge.name not in failed.judges and server.count() == 0

    def test_is_safe_to_call_from_threads(self, judge):
        samples = [sample(n) for n in range(8)]
        alone = [judge.judge(s).value for s in samples]
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(lambda s: judge.judge(s).value, samples))
        assert together == alone

    def test_a_session_runs_it_end_to_end(self, judge, tmp_path):
        dataset = conformance_dataset(tmp_path / "dataset")
        session = AnswerSession(dataset, AnswerSettings(generator="extractive", contexts="given"))
        session.scorers.append(judge)
        assert judge.name in session.config.scorers
        report = run_answers(session, threads=2, journal_path=tmp_path / "journal.jsonl")
        summary = report.judges[judge.name]
        assert summary.judged + summary.skipped == len(dataset.questions) and summary.failed == 0
        assert summary.judged > 0 and report.counts[ANSWER_LEVEL]
        assert AnswerReport.model_validate_json(report.model_dump_json()) == report
