"""The contracts of the legal checks that the formula tests leave open: a question spec's exact error messages (each
field's type, entries of required_evidence, unknown fields), the registered check end to end (citations read with the
run's citation pattern, the question's own numbers, pass_rate at the 0.7 mark exactly), OCR markup left out of
folded text, a cite past the context's end, and a 零 before a 十 (一千零十 is 1010)."""

from __future__ import annotations

import pytest

from ragretrieval.answers.checks import CHECKS, AnswerSample, CheckError, CheckSettings, run_checks
from ragretrieval.answers.checks.legal import _legal_check, contains, folded, legal_question
from ragretrieval.answers.values import has_number, numbers_in

FIELDS = "expected, required_evidence, scoring, should_abstain, required_quote, additional_quotes"


def raised(kind: str, value) -> str:
    with pytest.raises(CheckError) as error:
        legal_question(kind, value)
    return str(error.value)


def test_a_spec_that_is_not_an_object_or_has_an_unknown_field():
    assert raised("fact_exact", ["expected"]) == f"fact_exact: expected an object with {FIELDS}"
    assert raised("evidence_set", {"scoring": {}, "zeta": 1, "alpha": 2}) == \
        f"evidence_set: unknown field 'alpha' (known: {FIELDS})"


@pytest.mark.parametrize("name, wrong, problem", [
    ("expected", ["amount_total"], 'must be an object, got ["amount_total"]'),
    ("required_evidence", {"must_include": "押金"}, 'must be a list, got {"must_include": "押金"}'),
    ("scoring", ["citation_required"], 'must be an object, got ["citation_required"]'),
    ("should_abstain", "yes", 'must be true or false, got "yes"'),
    ("required_quote", 5, "must be text, got 5"),
    ("additional_quotes", "一句话", 'must be a list, got "一句话"'),
])
def test_each_field_of_the_wrong_type_is_named(name, wrong, problem):
    assert raised("conflict_gap", {name: wrong}) == f"conflict_gap: {name}: {problem}"


def test_required_evidence_entries_must_be_objects():
    message = 'fact_exact: required_evidence[1]: must be an object, got "押金"'
    assert raised("fact_exact", {"expected": {"count": 1},
                                 "required_evidence": [{"must_include": "押金"}, "押金"]}) == message
    question = legal_question("fact_exact", {"expected": {"count": 1},
                                             "required_evidence": [{"must_include": "押金", "is_critical": True}],
                                             "should_abstain": False, "required_quote": None})
    assert question.must_include() == ["押金"] and question.required_quote is None


# LEGAL_CHECKS is built when the module is imported; each test builds its check again so that what it exercises is
# the factory itself (a mutation tool switches a mutant on only after the import).
IDS = ("lease.md", "deposit.md")
TEXTS = ("合同约定租金每月5000元。", "张华于2020年借给李明一万元，双方约定合计42000元整。")
FACT = {"expected": {"amount_total": 42000},
        "required_evidence": [{"must_include": "合计42000元", "is_critical": True}],
        "scoring": {"citation_required": True}}


def run(kind: str, answer: str, value: dict, settings: CheckSettings | None = None, question: str = ""):
    check = _legal_check(kind)
    sample = AnswerSample("q1", answer, IDS, TEXTS, question=question)
    return check(sample, value, settings or CheckSettings())


def test_the_check_is_named_and_documented_after_its_type():
    for kind in ("fact_exact", "evidence_set", "conflict_gap"):
        check = _legal_check(kind)
        assert check.__name__ == f"check_{kind}" and CHECKS[kind].__name__ == f"check_{kind}"
        assert check.__doc__ == f"The legal benchmark's {kind} score and its parts, and pass_rate (1 when the score " \
                                ">= 0.7)."


def test_fact_exact_reads_citations_with_the_runs_pattern():
    braces = CheckSettings(citation_pattern=r"\{doc:(\d+)\}")
    # 4.2万 is 42000 (exact 1); {doc:1} cites the context holding the critical string (citation 1)
    assert run("fact_exact", "一共4.2万元 {doc:1}", FACT, braces) == {
        "fact_exact": pytest.approx(1.0), "exact_match": 1.0, "citation_correctness": 1.0, "pass_rate": 1.0}
    # with this pattern [1] is not a citation: 0.7 x 1 + 0.3 x 0 = 0.7, which passes (the mark is >= 0.7)
    assert run("fact_exact", "一共4.2万元 [1]", FACT, braces) == {
        "fact_exact": pytest.approx(0.7), "exact_match": 1.0, "citation_correctness": 0.0, "pass_rate": 1.0}
    # the default syntax reads a document id in brackets as its position
    assert run("fact_exact", "合计42000元 [deposit.md]", FACT)["citation_correctness"] == 1.0
    assert run("fact_exact", "合计42000元 [lease.md]", FACT)["citation_correctness"] == 0.0


def test_evidence_set_scores_the_cited_contexts():
    value = {"required_evidence": [{"must_include": "借给李明一万元", "is_critical": True}]}
    assert run("evidence_set", "见[1]。", value) == {
        "evidence_set": pytest.approx(1.0), "evidence_recall": 1.0, "evidence_precision": 1.0, "cites": 1.0,
        "pass_rate": 1.0}
    # the wrong context cited: 0.5 x 0 + 0.3 x 0 + 0.2 x 1
    assert run("evidence_set", "见[0]。", value) == {
        "evidence_set": pytest.approx(0.2), "evidence_recall": 0.0, "evidence_precision": 0.0, "cites": 1.0,
        "pass_rate": 0.0}


def test_conflict_gap_takes_numbers_from_the_question_and_the_contexts():
    value = {"should_abstain": True, "required_quote": "借给李明一万元"}
    question = "8月30日之后他又借了多少？"
    # 8 and 30 are the question's, 2020 and 一万 the context's, [1] a marker: nothing invented
    answer = "8月30日之后的借款，材料中没有提及；只知道“张华于2020年借给李明一万元” [1]。"
    assert run("conflict_gap", answer, value, question=question) == {
        "conflict_gap": pytest.approx(1.0), "abstention": 1.0, "no_invention": 1.0, "quote": 1.0, "pass_rate": 1.0}
    assert run("conflict_gap", answer, value, question="之后他又借了多少？")["no_invention"] == 0.0
    assert run("conflict_gap", "他又借了6000元。", value, question=question) == {
        "conflict_gap": pytest.approx(0.0), "abstention": 0.0, "no_invention": 0.0, "quote": 0.0, "pass_rate": 0.0}


def test_folded_text_leaves_out_latex_commands_and_html_tags():
    assert folded("张<b>华</b> 付了 \\textbf{42,000} 元。") == "张华付了42000元"
    assert contains("收款人：张<b>华</b>", "张华") and not contains("收款人：张<b>明</b>", "张华")


def test_a_cite_past_the_last_context_is_a_wrong_citation():
    sample = AnswerSample("q", "见 [0][3]。", ("d1", "d2", "d3"))
    # cited: d1 and "(position 3)"; precision 1/2, recall 1/1, F1 2 x 0.5 x 1 / 1.5
    assert run_checks(sample, {"cite": ["d1"]}, CheckSettings()) == {
        "cite_f1": pytest.approx(2 / 3), "cite_precision": 0.5, "cite_recall": 1.0}


@pytest.mark.parametrize("text", ["一千零十元", "一千〇十元"])
def test_a_zero_before_ten_is_a_gap_and_ten_is_one_ten(text):
    assert numbers_in(text) == {1010.0}  # 一千 + 零 (a gap) + 十 (一十)
    assert has_number(text, 1010) and not has_number(text, 1000)
