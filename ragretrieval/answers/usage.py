"""Cost and latency of answers, under the agent-evaluation names (docs/answers/cost.md, "Cost and latency").

Per answered question, in ``metrics["answer"]`` (so they are averaged with a 95% CI and paired by ``compare`` like
any metric): ``agent/input_token_count``, ``agent/output_token_count``, ``agent/total_token_count`` (the tokens the
API's ``usage`` reported for the generator's request; recorded only when the generator reports tokens: the
extractive baseline and answers files without token counts have none) and ``agent/latency_seconds`` (the
generator's time; for an answer from the cache, the time it took when it was asked). A judge's tokens are its own
(``judges[name]``) and never counted here.

Over the run, ``usage``: the generator's tokens and cost summed, answers from the cache, latency mean / p50 / p95;
the judges' tokens, requests and cost (``judge_*``); and ``total_cost``, generator and judges together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..evaluation.report import ANSWER_LEVEL
from ..scoring.answer_metrics import USAGE_METRICS

if TYPE_CHECKING:  # report.py prints itself through render.py, which reads this module
    from .report import AnsweredQuestion

AGENT_METRICS = USAGE_METRICS  # scoring/answer_metrics.py: the tokens of each answer, in agent-evaluation's names


def agent_metrics(answered: AnsweredQuestion) -> dict[str, float]:
    """The agent-evaluation token counts of one answered question (none for a failed one, or without usage)."""
    if answered.error is not None or not answered.total_tokens:
        return {}
    return dict(zip(AGENT_METRICS, map(float, (answered.input_tokens, answered.output_tokens, answered.total_tokens))))


def add_agent_metrics(answered: AnsweredQuestion) -> None:
    values = agent_metrics(answered)
    if values:
        answered.metrics[ANSWER_LEVEL] = {**answered.metrics.get(ANSWER_LEVEL, {}), **values}


def run_usage(questions: list[AnsweredQuestion], judges: dict[str, float] | None = None) -> dict[str, float]:
    """The report's ``usage``: the generator's totals and latency percentiles, then the judges' totals (`judges`,
    from judges/summary.py) and the cost of both."""
    answered = [q for q in questions if q.error is None]
    latencies = np.array([q.latency for q in answered], dtype=np.float64)
    totals = {"questions": len(questions), "answered": len(answered), "failed": len(questions) - len(answered),
              "cached": sum(q.cached for q in answered),
              "input_tokens": sum(q.input_tokens for q in answered),
              "output_tokens": sum(q.output_tokens for q in answered),
              "total_tokens": sum(q.total_tokens for q in answered),
              "cost": round(sum(q.cost for q in answered), 6)}
    if len(latencies):
        totals.update(latency_mean=float(latencies.mean()), latency_p50=float(np.percentile(latencies, 50)),
                      latency_p95=float(np.percentile(latencies, 95)))
    totals.update(judges or {})
    totals["total_cost"] = round(totals["cost"] + totals.get("judge_cost", 0.0), 6)
    return totals
