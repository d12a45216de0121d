"""What every generator is to the rest of ragretrieval: it turns a question and its contexts into an answer.

`Generator.generate` is called from several threads at once (``answer --threads``) and must be safe to call so. A
generator that fails for one question raises `GenerationFailed`: that question is recorded with its error and the
run goes on; any other `RagretrievalError` (a bad key, an endpoint that stays down) stops the run, whose finished
questions are kept in the journal. `info()` is what a run records about the generator: public settings only, never a
secret (API keys stay in the environment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

from ...data.dataset import QuestionRecord
from ...errors import RagretrievalError
from ...work.limits import check_bounds
from ..report import ContextUsed
from ..settings import GENERATION_FIELDS, default


class GeneratorError(RagretrievalError, ValueError):
    """A generator that cannot be built: an unknown name, a bad option, an unreadable file."""


class GenerationFailed(RagretrievalError):
    """The generator could not answer this one question; the run records the reason and goes on."""


@dataclass(frozen=True)
class GenerationRequest:
    question: QuestionRecord
    contexts: Sequence[ContextUsed]  # in the order shown; a citation [i] names contexts[i]
    refusal_message: str
    language: str = "en"


@dataclass
class Generated:
    answer: str
    contexts: list[ContextUsed] | None = None  # the generator's own contexts (file:, http:), replacing the others
    input_tokens: int = 0
    output_tokens: int = 0
    latency: float = 0.0  # seconds
    cost: float = 0.0
    cached: bool = False


@dataclass
class GeneratorOptions:
    """What a generator is built with (`GeneratorPlugin.build`): the run's generation settings, whose defaults are
    `AnswerSettings`' (the one place they are declared), and what the session knows (language, refusal message,
    corpus, questions, stop token). Each generator takes what applies to it (docs/answers/generate.md lists which)."""

    base_url: str | None = default("base_url")
    api_key_env: str = default("api_key_env")
    prompt_file: Path | None = default("prompt_file")
    language: str = "en"  # resolved from the data by the session when "auto"
    system_message: str | None = default("system_message")
    refusal_message: str = ""
    temperature: float = default("temperature")
    max_tokens: int | None = default("max_tokens")
    max_retries: int = default("max_retries")
    sleep_time: float = default("sleep_time")  # first wait before a retry; doubles each time
    timeout: float = default("timeout")
    text_completion: bool = default("text_completion")
    price_in: float = default("price_in")
    price_out: float = default("price_out")
    options: dict[str, Any] = field(default_factory=dict)  # generator_options: the plug-in's own options
    documents: dict = field(default_factory=dict)  # corpus id -> Document, to resolve ids a service or file names
    questions: Sequence[QuestionRecord] = ()  # the question set (file: matches its records to them)
    stop: Any = None  # StopToken
    budget: Any = None  # llm.budget.Budget: --max-cost, shared with the judges

    def __post_init__(self) -> None:
        check_bounds(self)  # timeout, max_retries, sleep_time, prices (work/limits.py)

    @classmethod
    def from_settings(cls, settings, **known) -> "GeneratorOptions":
        """The options of an `AnswerSettings`; `known` adds what the session knows (language, documents, ...)."""
        return cls(**{name: getattr(settings, name) for name in GENERATION_FIELDS},
                   options=dict(settings.generator_options), **known)


@runtime_checkable
class Generator(Protocol):
    spec: str
    provides_contexts: bool  # answers may come with their own contexts

    def generate(self, request: GenerationRequest) -> Generated: ...

    def info(self) -> dict: ...


class GeneratorPlugin(Protocol):
    """The class registered under a name or name prefix (registry.py); `build` makes a generator from a spec such as
    ``openai:gpt-4o-mini`` (`argument` is the part after the prefix)."""

    needs_contexts: ClassVar[bool]  # asks for the session's contexts (retrieved or given) before generating

    @classmethod
    def build(cls, spec: str, argument: str, options: GeneratorOptions) -> Generator: ...


def context_documents(contexts: Sequence[ContextUsed]) -> list[dict]:
    """The `documents` a prompt template sees: id, title and text of each context, in order."""
    return [{"id": c.doc_id or c.chunk_id or "", "title": c.title, "text": c.text} for c in contexts]


HISTORY_ROLES = ("system", "user", "assistant")


def conversation_history(question: QuestionRecord) -> list[dict]:
    """The earlier turns of a multi-turn question (``metadata.history``: agent-evaluation imports of ``messages`` or
    ``query`` + ``history`` keep them there), as chat messages ``{"role", "content"}``; the question's text is the last
    user turn. A malformed history fails the question (`GenerationFailed`) rather than being sent half."""
    history = question.metadata.get("history") or []
    if not isinstance(history, list):
        raise GenerationFailed("metadata.history: expected a list of {role, content} messages")
    turns = []
    for i, message in enumerate(history):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in HISTORY_ROLES or not isinstance(content, str):
            raise GenerationFailed(f"metadata.history.{i}: expected {{\"role\": {' | '.join(HISTORY_ROLES)}, "
                                   "\"content\": text}")
        turns.append({"role": role, "content": content})
    return turns
