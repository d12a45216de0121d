"""``correctness``: is the answer right with respect to the reference answer? yes when it states every fact the
reference holds, in any wording, and contradicts none; extra facts are not wrong unless they contradict it.
Metric ``response/llm_judged/correctness/rating`` (1 yes, 0 no). Needs a reference answer."""

from __future__ import annotations

from ..llm_judge import YesNoJudge


class CorrectnessJudge(YesNoJudge):
    name = "correctness"
    metric = "response/llm_judged/correctness/rating"
    placeholders = required = ("question", "ground_truth", "answer")
    needs = ("ground_truth",)
