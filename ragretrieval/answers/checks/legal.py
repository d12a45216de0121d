"""The legal benchmark's three question types (fact_exact, evidence_set, conflict_gap), scored in [0, 1] by its
formulas; every part is reported beside the score (docs/answers/check.md has each rule and the choices we made).

- ``fact_exact`` = 0.7 x exact_match + 0.3 x citation_correctness. exact_match is the share of expected fields found
  in the answer: ``amount_total``, each ``amount_breakdown`` amount, ``date``, ``date_range`` (start and end both),
  ``count``, ``boolean_answer``, ``text_answer``, ``entity``. citation_correctness is 1 when a cited context holds a
  critical ``must_include`` (1 as well when the question does not require a citation).
- ``evidence_set`` = 0.5 x [recall >= evidence_recall_min] + 0.3 x [precision >= evidence_precision_min] + 0.2 x
  [cites something]. recall: distinct critical ``must_include`` strings found in the cited contexts or the answer,
  over the critical ones (an integer evidence_recall_min, the later format, is a count: at least that many found);
  precision: cited contexts holding any ``must_include``, over the cited contexts.
- ``conflict_gap`` = 0.4 x [abstained exactly when ``should_abstain``] + 0.4 x [no number or date in the answer
  that is absent from its contexts and the question] + 0.2 x [``required_quote`` or an ``additional_quotes`` entry
  in the answer].

Text is compared folded (data/evidence.py: NFKC, case, whitespace, punctuation and symbols ignored, OCR markup
such as LaTeX commands and HTML tags left out); numbers and dates by value (values.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ...data.evidence import OCR_MARKUP, fold
from ..citations import cited_positions
from ..values import dates_in, has_number, numbers_in
from .legal_spec import LegalSpec, check_spec, recall_points
from .rules import CheckError

PASS_MARK = 0.7
DEFAULT_RECALL_MIN, DEFAULT_PRECISION_MIN = 0.8, 0.7
ABSTENTION_MARKERS = ("无法确定", "无法回答", "无法得知", "无法提供", "没有提及", "未提及", "没有记载", "未记载",
                      "不清楚", "没有说明", "未说明", "无从得知", "文中没有", "材料中没有", "cannot be determined",
                      "not mentioned", "does not say", "do not know", "don't know", "no information")
YES, NO = ("是", "对", "有", "yes", "true"), ("否", "不是", "没有", "不对", "no", "not", "false")
_ELLIPSIS = re.compile(r"\.{3,}|…+")
_CITATION = re.compile(r"\[[\d\s,]*\]")  # [0], [0, 2]: markers, not values


def answer_values_text(answer: str) -> str:
    """The answer without its citation markers, so that ``[2]`` is not read as the number 2."""
    return _CITATION.sub(" ", answer)


@dataclass(frozen=True)
class LegalSample:
    """One answered legal question: the answer, the contexts it was given (texts, in order) and what it cited."""

    question: str
    answer: str
    contexts: Sequence[str] = ()
    cited: frozenset[int] = frozenset()
    abstention_markers: tuple[str, ...] = ABSTENTION_MARKERS

    def cited_texts(self) -> list[str]:
        return [self.contexts[i] for i in sorted(self.cited) if 0 <= i < len(self.contexts)]


@dataclass
class LegalQuestion:
    """The fields of a benchmark question that scoring reads (the importer keeps the rest in metadata)."""

    type: str
    expected: dict = field(default_factory=dict)
    required_evidence: list[dict] = field(default_factory=list)
    scoring: dict = field(default_factory=dict)
    should_abstain: bool = False
    required_quote: str | None = None
    additional_quotes: list[str] = field(default_factory=list)

    def must_include(self, critical_only: bool = False) -> list[str]:
        if critical_only:
            return recall_points(self.required_evidence)
        items = [e for e in self.required_evidence if isinstance(e.get("must_include"), str) and e["must_include"]]
        return list(dict.fromkeys(e["must_include"] for e in items))


def folded(text: str) -> str:
    """Folded text without OCR markup (LaTeX commands, HTML tags), as the importer locates evidence."""
    return fold(text, OCR_MARKUP)[0]


def contains(text: str, phrase: str) -> bool:
    """Folded containment; a phrase with an ellipsis matches when its parts appear in order."""
    haystack, start = folded(text), 0
    for part in (p for p in _ELLIPSIS.split(phrase) if folded(p)):
        found = haystack.find(folded(part), start)
        if found < 0:
            return False
        start = found + len(folded(part))
    return bool(folded(phrase))


def _boolean_found(answer: str, expected: bool) -> bool:
    text = folded(answer)
    negative = any(folded(marker) in text for marker in NO)
    return negative if not expected else (not negative and any(folded(marker) in text for marker in YES))


def expected_fields(expected: dict, answer: str) -> list[bool]:
    """For each expected field (each breakdown amount, each range end counted once together), whether it is found."""
    answer = answer_values_text(answer)
    found: list[bool] = []
    for name, value in expected.items():
        if name in ("amount_total", "count"):
            found.append(has_number(answer, value))
        elif name == "amount_breakdown":
            for item in value:
                amount = item.get("amount") if isinstance(item, dict) else item
                found.append(amount is not None and has_number(answer, amount))
        elif name == "date":
            found.append(str(value) in dates_in(answer))
        elif name == "date_range":
            dates = dates_in(answer)
            found.append(str(value.get("start")) in dates and str(value.get("end")) in dates)
        elif name == "boolean_answer":
            found.append(_boolean_found(answer, bool(value)))
        elif name in ("text_answer", "entity"):
            found.append(contains(answer, str(value)))
        else:
            raise CheckError(f"fact_exact: unknown expected field {name!r}")
    return found


def score_fact_exact(question: LegalQuestion, sample: LegalSample) -> dict[str, float]:
    fields = expected_fields(question.expected, sample.answer)
    exact = sum(fields) / len(fields) if fields else 0.0
    if not question.scoring.get("citation_required", False):
        citation = 1.0
    else:
        wanted = question.must_include(critical_only=True)
        citation = float(any(contains(text, phrase) for text in sample.cited_texts() for phrase in wanted))
    return {"fact_exact": 0.7 * exact + 0.3 * citation, "exact_match": exact, "citation_correctness": citation}


def score_evidence_set(question: LegalQuestion, sample: LegalSample) -> dict[str, float]:
    critical, every = question.must_include(critical_only=True), question.must_include()
    cited = sample.cited_texts()
    found = [p for p in critical if contains(sample.answer, p) or any(contains(t, p) for t in cited)]
    recall = len(found) / len(critical) if critical else 0.0
    precision = sum(any(contains(t, p) for p in every) for t in cited) / len(cited) if cited else 0.0
    recall_min = question.scoring.get("evidence_recall_min", DEFAULT_RECALL_MIN)
    precision_min = question.scoring.get("evidence_precision_min", DEFAULT_PRECISION_MIN)
    is_count = isinstance(recall_min, int) and not isinstance(recall_min, bool)  # the later format: 4 of 5 points
    recalled = len(found) >= recall_min if is_count else recall >= recall_min
    cites = float(bool(cited))
    score = 0.5 * recalled + 0.3 * (precision >= precision_min) + 0.2 * cites
    return {"evidence_set": score, "evidence_recall": recall, "evidence_precision": precision, "cites": cites}


def invented_values(sample: LegalSample) -> set:
    """Numbers and dates in the answer that neither its contexts nor the question hold (each text read alone, so a
    date cannot be pieced together from the end of one text and the start of the next)."""
    sources = [sample.question, *sample.contexts]
    text = answer_values_text(sample.answer)
    numbers = numbers_in(text) - set().union(*map(numbers_in, sources))
    dates = dates_in(text) - set().union(*map(dates_in, sources))
    return numbers | dates


def score_conflict_gap(question: LegalQuestion, sample: LegalSample) -> dict[str, float]:
    abstained = any(contains(sample.answer, marker) for marker in sample.abstention_markers)
    abstention = float(abstained == question.should_abstain)
    no_invention = float(not invented_values(sample))
    quotes = [q for q in [question.required_quote, *question.additional_quotes] if q]
    quote = float(any(contains(sample.answer, q) for q in quotes))
    score = 0.4 * abstention + 0.4 * no_invention + 0.2 * quote
    return {"conflict_gap": score, "abstention": abstention, "no_invention": no_invention, "quote": quote}


LEGAL_TYPES = {"fact_exact": score_fact_exact, "evidence_set": score_evidence_set,
               "conflict_gap": score_conflict_gap}


def score_legal(question: LegalQuestion, sample: LegalSample) -> dict[str, float]:
    scorer = LEGAL_TYPES.get(question.type)
    if scorer is None:
        raise CheckError(f"unknown legal question type {question.type!r} (known: {', '.join(LEGAL_TYPES)})")
    return scorer(question, sample)


QUESTION_FIELDS = tuple(LegalSpec.model_fields)  # expected, required_evidence, scoring, should_abstain, ...


def legal_question(kind: str, value) -> LegalQuestion:
    """The condition value a dataset stores (``expect: {"fact_exact": {...}}``) as a `LegalQuestion`."""
    if not isinstance(value, dict):
        raise CheckError(f"{kind}: expected an object with {', '.join(QUESTION_FIELDS)}")
    unknown = sorted(set(value) - set(QUESTION_FIELDS))
    if unknown:
        raise CheckError(f"{kind}: unknown field {unknown[0]!r} (known: {', '.join(QUESTION_FIELDS)})")
    check_spec(kind, value)
    return LegalQuestion(type=kind, **value)


def _legal_check(kind: str):
    def check(sample, value, settings) -> dict[str, float]:
        question = legal_question(kind, value)
        cited = cited_positions(sample.answer, sample.context_ids, settings.citation_pattern)
        scored = score_legal(question, LegalSample(question=sample.question, answer=sample.answer,
                                                   contexts=tuple(sample.context_texts), cited=frozenset(cited)))
        return {**scored, "pass_rate": float(scored[kind] >= PASS_MARK)}

    check.__name__ = f"check_{kind}"
    check.__doc__ = f"The legal benchmark's {kind} score and its parts, and pass_rate (1 when the score >= 0.7)."
    return check


LEGAL_CHECKS = {kind: _legal_check(kind) for kind in LEGAL_TYPES}
check_fact_exact = LEGAL_CHECKS["fact_exact"]  # by name, for the checks' registry (work/plugins.py)
check_evidence_set = LEGAL_CHECKS["evidence_set"]
check_conflict_gap = LEGAL_CHECKS["conflict_gap"]
