"""What an engine and the web app say to each other (engine.py tells the whole seam): the evaluation an engine
prepares for, the questions it answers, the result row it returns, and the runner protocol.

The built-in engine's modules (answer_engine.py and the pieces it is made of) import these names from here, since
engine.py imports the built-in engine to make it the default; the app and outside engines may import them from
engine.py, which re-exports them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...errors import RagretrievalError
from ...work.stop import StopToken


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


class ItemResult(BaseModel):
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


QuestionResult = ItemResult  # its name before 0.3 (evaluation.report.QuestionResult is a retrieval question's)


class QuestionRunner(Protocol):
    def run(self, question: QuestionItem) -> ItemResult: ...

    def close(self) -> None: ...


Engine = Callable[[EvaluationSettings, StopToken], QuestionRunner]
