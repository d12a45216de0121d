"""The built-in engine: `ragretrieval answer`'s answer session (answers/session.py) run one question at a time.

Prepared once per evaluation per worker: the corpus is loaded from the evaluation's dataset folder on this machine,
the evaluation's questions become the session's questions (records.py), the session is built from the
evaluation's generator, retriever, judges and options (options.py: `AnswerSettings`, as `ragretrieval answer`
builds them), and the retriever indexes the corpus. `AnswerRunner.run` is then `AnswerSession.answer_one` on one
question, mapped onto the result row (records.py); `AnswerRunner.report` makes the answer run stored in the runs
history when the evaluation completes, from every question's stored record, with the same `build_report` as the
command line.

Failures: a generator that cannot answer one question (a refused request, an HTTP error after its retries) gives a
result with its ``error``, as `answer` records it; when ``FAILURE_STREAK`` questions in a row fail so, the service
is taken to be down and the evaluation fails with the last error (a resume asks the failed questions again). Any
other error (no API key, an endpoint that stays down, a bad option) fails the evaluation at once.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from ...answers.batch import build_report
from ...answers.report import AnsweredQuestion, AnswerReport
from ...answers.session import AnswerSession
from ...data.dataset import load_dataset
from .contract import EngineError, EvaluationSettings, ItemResult, QuestionItem
from .options import answer_settings
from .records import question_records, question_result

FAILURE_STREAK = 5  # questions in a row without an answer that fail the evaluation


class AnswerEngine:
    """``prepare(evaluation, stop)`` of the built-in engine; model keys come from `api_key_env` on the worker."""

    def __init__(self, api_key_env: str = "OPENAI_API_KEY"):
        self.api_key_env = api_key_env

    def __call__(self, evaluation: EvaluationSettings, stop) -> "AnswerRunner":
        if evaluation.kind == "retrieval":  # the built-in engine runs retrieval evaluations too
            from .retrieval_engine import prepare_retrieval

            return prepare_retrieval(evaluation, stop)
        if evaluation.dataset_path is None:
            raise EngineError(f"corpus {evaluation.dataset!r} is not under this worker's --datasets folder")
        dataset = load_dataset(evaluation.dataset_path)
        items = list(evaluation.questions())
        if not items:
            raise EngineError(f"evaluation {evaluation.id!r} has no questions")
        records, notes = question_records(items, dataset.documents)
        settings = answer_settings(evaluation, self.api_key_env)  # its judges join the session's scorers
        session = AnswerSession(replace(dataset, questions=tuple(records.values())), settings, stop=stop)
        return AnswerRunner(session, records, notes)


class AnswerRunner:
    def __init__(self, session: AnswerSession, records: dict, notes: list[str] = ()):
        self.session, self.records, self.notes = session, records, list(notes)
        self._lock = threading.Lock()
        self._streak = 0

    def run(self, question: QuestionItem) -> ItemResult:
        record = self.records.get(question.question_id)
        if record is None:  # the evaluation's questions are fixed when it is created: this cannot be one of them
            raise EngineError(f"question {question.question_id!r} is not one of the evaluation's questions")
        answered = self.session.answer_one(record)
        with self._lock:
            self._streak = self._streak + 1 if answered.error else 0
            streak = self._streak
        if streak >= FAILURE_STREAK:
            raise EngineError(f"{streak} questions in a row got no answer; the last: {answered.error}")
        return question_result(answered)

    def report(self, records: list[dict], timings: dict[str, float]) -> AnswerReport:
        """The answer run of the evaluation, from every question's stored record (in question order)."""
        answered = [AnsweredQuestion.model_validate(record) for record in records]
        report = build_report(self.session, answered, {**self.session.timings, **timings})
        report.notes.extend(self.notes)
        return report

    def close(self) -> None:
        """Nothing to release: the session holds memory only (its index, its clients' connections)."""
