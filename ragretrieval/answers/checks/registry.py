"""Every deterministic check, registered once by the condition name a question's ``expect`` uses, and how their
values add up.

- `CHECKS`: RAG-IFEval's conditions (rules.py: include, exclude, cite, refuse, safe) and the legal benchmark's
  question types (legal.py: fact_exact, evidence_set, conflict_gap), each ``check(sample, value, settings)`` returning
  metric name -> value in [0, 1].
- `question_values`: one question's values plus its own aggregates: ``correctness`` (mean of its include, exclude
  and cite_f1), ``safety`` (refuse, safe), ``total`` (all of them), and ``score``, the mean of its own conditions (a
  legal question's type score counts as one condition), for paired comparisons.
- `aggregate`: run means. A metric's mean is over the questions that have it, except ``correctness``, ``safety`` and
  ``total``, which average all condition instances of the run as RAG-IFEval does (not the questions' own means).
"""

from __future__ import annotations

from .legal import LEGAL_CHECKS, LEGAL_TYPES, legal_question
from .rules import AGGREGATES, RULE_VALUES, RULES, AnswerSample, Check, CheckError, CheckSettings

CHECKS: dict[str, Check] = {**RULES, **LEGAL_CHECKS}
INSTANCE_AGGREGATES = tuple(AGGREGATES)  # averaged over condition instances, not questions
SCORED = AGGREGATES["total"] + tuple(LEGAL_TYPES)  # what a question's score averages


def check_expect(expect: dict, where: str) -> None:
    """Refuse unknown condition names and any condition value a check could not score (a RAG-IFEval include that
    is not a list, a legal amount that is not a number, a date that is not YYYY-MM-DD...) before any answer is
    produced, naming the question (`where`) and the field."""
    prefix = f"{where}: " if where else ""
    if not isinstance(expect, dict):
        raise CheckError(f"{prefix}'expect' must be an object of conditions")
    for condition, value in expect.items():
        if condition not in CHECKS:
            raise CheckError(f"{prefix}unknown condition {condition!r} in 'expect' (known: {', '.join(CHECKS)})")
        try:
            if condition in LEGAL_TYPES:
                legal_question(condition, value)
            else:
                RULE_VALUES[condition](value)
        except CheckError as error:
            raise CheckError(f"{prefix}{error}") from None


def run_checks(sample: AnswerSample, expect: dict, settings: CheckSettings) -> dict[str, float]:
    """Every condition of `expect` on `sample`: metric name -> value in [0, 1]."""
    values: dict[str, float] = {}
    for condition, value in expect.items():
        check = CHECKS.get(condition)
        if check is None:
            raise CheckError(f"unknown condition {condition!r} (known: {', '.join(CHECKS)})")
        values.update(check(sample, value, settings))
    return values


def question_score(values: dict[str, float]) -> float | None:
    """The mean of a question's own conditions (cite counts by its F1, a legal type by its score), or None."""
    own = [values[name] for name in SCORED if name in values]
    return sum(own) / len(own) if own else None


def question_values(values: dict[str, float]) -> dict[str, float]:
    """`values` with the question's own correctness, safety and total, and its score."""
    result = dict(values)
    for name, members in AGGREGATES.items():
        own = [values[m] for m in members if m in values]
        if own:
            result[name] = sum(own) / len(own)
    score = question_score(values)
    if score is not None:
        result["score"] = score
    return result


def instance_sums(values: dict[str, float]) -> dict[str, tuple[float, int]]:
    """For each instance aggregate, the sum of the question's condition values in it and how many there are."""
    sums = {}
    for name, members in AGGREGATES.items():
        own = [values[m] for m in members if m in values]
        if own:
            sums[name] = (sum(own), len(own))
    return sums


def aggregate(per_question: list[dict[str, float]]) -> dict[str, float]:
    """Means per metric over the questions that have it, and the aggregates over all condition instances."""
    means: dict[str, float] = {}
    names = dict.fromkeys(name for values in per_question for name in values)
    for name in names:
        found = [values[name] for values in per_question if name in values]
        means[name] = sum(found) / len(found)
    for aggregate_name in AGGREGATES:
        pairs = [s[aggregate_name] for values in per_question if aggregate_name in (s := instance_sums(values))]
        if pairs:
            means[aggregate_name] = sum(p[0] for p in pairs) / sum(p[1] for p in pairs)
    return means
