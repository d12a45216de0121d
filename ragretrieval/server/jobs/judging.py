"""LLM judges in web evaluations: the names an evaluation may ask for, the scorers that join its answer session, and
how a judge's verdict lands in a result row.

Judges come from the one judge registry (answers/judges/registry.py: the built-in judges and installed plug-ins), the
same as ``ragretrieval answer --judge``. They are per-question scorers of the answer session (`AnswerSession.scorers`:
the checks first, judges appended); each writes its verdict to ``answered.judges[name]`` as ``{"value", "reasoning",
"failure", ...}``. In a result row the ``score5`` judge fills ``llm_judge_score`` and ``llm_judge_reasoning``; every
other judge goes into ``checks`` beside the deterministic checks, as ``{"value", "reasoning", "error"}`` (the nuggets
judge adds ``nuggets``: each nugget's text, importance and verdict, listed on the result's card).

A judge asks the evaluation's ``judge_model`` at ``judge_base_url``; either left empty falls back to the generator's
(``openai:<model>`` and ``base_url``), as ``answer --judge`` does (`JudgeOptions.from_settings`: the evaluation's
judges are `AnswerSettings` fields, options.py). The key is the worker's (``--api-key-env``), never the
evaluation's. The nuggets judge reads ``nuggets.jsonl`` in the corpus's dataset folder (a question set's questions
are matched to its lines by id), as ``answer`` does. Prompts are the shipped ones, in Chinese for a Chinese
corpus and in English otherwise; ``options.judge_samples`` and ``options.judge_temperature`` are ``answer``'s
``--judge-samples`` and ``--judge-temperature``.
"""

from __future__ import annotations

import math

from ...answers.judges import JudgeError, check_references, judge_class, judge_names
from ...answers.judges import available_judges as registered_judges
from ...answers.judges.registry import SUMMARY
from ...answers.report import ANSWER_LEVEL, AnsweredQuestion
from ...runs.schema import SCORE_JUDGE
from .contract import EngineError


def available_judges() -> dict[str, str]:
    """Judge name -> what it judges (built-in judges), or the distribution a plug-in judge comes from."""
    return {name: SUMMARY.get(name, f"from {origin}") for name, origin in sorted(registered_judges().items())}


def check_judges(judge: str | None) -> list[str]:
    """The judge names of an evaluation's ``judge`` field, each one known; `EngineError` otherwise."""
    try:
        return judge_names(judge or "")
    except JudgeError as error:
        raise EngineError(f"judge: {error}") from None


def check_judges_apply(judge: str | None, questions) -> None:
    """A judge that needs reference answers on a question set without any is refused when the evaluation is
    created (`EngineError`); one where only some questions lack them runs, and its summary counts the skipped ones.
    `questions` are the set's (``ground_truth``, and a dataset question's ``source_record``)."""
    if not judge:
        return
    references = [bool((q.ground_truth or (q.source_record or {}).get("ground_truth") or "").strip())
                  for q in questions]
    try:
        check_references(judge, references)
    except JudgeError as error:
        raise EngineError(f"judge: {error}") from None


def _number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def verdict(found: dict) -> dict:
    """A judge's verdict as a result row's check: its value (None without a verdict), reasoning, and why there is
    none: ``error`` when the judge failed, ``skipped`` when it does not apply to the question (score5 without a
    reference answer), which the page shows as "not applicable", not as a failure."""
    shown = {"value": _number(found.get("value"))}
    if found.get("reasoning"):
        shown["reasoning"] = str(found["reasoning"])
    if shown["value"] is None:
        error = found.get("failure") or found.get("error")
        if error:
            shown["error"] = str(error)
        elif found.get("skipped"):
            shown["skipped"] = str(found["skipped"])
    nuggets = [{"text": str(d["text"]), "importance": str(d.get("importance", "")), "verdict": d.get("verdict")}
               for d in found.get("details") or [] if isinstance(d, dict) and "text" in d and "verdict" in d]
    if nuggets:  # the nuggets judge: each nugget's verdict, for the result's card
        shown["nuggets"] = nuggets
    return shown


def judge_metric(name: str) -> str | None:
    """The per-question metric judge `name` records its value under (None for a judge no longer installed)."""
    try:
        return judge_class(name).metric
    except JudgeError:
        return None


def judge_fields(answered: AnsweredQuestion) -> tuple[float | None, str | None, dict]:
    """(llm_judge_score, llm_judge_reasoning, checks) of one answered question: the check values, then the judges'
    verdicts; a score5 verdict on the 1-5 scale is the score, a failed one is shown among the checks."""
    judged = {judge_metric(name) for name in answered.judges}  # shown once, as the judge's verdict
    checks = {name: value for name, value in answered.metrics.get(ANSWER_LEVEL, {}).items()
              if name not in judged and _number(value) is not None}
    score = reasoning = None
    for name, found in answered.judges.items():
        shown = verdict(found)
        if name == SCORE_JUDGE and shown["value"] is not None and 1 <= shown["value"] <= 5:
            score, reasoning = shown["value"], shown.get("reasoning")
        else:
            checks[name] = shown
    return score, reasoning, checks
