"""Per-question scorers: what a session applies to each answered question after the generator, in order.

The deterministic checks are the first scorer (`CheckScorer`); LLM judges are more scorers appended to
``AnswerSession.scorers``. A scorer reads the question and the `AnsweredQuestion` (answer, contexts, citations) and
adds its values to ``answered.metrics["answer"]`` (numbers that `compare` pairs and the run averages) and, for a
verdict with reasons, to ``answered.judges[name]``. Its `settings()` are recorded in the run's configuration (and so
in its identity). A scorer is called from several threads at once and must be safe to call so.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..data.dataset import QuestionRecord
from .checks import AnswerSample, CheckSettings, question_values, run_checks
from .checks.legal import LEGAL_TYPES
from .checks.registry import CHECKS_SCORE
from .report import ANSWER_LEVEL, AnsweredQuestion


@runtime_checkable
class QuestionScorer(Protocol):
    name: str

    def settings(self) -> dict: ...

    def score(self, question: QuestionRecord, answered: AnsweredQuestion) -> None: ...


def expectations(question: QuestionRecord, cite_relevant: bool) -> dict:
    """The question's checks; with `cite_relevant`, a question that names no citations of its own (and is not a
    legal question, which judges citations its own way) is expected to cite its relevant documents."""
    expect = dict(question.expect)
    relevant = [r.doc_id for r in question.relevant if r.grade > 0]
    if cite_relevant and relevant and "cite" not in expect and not set(expect) & set(LEGAL_TYPES):
        expect["cite"] = relevant
    return expect


class CheckScorer:
    """The deterministic checks of `question.expect` (checks/registry.py) on the answer and its contexts."""

    name = "checks"

    def __init__(self, settings: CheckSettings, cite_relevant: bool = True):
        self.check_settings, self.cite_relevant = settings, cite_relevant

    def settings(self) -> dict:
        return {"cite_relevant": self.cite_relevant}

    def score(self, question: QuestionRecord, answered: AnsweredQuestion) -> None:
        expect = expectations(question, self.cite_relevant)
        if answered.error is not None or not expect:
            return
        sample = AnswerSample(question.id, answered.answer, [c.doc_id or "" for c in answered.contexts],
                              [c.text for c in answered.contexts], question.text, given_context=False)
        values = question_values(run_checks(sample, expect, self.check_settings))
        answered.metrics[ANSWER_LEVEL] = {**answered.metrics.get(ANSWER_LEVEL, {}), **values}
        answered.score = values.get(CHECKS_SCORE)
