"""The legal benchmark's formulas on hand-computed cases: every expected field type, citations, evidence sets,
abstention, invented details and quotes; numbers and dates in the forms people write them."""

from __future__ import annotations

import pytest

from ragretrieval.answers.checks.legal import (
    LegalQuestion,
    LegalSample,
    score_legal,
)
from ragretrieval.answers.values import dates_in, numbers_in

from .run_means import run_means

CONTEXTS = (
    "问：你一共给了他多少钱？答：一共给了42000元，是2020年8月1日转账的。",
    "问：他什么时候说办不成？答：2020年8月30日左右他说办不了，承诺把钱退回来。",
    "问：钱花到哪里去了？答：具体请了谁吃饭，都忘记了。",
)
EVIDENCE = [{"page": 2, "must_include": "42000元", "is_critical": True},
            {"page": 3, "must_include": "承诺把钱退回来", "is_critical": True},
            {"page": 3, "must_include": "办不了", "is_critical": False}]


@pytest.mark.parametrize("text, values", [
    ("共42000元", {42000}), ("42,000元", {42000}), ("4.2万元", {42000}), ("四万二千元", {42000}),
    ("两千零五十", {2050}), ("4万2千", {42000}), ("一亿二千万", {120_000_000}), ("３２００", {3200}),
    ("没有数字", set()),
])
def test_numbers_in_usual_written_forms(text, values):
    assert numbers_in(text) == values


def test_dates_in_usual_written_forms():
    assert dates_in("2020年8月30日、2020-08-01 和 2020/9/3") == {"2020-08-30", "2020-08-01", "2020-09-03"}
    assert dates_in("2020年13月1日") == set()


def fact(expected, citation_required=True):
    return LegalQuestion(type="fact_exact", expected=expected, required_evidence=EVIDENCE,
                         scoring={"citation_required": citation_required})


def answer(text, cited=()):
    return LegalSample(question="一共给了多少钱？", answer=text, contexts=CONTEXTS, cited=frozenset(cited))


def test_fact_exact_every_field_type():
    expected = {"amount_total": 42000, "amount_breakdown": [{"item": "学费", "amount": 30000}, 12000],
                "date": "2020-08-01", "date_range": {"start": "2020-08-01", "end": "2020-08-30"}, "count": 2,
                "boolean_answer": True, "text_answer": "承诺退款", "entity": "陈明飞"}
    text = "是的，陈明飞收了四万二千元（学费3万，其余1.2万），分2次，2020年8月1日至2020-08-30之间，他承诺退款 [0]。"
    values = score_legal(fact(expected), answer(text, cited=[0]))
    assert values == {"fact_exact": pytest.approx(1.0), "exact_match": 1.0, "citation_correctness": 1.0}
    text = "陈明飞收了42000元，但我不确定日期 [2]。"  # total and entity found: 2 of 9 fields; [2] holds no critical text
    values = score_legal(fact(expected), answer(text, cited=[2]))
    assert values["exact_match"] == pytest.approx(2 / 9) and values["citation_correctness"] == 0.0
    assert values["fact_exact"] == pytest.approx(0.7 * 2 / 9)


def test_fact_exact_citation_rules():
    assert score_legal(fact({"amount_total": 42000}), answer("42000元"))["fact_exact"] == pytest.approx(0.7)
    assert score_legal(fact({"amount_total": 42000}, citation_required=False),
                       answer("42000元"))["fact_exact"] == pytest.approx(1.0)
    assert score_legal(fact({"boolean_answer": False}, False), answer("不是，没有退款。"))["exact_match"] == 1.0
    assert score_legal(fact({"boolean_answer": True}, False), answer("不是。"))["exact_match"] == 0.0


def evidence(recall_min=0.8, precision_min=0.7):
    return LegalQuestion(type="evidence_set", required_evidence=EVIDENCE,
                         scoring={"evidence_recall_min": recall_min, "evidence_precision_min": precision_min})


def test_evidence_set_recall_precision_and_citing():
    # both critical strings: "42000元" in context 0, "承诺把钱退回来" in context 1; both cited contexts hold evidence
    assert score_legal(evidence(), answer("见 [0][1]", cited=[0, 1])) == {
        "evidence_set": pytest.approx(1.0), "evidence_recall": 1.0, "evidence_precision": 1.0, "cites": 1.0}
    # one critical string in the answer itself, context 2 holds none: recall 1/2, precision 0/1
    values = score_legal(evidence(), answer("他给了42000元 [2]", cited=[2]))
    assert (values["evidence_recall"], values["evidence_precision"]) == (0.5, 0.0)
    assert values["evidence_set"] == pytest.approx(0.2)
    values = score_legal(evidence(recall_min=0.5, precision_min=0.5), answer("见 [0][2]", cited=[0, 2]))
    assert values["evidence_set"] == pytest.approx(0.5 + 0.3 + 0.2)
    assert score_legal(evidence(), answer("42000元，承诺把钱退回来"))["evidence_set"] == pytest.approx(0.5)


def gap(should_abstain=True):
    return LegalQuestion(type="conflict_gap", should_abstain=should_abstain,
                         required_quote="具体请了谁吃饭...都忘记了", additional_quotes=["记不清了"])


def test_conflict_gap_abstention_invention_and_quotes():
    good = "材料中没有说明钱的具体去向，当事人说“具体请了谁吃饭，都忘记了”。"
    assert score_legal(gap(), answer(good)) == {"conflict_gap": pytest.approx(1.0), "abstention": 1.0,
                                                "no_invention": 1.0, "quote": 1.0}
    invented = "其中15000元用于请客吃饭，27000元交给了学校。"  # numbers no context holds, no abstention, no quote
    assert score_legal(gap(), answer(invented)) == {"conflict_gap": 0.0, "abstention": 0.0, "no_invention": 0.0,
                                                    "quote": 0.0}
    from_context = "他一共给了42000元，2020年8月30日说办不了。"  # values from the contexts are not invented
    assert score_legal(gap(should_abstain=False), answer(from_context))["conflict_gap"] == pytest.approx(0.8)


def test_summary_per_type_and_pass_rate():
    """Through the run means every report uses: each question as its check leaves it (its type's score and
    pass_rate, score >= 0.7)."""
    per_question = [{"fact_exact": 1.0, "pass_rate": 1.0}, {"fact_exact": 0.3, "pass_rate": 0.0},
                    {"conflict_gap": 0.8, "pass_rate": 1.0}]
    means = run_means(per_question)
    assert {name: means[name] for name in ("fact_exact", "pass_rate_fact_exact", "conflict_gap",
                                           "pass_rate_conflict_gap", "pass_rate")} == {
        "fact_exact": pytest.approx(0.65), "pass_rate_fact_exact": 0.5, "conflict_gap": 0.8,
        "pass_rate_conflict_gap": 1.0, "pass_rate": pytest.approx(2 / 3)}
    assert means["checks_score"] == pytest.approx((1.0 + 0.3 + 0.8) / 3)  # each question's score is its type's


def test_citation_markers_are_not_values():
    assert score_legal(fact({"count": 2}, False), answer("见 [2]", cited=[2]))["exact_match"] == 0.0
    assert score_legal(gap(), answer("材料中没有说明 [0][1, 2]"))["no_invention"] == 1.0
