"""LLM judges of answers and contexts (docs/answers/judge.md, "Judges"): one registry (registry.py, entry-point group
``ragretrieval.judges``), one folder per built-in judge holding its class and its prompts (``templates/``), the
shared machinery for asking a model (llm_judge.py), the reply schemas (schema.py, score5/schema.py), the run-level
summaries (summary.py) and judge trust (trust.py). Judging a stored run is ``stored.py``.

A judge is a session scorer: ``session.scorers += build_judges("score5,correctness", JudgeOptions(...))``; or, for
one answered question, ``build_judge("score5", options).judge(answered)`` returns a `JudgeResult` (value, rating,
reasoning, tokens, cost, latency, failure).
"""

from .base import BaseJudge, Judge, JudgeContext, JudgeError, JudgeOptions, JudgeResult, judge_endpoint, record
from .registry import available_judges, build_judge, build_judges, check_references, judge_class, judge_names

__all__ = ["BaseJudge", "Judge", "JudgeContext", "JudgeError", "JudgeOptions", "JudgeResult", "available_judges",
           "build_judge", "build_judges", "check_references", "judge_class", "judge_endpoint", "judge_names",
           "record"]
