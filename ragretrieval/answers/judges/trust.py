"""Judge trust: when a run has both a judge and the deterministic check that asks the same thing, how well they agree
on this data (docs/answers/judge.md, "Judge trust"). A team reads it before it believes a judge where no check exists.

- ``correctness`` <-> ``include`` == 1 (every expected phrase found), for legal questions ``pass_rate`` (score >= 0.7):
  Cohen's kappa;
- ``safety`` <-> ``safe``: Cohen's kappa;
- ``score5`` <-> ``score`` (the mean of the question's own checks): Spearman;
- ``context_sufficiency`` <-> every relevant document is among the contexts: Cohen's kappa;
- ``chunk_relevance`` <-> per context, it belongs to a relevant document (one item per context, not per question):
  Cohen's kappa.

``groundedness`` and ``relevance_to_query`` have no deterministic counterpart. Only questions with both a verdict and
the check count (``n``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...analysis.agreement import cohen_kappa, spearman
from ..report import ANSWER_LEVEL, AnsweredQuestion


def _relevant(question: AnsweredQuestion) -> set[str]:
    if question.relevant_grades:
        return {doc for doc, grade in question.relevant_grades.items() if grade > 0}
    return set(question.relevant)


def _include_or_pass(question: AnsweredQuestion) -> float | None:
    values = question.metrics.get(ANSWER_LEVEL, {})
    if "include" in values:
        return float(values["include"] >= 1.0)
    return values.get("pass_rate")


def _check(name: str) -> Callable[[AnsweredQuestion], float | None]:
    return lambda question: question.metrics.get(ANSWER_LEVEL, {}).get(name)


def _all_relevant_shown(question: AnsweredQuestion) -> float | None:
    relevant, shown = _relevant(question), {c.doc_id for c in question.contexts if c.doc_id}
    return float(relevant <= shown) if relevant and shown else None


@dataclass(frozen=True)
class Match:
    check: str  # what the report calls the check
    statistic: str  # cohen_kappa | spearman
    value: Callable[[AnsweredQuestion], float | None] | None  # the check per question (None: per chunk)


MATCHES = {
    "correctness": Match("include == 1 (legal: pass_rate)", "cohen_kappa", _include_or_pass),
    "safety": Match("safe", "cohen_kappa", _check("safe")),
    "score5": Match("score", "spearman", _check("score")),
    "context_sufficiency": Match("all relevant documents in the contexts", "cohen_kappa", _all_relevant_shown),
    "chunk_relevance": Match("context from a relevant document", "cohen_kappa", None),
}


def pairs(name: str, match: Match, questions: list[AnsweredQuestion]) -> list[tuple[float, float]]:
    """(the judge's verdict, the check's) for every item that has both: a question, or a context (chunk_relevance)."""
    items = []
    for question in questions:
        verdict = question.judges.get(name) or {}
        if question.error is not None or verdict.get("value") is None:
            continue
        if match.value is not None:
            check = match.value(question)
            if check is not None:
                items.append((float(verdict["value"]), float(check)))
            continue
        relevant = _relevant(question)
        if relevant:
            items += [(float(d.get("rating") == "yes"), float(d.get("doc_id") in relevant))
                      for d in verdict.get("details", [])]
    return items


def agreement(name: str, questions: list[AnsweredQuestion]) -> dict | None:
    """The judge's agreement with its matching check over the run, or None (no matching check, or no question with
    both)."""
    match = MATCHES.get(name)
    if match is None:
        return None
    found = pairs(name, match, questions)
    if not found:
        return None
    judged, checked = zip(*found)
    measure = cohen_kappa if match.statistic == "cohen_kappa" else spearman
    return {"check": match.check, **measure(list(judged), list(checked)).as_dict()}
