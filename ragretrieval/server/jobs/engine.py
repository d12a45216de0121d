"""The one seam between the web app and the engine that answers and judges questions.

An *engine* is a function ``prepare(evaluation, stop) -> QuestionRunner``: it is called once per evaluation in each
worker process (load the dataset, build and index the retriever, make the generator and the judges; an error here
fails the evaluation with its message), and the runner's ``run(question) -> QuestionResult`` is then called for each
question the worker claims, from several threads at once. ``run`` returns the fields stored in the question's result
row. A question the engine could not answer but the evaluation can go on without is a result with ``error`` set; an
exception means the evaluation cannot go on: it becomes FAILED with that message, the question goes back to the work
list, and a resume tries it again.

A runner may also have ``report(records, timings)``: given every question's ``answer_record`` in question order, the
run to store in the runs history (an `AnswerReport`). The worker that stores the last result calls it, in the same
transaction, so a completed evaluation has its run (``run_id``) or none was ever stored.

`load_engine` picks the engine: ``None`` is the built-in one (`answer_engine.AnswerEngine`: the answer session of
`ragretrieval answer`), ``"module:function"`` any other (``serve --engine``, ``worker --engine``, or
``$RAGRETRIEVAL_SERVE_ENGINE``).
"""

from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...errors import RagretrievalError
from ...work.stop import StopToken

ENGINE_VARIABLE = "RAGRETRIEVAL_SERVE_ENGINE"


class EngineError(RagretrievalError):
    """An engine that cannot be loaded, or an evaluation it cannot run."""


@dataclass(frozen=True)
class QuestionItem:
    """One question of the evaluation, as it was when the evaluation was created."""

    question_id: str
    position: int
    question_type: str
    question_text: str
    ground_truth: str
    source_record: dict | None = None  # the dataset's question record (relevance labels, checks), when known


@dataclass(frozen=True)
class EvaluationSettings:
    """What an evaluation asks for: everything needed to build an answer session, and never a key (keys are read
    from the worker's environment, e.g. ``OPENAI_API_KEY``)."""

    id: str
    name: str
    dataset: str  # the corpus name, as listed under --datasets
    dataset_path: str | None  # that folder on this worker's machine (None when this worker does not have it)
    question_set_id: str
    generator: str  # extractive | openai:<model> | http:<url> ("" for a retrieval evaluation)
    base_url: str | None = None
    retriever: str | None = None
    judge: str | None = None  # judge names separated by commas, e.g. score5,correctness
    judge_model: str | None = None
    judge_base_url: str | None = None
    options: dict = field(default_factory=dict)
    kind: str = "answer"  # or "retrieval": the retrieval grid of `eval` for the questions (retrieval_engine.py)
    # every question of the evaluation, read when called (an engine that prepares for all of them at once)
    questions: Callable[[], Sequence[QuestionItem]] = field(default=tuple, compare=False, repr=False)


class QuestionResult(BaseModel):
    """The fields of one question's result row (the API's names)."""

    model_config = ConfigDict(extra="forbid")
    rag_answer: str | None = None
    rag_answer_sources: list[dict] = Field(default_factory=list)  # {"doc_id", "title"?, "content"?, "chunk_id"?}
    llm_judge_score: float | None = Field(default=None, ge=1, le=5)
    llm_judge_reasoning: str | None = None
    checks: dict = Field(default_factory=dict)  # check or judge name -> value (number, bool, or {"value", ...})
    metrics: dict = Field(default_factory=dict)  # retrieval metrics of the ranking the answer used
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency: float | None = None  # seconds
    cost: float | None = None
    error: str | None = None  # set when this question could not be answered (the evaluation goes on)
    answer_record: dict | None = None  # the engine's whole record (an AnsweredQuestion), for `report`; not shown

    @field_validator("checks", "metrics")
    @classmethod
    def _finite(cls, values: dict) -> dict:
        """NaN and infinities are no value to show or average (and not JSON): left out."""
        return {name: value for name, value in values.items()
                if not (isinstance(value, float) and not math.isfinite(value))}


class QuestionRunner(Protocol):
    def run(self, question: QuestionItem) -> QuestionResult: ...

    def close(self) -> None: ...


Engine = Callable[[EvaluationSettings, StopToken], QuestionRunner]


def load_engine(spec: str | None = None, api_key_env: str = "OPENAI_API_KEY") -> Engine:
    """The engine named by `spec` (``module:function``), else by ``$RAGRETRIEVAL_SERVE_ENGINE``, else the built-in
    one, which reads model API keys from the environment variable `api_key_env`."""
    spec = spec or os.environ.get(ENGINE_VARIABLE) or None
    if spec is None:
        from .answer_engine import AnswerEngine

        return AnswerEngine(api_key_env)
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise EngineError(f"engine {spec!r} must be written module:function")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise EngineError(f"cannot load engine {spec!r}: {error}") from None
    if not callable(found):
        raise EngineError(f"engine {spec!r} is not callable")
    return found
