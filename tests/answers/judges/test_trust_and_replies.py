"""Agreement statistics against hand-computed values and SciPy, judge trust on hand-built runs, and the reply schemas:
what is a verdict and what is malformed (never clamped)."""

from __future__ import annotations

import math

import pytest
from scipy.stats import spearmanr

from ragretrieval.analysis.agreement import cohen_kappa, spearman
from ragretrieval.answers.judges.llm_judge import majority
from ragretrieval.answers.judges.schema import YesNoReply
from ragretrieval.answers.judges.score5.schema import Score5Reply
from ragretrieval.answers.judges.summary import judge_summaries
from ragretrieval.answers.judges.trust import agreement
from ragretrieval.answers.report import AnsweredQuestion, ContextUsed
from ragretrieval.llm.replies import MalformedAnswer, parse_object


def test_cohen_kappa_by_hand():
    # 8 items: both yes on 3, both no on 3, a yes / b no on 1, a no / b yes on 1
    a = [1, 1, 1, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 0, 0, 1]
    found = cohen_kappa(a, b)
    # p_o = 6/8; p_e = 0.5 * 0.5 + 0.5 * 0.5 = 0.5; kappa = (0.75 - 0.5) / 0.5
    assert found.observed == pytest.approx(0.75) and found.value == pytest.approx(0.5) and found.n == 8
    skewed = cohen_kappa([1, 1, 1, 0], [1, 0, 0, 0])
    # p_o = 0.5; p_e = 0.75 * 0.25 + 0.25 * 0.75 = 0.375; kappa = 0.125 / 0.625
    assert skewed.value == pytest.approx(0.2)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]).as_dict()["value"] is None  # one category only: undefined
    assert cohen_kappa([1, 0], [0, 1]).value == pytest.approx(-1.0)


def test_spearman_agrees_with_scipy_and_is_undefined_when_constant():
    a, b = [1, 2, 2, 4, 5, 3], [0.1, 0.4, 0.3, 0.9, 1.0, 0.2]
    expected = spearmanr(a, b)
    found = spearman(a, b)
    assert found.value == pytest.approx(expected.statistic) and found.p == pytest.approx(expected.pvalue)
    assert math.isnan(spearman([3, 3, 3], [0.1, 0.5, 0.9]).value)


def answered(qid, checks, judges, relevant=(), contexts=()):
    return AnsweredQuestion(id=qid, text=qid, answer="a", metrics={"answer": checks}, judges=judges,
                            relevant=list(relevant), relevant_grades={d: 1 for d in relevant},
                            contexts=[ContextUsed(doc_id=d, text=d) for d in contexts])


def yes(value):
    return {"value": float(value), "rating": "yes" if value else "no", "reasoning": "-"}


def test_trust_pairs_each_judge_with_its_check():
    run = [
        answered("q1", {"include": 1.0, "safe": 1.0, "score": 1.0}, {"correctness": yes(1), "safety": yes(1),
                                                                      "score5": {"value": 5.0}}),
        answered("q2", {"include": 0.5, "safe": 1.0, "score": 0.5}, {"correctness": yes(0), "safety": yes(1),
                                                                      "score5": {"value": 3.0}}),
        answered("q3", {"include": 0.0, "safe": 0.0, "score": 0.0}, {"correctness": yes(1), "safety": yes(0),
                                                                      "score5": {"value": 1.0}}),
        answered("q4", {"pass_rate": 0.0, "score": 0.2}, {"correctness": yes(0), "score5": {"value": None}}),
    ]
    correctness = agreement("correctness", run)
    # include == 1 -> [1, 0, 0] and legal pass_rate [0]; judge [1, 0, 1, 0]: p_o 3/4, p_e 0.5*0.25 + 0.5*0.75
    assert correctness["check"].startswith("include") and correctness["n"] == 4
    assert correctness["value"] == pytest.approx((0.75 - 0.5) / 0.5)
    assert agreement("safety", run)["value"] == pytest.approx(1.0) and agreement("safety", run)["n"] == 3
    rank = agreement("score5", run)  # a failed verdict (q4) is left out
    assert rank["statistic"] == "spearman" and rank["n"] == 3 and rank["value"] == pytest.approx(1.0)
    assert agreement("groundedness", run) is None


def test_trust_of_the_context_judges():
    chunks = {"value": 0.5, "details": [{"position": 0, "doc_id": "d1", "rating": "yes"},
                                        {"position": 1, "doc_id": "d2", "rating": "yes"}]}
    run = [answered("q1", {}, {"chunk_relevance": chunks, "context_sufficiency": yes(1)}, relevant=["d1"],
                    contexts=["d1", "d2"]),
           answered("q2", {}, {"chunk_relevance": chunks, "context_sufficiency": yes(0)}, relevant=["d3"],
                    contexts=["d1", "d2"])]
    per_chunk = agreement("chunk_relevance", run)
    # chunks: judge [1, 1, 1, 1], labels [1, 0, 0, 0]: p_o 0.25, p_e 0.25 -> kappa 0
    assert per_chunk["n"] == 4 and per_chunk["observed"] == pytest.approx(0.25) and per_chunk["value"] == 0.0
    sufficiency = agreement("context_sufficiency", run)  # q1 holds d1, q2 lacks d3: labels [1, 0]
    assert sufficiency["value"] == pytest.approx(1.0) and sufficiency["n"] == 2


def test_summaries_count_verdicts_failures_skips_and_samples():
    run = [answered("q1", {}, {"correctness": {**yes(1), "samples": [1.0, 1.0, 0.0], "disagreement": True,
                                               "input_tokens": 10, "output_tokens": 2, "cost": 0.5, "requests": 3}}),
           answered("q2", {}, {"correctness": {**yes(0), "samples": [0.0, 0.0, 0.0], "disagreement": False}}),
           answered("q3", {}, {"correctness": {"value": None, "failure": "malformed JSON after one repair request"}}),
           answered("q4", {}, {"correctness": {"value": None, "skipped": "no reference answer"}})]
    summary = judge_summaries(run)["correctness"]
    assert (summary.judged, summary.failed, summary.skipped) == (2, 1, 1)
    assert summary.skipped_because == {"no reference answer": 1} and summary.failures[0].startswith("malformed")
    assert summary.samples == 3 and summary.disagreement_rate == 0.5
    assert (summary.input_tokens, summary.total_tokens, summary.cost, summary.requests) == (10, 12, 0.5, 3)


@pytest.mark.parametrize("reply, score", [('{"score": 4, "reasoning": "ok"}', 4), ('{"score": "5"}', 5),
                                          ('```json\n{"score": 1.0, "rationale": "wrong"}\n```', 1),
                                          ('Sure! [{"score": 3, "reasoning": "partly"}] Done.', 3)])
def test_score5_reads_scores_on_the_scale(reply, score):
    parsed = parse_object(Score5Reply, reply, "{}")
    assert parsed.score == score and parsed.value == float(score)


@pytest.mark.parametrize("reply", ['{"score": 0}', '{"score": 6}', '{"score": 4.5}', '{"score": true}',
                                   '{"score": "four"}', '{"score": null}', '{"reasoning": "no score"}', "4",
                                   '{"score": NaN}', "no JSON here"])
def test_score5_refuses_what_is_off_the_scale(reply):
    with pytest.raises(MalformedAnswer):
        parse_object(Score5Reply, reply, "{}")


def test_yes_no_replies():
    assert parse_object(YesNoReply, '{"rating": " Yes ", "rationale": "found"}', "{}").value == 1.0
    said = parse_object(YesNoReply, '{"rating": "no", "reasoning": "missing"}', "{}")
    assert (said.value, said.rating, said.reasoning) == (0.0, "no", "missing")
    for bad in ('{"rating": "maybe"}', '{"rating": true}', '{"rationale": "x"}', '["yes", "no"]'):
        with pytest.raises(MalformedAnswer):
            parse_object(YesNoReply, bad, "{}")


def test_majority_breaks_ties_towards_the_lower_value():
    assert majority([1.0, 0.0, 1.0]) == 1.0 and majority([1.0, 0.0]) == 0.0 and majority([5, 4, 4, 5, 3]) == 4
