"""Every answer metric once: its name, family, which direction is better and what it measures. The text table
(answers/render.py), the HTML report (analysis/answer_html.py, through `summary_names`), the web pages (a metric's
title) and ``compare``'s default metrics (runs/compared.py) read it, as `metrics.py` beside it is read for retrieval.
It sits here, below analysis/ and answers/, so both can read it.

Families: ``check`` (a deterministic condition of the question's ``expect``, answers/checks), ``aggregate`` (the
question's own means of its conditions, and the run's), ``legal`` (the legal benchmark's question types), ``judge``
(an LLM judge's verdict, answers/judges) and ``usage`` (tokens per answer). A judge's metric name is its own (a
plug-in judge or check adds names this table does not know; they are shown after these, by name).

The aggregates of the checks are ``checks_score``, ``checks_correctness`` and ``checks_safety``, apart from the
judges named ``correctness`` and ``safety`` and score5's score. Runs stored before had them as ``score``,
``correctness`` and ``safety``; `current_names` reads those under today's names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["check", "aggregate", "legal", "judge", "usage"]


@dataclass(frozen=True)
class AnswerMetric:
    name: str
    family: Family
    description: str
    higher_is_better: bool = True
    detail: bool = False  # a part of another metric (cite_precision of cite_f1): in the text table, not the summaries
    scale: tuple[float, float] | None = (0.0, 1.0)  # a question's value lies here (None: unbounded, token counts)

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


_JUDGED = "response/llm_judged/"
ANSWER_METRICS: tuple[AnswerMetric, ...] = (
    AnswerMetric("checks_score", "aggregate", "the mean of the question's own conditions (a legal type counts as "
                 "one), 0-1"),
    AnswerMetric("total", "aggregate", "every condition instance of the run averaged: include, exclude, cite_f1, "
                 "refuse, safe (RAG-IFEval's total)"),
    AnswerMetric("checks_correctness", "aggregate", "include, exclude and cite_f1 instances averaged (RAG-IFEval)"),
    AnswerMetric("checks_safety", "aggregate", "refuse and safe instances averaged (RAG-IFEval)"),
    AnswerMetric("include", "check", "share of the expected phrases the answer holds"),
    AnswerMetric("exclude", "check", "1 when the answer holds none of the excluded phrases"),
    AnswerMetric("cite_f1", "check", "F1 of the documents cited against those expected"),
    AnswerMetric("cite_precision", "check", "cited documents that were expected, over those cited", detail=True),
    AnswerMetric("cite_recall", "check", "expected documents cited, over those expected", detail=True),
    AnswerMetric("refuse", "check", "1 when the answer refuses exactly when the question expects a refusal"),
    AnswerMetric("safe", "check", "1 when the answer holds no word of the unsafe-word list"),
    AnswerMetric("fact_exact", "legal", "0.7 x expected facts found + 0.3 x a critical passage cited"),
    AnswerMetric("evidence_set", "legal", "the critical passages found in what the answer cites (recall, precision, "
                 "a citation)"),
    AnswerMetric("conflict_gap", "legal", "abstains exactly when it should, invents no number or date, quotes"),
    AnswerMetric("pass_rate", "legal", "share of legal questions scoring at least 0.7 (also per type: "
                 "pass_rate_<type>)"),
    AnswerMetric("average_score", "judge", "score5's 1-5 rating against the reference answer, averaged "
                 "(llm_judge_score per question)", scale=(1.0, 5.0)),
    AnswerMetric(_JUDGED + "correctness/rating", "judge", "share of answers the judge finds agree with the "
                 "reference"),
    AnswerMetric(_JUDGED + "groundedness/rating", "judge", "share of answers whose every claim is in the contexts"),
    AnswerMetric(_JUDGED + "relevance_to_query/rating", "judge", "share of answers that address the question"),
    AnswerMetric(_JUDGED + "safety/rating", "judge", "share of answers with no harmful content"),
    AnswerMetric("retrieval/llm_judged/chunk_relevance_precision", "judge", "share of the contexts the judge finds "
                 "relevant"),
    AnswerMetric("retrieval/llm_judged/context_sufficiency/rating", "judge", "share of questions whose contexts hold "
                 "the reference's facts"),
    AnswerMetric(_JUDGED + "nuggets/all_strict", "judge", "share of all nuggets fully supported"),
    AnswerMetric(_JUDGED + "nuggets/all_partial", "judge", "all nuggets, partial support counting half"),
    AnswerMetric(_JUDGED + "nuggets/vital_strict", "judge", "share of vital nuggets fully supported"),
    AnswerMetric(_JUDGED + "nuggets/vital_partial", "judge", "vital nuggets, partial support counting half"),
    AnswerMetric("agent/input_token_count", "usage", "tokens sent to the generator per answer", False, scale=None),
    AnswerMetric("agent/output_token_count", "usage", "tokens the generator wrote per answer", False, scale=None),
    AnswerMetric("agent/total_token_count", "usage", "input and output tokens per answer", False, scale=None),
)
BY_NAME = {metric.name: metric for metric in ANSWER_METRICS}

# a check aggregate's name in runs stored before it was named apart from the judges
FORMER_NAMES = {"score": "checks_score", "correctness": "checks_correctness", "safety": "checks_safety"}


def current_names(values: dict) -> dict:
    """`values` (metric name -> value) with a check aggregate stored under its former name renamed. Only numbers are
    renamed: a judge's verdict (a dict, the web's ``checks``) keeps the judge's name."""
    if not any(name in FORMER_NAMES for name in values):
        return values
    return {FORMER_NAMES.get(name, name) if not isinstance(value, dict) else name: value
            for name, value in values.items()}


# the order every table shows them in (usage last, in its own block)
ORDER = tuple(m.name for m in ANSWER_METRICS if m.family != "usage")
JUDGE_METRICS = tuple(m.name for m in ANSWER_METRICS if m.family == "judge")
USAGE_METRICS = tuple(m.name for m in ANSWER_METRICS if m.family == "usage")


def summary_names() -> tuple[str, ...]:
    """The metrics a run's summary shows (the HTML report's table): all but the parts and usage."""
    return tuple(m.name for m in ANSWER_METRICS if not m.detail and m.family != "usage")


def describe(name: str) -> str:
    """``name: what it measures (family, higher is better)``; a name the table does not know is a plug-in's."""
    if name.startswith("pass_rate_"):
        return f"{name}: share of {name.removeprefix('pass_rate_')} questions scoring at least 0.7 (legal, higher " \
               "is better)"
    metric = BY_NAME.get(name)
    if metric is None:
        return f"{name}: from a plug-in judge or check"
    return f"{name}: {metric.description} ({metric.family}, {metric.direction})"
