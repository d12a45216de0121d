"""What a reranker is: `RerankSettings` (``--rerank NAME --rerank-depth N --rerank-format ...``), the `Reranker`
protocol, and `PerQuestion`, the base of rerankers that score one question's candidates at a time."""

from __future__ import annotations

from typing import Literal, Protocol, Sequence, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import RagretrievalError
from ...work.limits import Concurrency, Integer, Retries, Timeout, Wait
from ...work.pool import parallel_map
from ...work.progress import as_progress
from ...work.remote import RemoteCall

DEFAULT_DEPTH = 100
ONE_AT_A_TIME = 1  # questions at once of a local model: it uses every core already


class RerankError(RagretrievalError):
    """A reranker that cannot be made, or that failed; a failure names the question."""


# a rerank request scores a hundred passages: up to a minute on a CPU server
RERANK_CALLS = RemoteCall(timeout=60.0, retries=3, backoff=0.5, concurrency=4)


class RerankSettings(BaseModel):
    """A reranking stage, recorded in the run's configuration (``EvalConfig.rerank``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, description="Rerank the first stage's top hits: st-cross:ID-OR-FOLDER, "
                                                "embed:MODEL or http:URL (docs/embedders.md)")
    depth: Integer = Field(default=DEFAULT_DEPTH, ge=1, description="How many hits to rerank")
    format: Literal["cohere", "tei"] = Field("cohere", description="Request/response format of an http: reranker")
    model: str | None = Field(None, description="Model named in an http: reranker's requests (Cohere, Jina)")
    api_key_env: str | None = Field(None, description="Variable whose value an http: reranker sends as a Bearer "
                                                      "token")
    concurrency: Concurrency = RERANK_CALLS.field("concurrency", "Questions reranked at once (http:)", le=64)
    timeout: Timeout = RERANK_CALLS.field("timeout", "Seconds per rerank request (http:)")
    retries: Retries = RERANK_CALLS.field("retries", "Retries on errors, timeouts, 429 and 5xx (http:)")
    backoff: Wait = RERANK_CALLS.field("backoff", "Seconds before the first retry, doubling (http:)")
    embed: dict | None = Field(None, description="The run's embedding settings (its API endpoint), for an embed: "
                                                 "reranker (set by the run)")

    @classmethod
    def parse(cls, values) -> "RerankSettings":
        if isinstance(values, RerankSettings):
            return values
        try:
            return cls.model_validate(values or {})
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "rerank"
            raise RerankError(f"rerank setting {field!r}: {first['msg']}") from None

    @property
    def calls(self) -> RemoteCall:
        return RemoteCall(timeout=self.timeout, retries=self.retries, backoff=self.backoff,
                          concurrency=self.concurrency)

    def recorded(self) -> dict:
        """Name and depth always; the rest when it differs from the default."""
        return {"name": self.name, "depth": self.depth, **self.model_dump(exclude_defaults=True)}


@runtime_checkable
class Reranker(Protocol):
    """Scores each question's candidate texts; higher is better. `identity` names the model exactly."""

    identity: str

    def rerank(self, questions: Sequence, candidates: Sequence[Sequence[str]]) -> list[np.ndarray]: ...


def question_text(question) -> str:
    return question if isinstance(question, str) else question.text


def question_name(question) -> str:
    return f"{question!r}" if isinstance(question, str) else f"{question.id} ({question.text!r})"


class PerQuestion:
    """Rerankers that score one question at a time (`score`), `concurrency` questions at once; a failure becomes a
    `RerankError` naming the question, never a ranking silently left in first-stage order."""

    identity: str
    concurrency: int = ONE_AT_A_TIME

    def __init__(self, progress=None, stop=None):
        self.progress, self.stop = as_progress(progress), stop

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def _scored(self, item) -> np.ndarray:
        question, passages = item
        if not passages:
            return np.zeros(0, dtype=np.float32)
        try:
            scores = np.asarray(self.score(question_text(question), list(passages)), dtype=np.float32).reshape(-1)
        except Exception as error:  # a model or a service fails in many ways; the user needs the question
            raise RerankError(f"reranker {self.identity} failed on question {question_name(question)}: "
                              f"{error}") from error
        if len(scores) != len(passages):
            raise RerankError(f"reranker {self.identity} gave {len(scores)} scores for {len(passages)} passages "
                              f"on question {question_name(question)}")
        return scores

    def rerank(self, questions: Sequence, candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        results: list = [None] * len(questions)
        self.progress.stage("reranking", total=len(questions), unit="question")
        for index, scores in parallel_map(self._scored, list(zip(questions, candidates)), self.concurrency,
                                          stop=self.stop, name="ragretrieval-rerank"):
            results[index] = scores
            self.progress.advance()
        return results
