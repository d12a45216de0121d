"""Run-level numbers of an answer run: means with bootstrap 95% CIs, per-type means, usage and latency.

- Answer level: a metric's mean is over the questions that have it (a question without ``include`` adds nothing to
  ``include``), except RAG-IFEval's ``checks_correctness``, ``checks_safety`` and ``total``, which average every
  condition instance of the run. Both are Σ values / Σ instances over questions, so one bootstrap serves both:
  questions are resampled with replacement and the ratio recomputed (analysis/stats.py, `bootstrap_ratio_ci`;
  2,000 resamples, seed 0).
  ``pass_rate_<type>`` is the share of that type's questions scoring >= 0.7.
- Questions whose generator failed are left out of every answer-level mean (and counted in ``failed``).
- Retrieval levels (``doc``, ``chunk``): plain means over the questions that have relevant documents.
- ``by_type``: the same answer-level means within each ``question_type``.
- ``usage``: tokens, cost and requests summed; latency mean, p50 and p95 over answered questions (usage.py).
- ``judges``: each judge's counts, tokens, cost, sample disagreement and agreement with its check
  (judges/summary.py); a judge's per-question metric is averaged like any other (``llm_judge_score``, score5's, is
  reported as ``average_score``: analysis/compare.py, `RUN_LEVEL_NAMES`).
"""

from __future__ import annotations

import numpy as np

from ..analysis.compare import RUN_LEVEL_NAMES
from ..analysis.stats import bootstrap_ratio_ci
from .checks.legal import LEGAL_TYPES, PASS_MARK
from .checks.registry import INSTANCE_AGGREGATES, instance_sums
from .judges.summary import judge_summaries, judge_usage
from .report import ANSWER_LEVEL, AnsweredQuestion
from .usage import run_usage

RESAMPLES = 2_000


def _sums(question: AnsweredQuestion, level: str) -> dict[str, tuple[float, int]]:
    values = question.metrics.get(level, {})
    pairs = {name: (value, 1) for name, value in values.items()}
    if level == ANSWER_LEVEL:
        raw = {name: value for name, value in values.items() if name not in INSTANCE_AGGREGATES}
        pairs.update(instance_sums(raw))
    return pairs


def level_summary(questions: list[AnsweredQuestion], level: str, resamples: int = RESAMPLES):
    """(means, 95% CIs, counts) of every metric of `level` over the questions that have it."""
    rows = [_sums(q, level) for q in questions]
    names = list(dict.fromkeys(name for row in rows for name in row))
    means, intervals, counts = {}, {}, {}
    for name in names:
        pairs = [row[name] for row in rows if name in row]
        sums = np.array([p[0] for p in pairs], dtype=np.float64)
        weights = np.array([p[1] for p in pairs], dtype=np.float64)
        shown = RUN_LEVEL_NAMES.get(name, name) if level == ANSWER_LEVEL else name
        means[shown] = float(sums.sum() / weights.sum())
        counts[shown] = len(pairs)
        low, high = bootstrap_ratio_ci(sums, weights, n_resamples=resamples) if resamples else (np.nan, np.nan)
        if np.isfinite(low):
            intervals[shown] = (low, high)
    if level == ANSWER_LEVEL:
        for kind in LEGAL_TYPES:
            scores = [q.metrics[level][kind] for q in questions if kind in q.metrics.get(level, {})]
            if scores:
                means[f"pass_rate_{kind}"] = sum(s >= PASS_MARK for s in scores) / len(scores)
                counts[f"pass_rate_{kind}"] = len(scores)
    return means, intervals, counts


def summarize(questions: list[AnsweredQuestion], resamples: int = RESAMPLES) -> dict:
    """The report's means, intervals, counts, by_type, usage, failed and judges fields."""
    scored = [q for q in questions if q.error is None]
    levels = list(dict.fromkeys(level for q in questions for level in q.metrics))
    means, intervals, counts = {}, {}, {}
    for level in levels:
        pool = scored if level == ANSWER_LEVEL else questions
        means[level], intervals[level], counts[level] = level_summary(pool, level, resamples)
    by_type = {}
    for kind in sorted({q.question_type for q in scored if q.question_type}):
        mine = [q for q in scored if q.question_type == kind]
        by_type[kind] = level_summary(mine, ANSWER_LEVEL, resamples=0)[0] if any(
            ANSWER_LEVEL in q.metrics for q in mine) else {}
    judges = judge_summaries(questions)
    return {"means": means, "intervals": intervals, "counts": counts, "by_type": by_type,
            "usage": run_usage(questions, judge_usage(judges)), "failed": len(questions) - len(scored),
            "judges": judges}
