"""LLM judges in web evaluations: the names an evaluation may ask for, the scorers that join its answer session, and
how a judge's verdict lands in a result row.

Judges are per-question scorers of the answer session (`AnswerSession.scorers`: the checks first, judges appended,
answers/scorers.py); each writes its verdict to ``answered.judges[name]`` as ``{"value", "reasoning", ...}`` (and
``"error"`` when the judge failed, which is never a score). In a result row the ``score5`` judge fills
``llm_judge_score`` and ``llm_judge_reasoning``; every other judge goes into ``checks`` beside the deterministic
checks, as ``{"value", "reasoning"}``.

This ragretrieval has no LLM judges yet (they come with ``ragretrieval answer --judge``): `available_judges` is
empty, an evaluation that names a judge is refused when it is created, and the pages show the judge fields as
absent. When the judges' registry is part of ragretrieval, `available_judges` lists it and `judge_scorers` builds
its scorers with the evaluation's ``judge_model`` and ``judge_base_url``; nothing else here changes.
"""

from __future__ import annotations

import math

from ...answers.report import ANSWER_LEVEL, AnsweredQuestion
from .engine import EngineError

SCORE_JUDGE = "score5"  # the 1-5 judge whose verdict is the result's llm_judge_score


def available_judges() -> dict[str, str]:
    """Judge name -> what it judges; empty until LLM judges are part of ragretrieval."""
    return {}


def judge_names(judge: str | None) -> list[str]:
    return [name for name in (judge or "").replace(" ", "").split(",") if name]


def check_judges(judge: str | None) -> list[str]:
    """The judge names of an evaluation's ``judge`` field, each one known; `EngineError` otherwise."""
    names = judge_names(judge)
    known = available_judges()
    if names and not known:
        raise EngineError("judge: this ragretrieval has no LLM judges yet; leave judge empty (answers are scored "
                          "by the deterministic checks)")
    unknown = [name for name in names if name not in known]
    if unknown:
        raise EngineError(f"judge: unknown judge {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return names


def judge_scorers(judge: str | None, judge_model: str | None, judge_base_url: str | None, api_key_env: str,
                  stop=None) -> list:
    """The scorers to append to the session's ``scorers`` for these judges (none are available yet, so naming one
    is refused by `check_judges`)."""
    check_judges(judge)
    return []


def _number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def verdict(found: dict) -> dict:
    """A judge's verdict as a result row's check: its value (None when the judge failed), reasoning and error."""
    shown = {"value": _number(found.get("value"))}
    for key in ("reasoning", "error"):
        if found.get(key):
            shown[key] = str(found[key])
    return shown


def judge_fields(answered: AnsweredQuestion) -> tuple[float | None, str | None, dict]:
    """(llm_judge_score, llm_judge_reasoning, checks) of one answered question: the check values, then the judges'
    verdicts; a score5 verdict on the 1-5 scale is the score, a failed one is shown among the checks."""
    checks = {name: value for name, value in answered.metrics.get(ANSWER_LEVEL, {}).items()
              if name not in answered.judges and _number(value) is not None}
    score = reasoning = None
    for name, found in answered.judges.items():
        shown = verdict(found)
        if name == SCORE_JUDGE and shown["value"] is not None and 1 <= shown["value"] <= 5:
            score, reasoning = shown["value"], shown.get("reasoning")
        else:
            checks[name] = shown
    return score, reasoning, checks
