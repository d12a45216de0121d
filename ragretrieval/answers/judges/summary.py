"""Each judge over a run: verdicts, failures and skips counted, tokens and cost summed, how often repeated samples
disagreed, and its agreement with the matching check (trust.py). The report's ``judges`` field, and the judges' part
of its ``usage``."""

from __future__ import annotations

from collections import Counter

from ...llm.replies import check_failures
from ..report import AnsweredQuestion, JudgeSummary
from .base import JudgeResult
from .trust import agreement

SHOWN_FAILURES = 3


def summarize_judge(name: str, questions: list[AnsweredQuestion]) -> JudgeSummary:
    results = [JudgeResult.model_validate(q.judges[name]) for q in questions
               if name in q.judges and q.error is None]
    judged = [r for r in results if r.value is not None]
    failures = [r.failure for r in results if r.value is None and r.skipped is None]
    sampled = [r for r in judged if r.disagreement is not None]
    return JudgeSummary(
        judged=len(judged), failed=len(failures), skipped=sum(r.skipped is not None for r in results),
        failures=list(dict.fromkeys(f or "no verdict" for f in failures))[:SHOWN_FAILURES],
        skipped_because=dict(Counter(r.skipped for r in results if r.skipped is not None)),
        input_tokens=sum(r.input_tokens for r in results), output_tokens=sum(r.output_tokens for r in results),
        total_tokens=sum(r.input_tokens + r.output_tokens for r in results),
        cost=round(sum(r.cost for r in results), 6), requests=sum(r.requests for r in results),
        latency=sum(r.latency for r in results),
        samples=max([len(r.samples) for r in results] + [1]),
        disagreement_rate=sum(r.disagreement for r in sampled) / len(sampled) if sampled else None,
        agreement=agreement(name, questions))


def judge_summaries(questions: list[AnsweredQuestion]) -> dict[str, JudgeSummary]:
    """Every judge that left a verdict on some question, in the order they first appear."""
    names = dict.fromkeys(name for q in questions for name in q.judges)
    return {name: summarize_judge(name, questions) for name in names}


def judge_usage(summaries: dict[str, JudgeSummary]) -> dict[str, float]:
    """The judges' tokens and cost over the run, for the report's ``usage`` (beside the generator's)."""
    if not summaries:
        return {}
    values = list(summaries.values())
    return {"judge_input_tokens": sum(s.input_tokens for s in values),
            "judge_output_tokens": sum(s.output_tokens for s in values),
            "judge_total_tokens": sum(s.total_tokens for s in values),
            "judge_requests": sum(s.requests for s in values),
            "judge_cost": round(sum(s.cost for s in values), 6)}


def failure_notes(summaries: dict[str, JudgeSummary]) -> list[str]:
    """One note per judge that failed on some question (they are left out of its mean)."""
    return [f"judge {name}: {s.failed} of {s.judged + s.failed} verdicts failed and are left out of its mean "
            f"(first reasons: {'; '.join(s.failures)}); running the same command again asks for them again"
            for name, s in summaries.items() if s.failed]


def failed_verdict(verdict: dict) -> bool:
    """A verdict that could not be had (neither a value nor a reason to skip): asked again by a later run."""
    return verdict.get("value") is None and verdict.get("skipped") is None


def check_judges(summaries: dict[str, JudgeSummary], kept: str) -> None:
    """`TooManyFailures` (exit 1) when more than half of one judge's verdicts failed, naming the judge, the count and
    the first reasons: the rule `check_failures` applies to answers (llm/replies.py), per judge."""
    for name, s in summaries.items():
        check_failures(s.failures or ["no verdict"], s.judged + s.failed, f"verdicts of judge {name}", kept, s.failed)
