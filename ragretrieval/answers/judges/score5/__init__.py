"""``score5``: the 1-5 rubric, from the question, the reference answer and the answer, with its reasoning.

5 perfect; 4 high quality with a tiny flaw; 3 partly right, with clear errors or gaps; 2 mostly wrong or misleading;
1 wrong, hallucinated or refused (a refusal is right when the reference answer says the question cannot be answered).
Per question the score is ``llm_judge_score``; over a run its mean is ``average_score``. Needs a reference answer.
"""

from __future__ import annotations

from ..llm_judge import LLMJudge
from .schema import SHAPE, Score5Reply


class Score5Judge(LLMJudge):
    name = "score5"
    metric = "llm_judge_score"
    reply = Score5Reply
    shape = SHAPE
    placeholders = required = ("question", "ground_truth", "answer")
    needs = ("ground_truth",)
