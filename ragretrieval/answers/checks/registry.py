"""Every deterministic check, registered once by the condition name a question's ``expect`` uses, and how their
values add up.

- `CHECKS`: RAG-IFEval's conditions (rules.py: include, exclude, cite, refuse, safe) and the legal benchmark's
  question types (legal.py: fact_exact, evidence_set, conflict_gap), each ``check(sample, value, settings)`` returning
  metric name -> value in [0, 1].
- `question_values`: one question's values plus its own aggregates: ``checks_correctness`` (mean of its include,
  exclude and cite_f1), ``checks_safety`` (refuse, safe), ``total`` (all of them), and ``checks_score``, the mean of
  its own conditions (a legal question's type score counts as one condition), for paired comparisons. The
  ``checks_`` prefix keeps them apart from the judges named ``correctness`` and ``safety`` and from score5's score
  (runs stored before had them as ``correctness``, ``safety`` and ``score``: scoring/answer_metrics.py,
  `current_names`, reads those).
- `instance_sums`: what run means of ``checks_correctness``, ``checks_safety`` and ``total`` add up: they average
  all condition instances of the run as RAG-IFEval does, not the questions' own means. The run means themselves,
  with their CIs, are answers/summary.py's (`level_summary`), the one aggregator every report uses.
"""

from __future__ import annotations

from ...work.plugins import CHECKS as REGISTRY
from .legal import LEGAL_TYPES, legal_question
from .rules import AGGREGATES, RULE_VALUES, AnswerSample, Check, CheckError, CheckSettings

CHECKS_SCORE = "checks_score"  # a question's own mean of its conditions
# the built-in ones, as the registry declares them (pyproject.toml publishes the same entry points; a test compares
# them); installed ones: `check_for`
CHECKS: dict[str, Check] = {entry.name: entry.load() for entry in REGISTRY.built_in}
INSTANCE_AGGREGATES = tuple(AGGREGATES)  # averaged over condition instances, not questions
SCORED = AGGREGATES["total"] + tuple(LEGAL_TYPES)  # what a question's score averages


def check_for(condition: str) -> Check | None:
    """The check of a condition name: built in, else one an installed distribution publishes in the entry-point
    group ``ragretrieval.checks`` (a callable ``check(sample, value, settings)`` returning metric name -> value in
    [0, 1]; its optional ``check_value(value)`` refuses a bad value before any answer is produced). None: unknown."""
    if condition in CHECKS:
        return CHECKS[condition]
    found = REGISTRY.find(condition)
    return found[0].load() if found else None


def known_conditions() -> str:
    return ", ".join(REGISTRY.available())


def check_expect(expect: dict, where: str) -> None:
    """Refuse unknown condition names and any condition value a check could not score (a RAG-IFEval include that
    is not a list, a legal amount that is not a number, a date that is not YYYY-MM-DD...) before any answer is
    produced, naming the question (`where`) and the field."""
    prefix = f"{where}: " if where else ""
    if not isinstance(expect, dict):
        raise CheckError(f"{prefix}'expect' must be an object of conditions")
    for condition, value in expect.items():
        check = check_for(condition)
        if check is None:
            raise CheckError(f"{prefix}unknown condition {condition!r} in 'expect' (known: {known_conditions()})")
        try:
            if condition in LEGAL_TYPES:
                legal_question(condition, value)
            elif condition in RULE_VALUES:
                RULE_VALUES[condition](value)
            elif callable(getattr(check, "check_value", None)):
                check.check_value(value)
        except CheckError as error:
            raise CheckError(f"{prefix}{error}") from None


def run_checks(sample: AnswerSample, expect: dict, settings: CheckSettings) -> dict[str, float]:
    """Every condition of `expect` on `sample`: metric name -> value in [0, 1]."""
    values: dict[str, float] = {}
    for condition, value in expect.items():
        check = check_for(condition)
        if check is None:
            raise CheckError(f"unknown condition {condition!r} (known: {known_conditions()})")
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
        result[CHECKS_SCORE] = score
    return result


def instance_sums(values: dict[str, float]) -> dict[str, tuple[float, int]]:
    """For each instance aggregate, the sum of the question's condition values in it and how many there are."""
    sums = {}
    for name, members in AGGREGATES.items():
        own = [values[m] for m in members if m in values]
        if own:
            sums[name] = (sum(own), len(own))
    return sums
