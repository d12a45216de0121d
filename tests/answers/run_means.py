"""Run means the way every answer report computes them (answers/summary.py `level_summary`), for tests that score
checks by hand: each question's check values become one answered question, as a session records them."""

from __future__ import annotations

from ragretrieval.answers.checks import question_values
from ragretrieval.answers.report import ANSWER_LEVEL, AnsweredQuestion
from ragretrieval.answers.summary import level_summary


def run_means(per_question: list[dict[str, float]]) -> dict[str, float]:
    """The answer-level means of questions whose checks gave `per_question` (no CIs: resamples=0)."""
    questions = [AnsweredQuestion(id=f"q{i}", text="?", metrics={ANSWER_LEVEL: question_values(values)})
                 for i, values in enumerate(per_question)]
    return level_summary(questions, ANSWER_LEVEL, resamples=0)[0]
