"""``groundedness``: is every claim of the answer supported by its contexts? yes when each statement is found in or
follows directly from them (a refusal makes no claim, so it is grounded); no when any claim comes from elsewhere.
Metric ``response/llm_judged/groundedness/rating``. Needs contexts."""

from __future__ import annotations

from ..llm_judge import YesNoJudge


class GroundednessJudge(YesNoJudge):
    name = "groundedness"
    metric = "response/llm_judged/groundedness/rating"
    placeholders = ("question", "answer", "contexts")
    required = ("answer", "contexts")
    needs = ("contexts",)
