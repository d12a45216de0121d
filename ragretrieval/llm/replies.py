"""Reading the model's JSON replies: a bare value, or inside a Markdown code fence, possibly with chatter around it.

`MalformedAnswer` carries a short reason that goes back to the model in the one repair request (`ask`); a reply
still malformed after it is skipped and reported in this run, and asked again in the next (it is never cached as
good).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import RagretrievalError
from ..io.jsonfiles import describe
from .cache import Answer
from .client import EmptyReply
from .prompts import REPAIR

_FENCED = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.S)
QUESTION_TYPES = ("FACTUAL", "INFERENTIAL")


class MalformedAnswer(ValueError):
    """The model's text is not the JSON we asked for."""


def extract_json(text: str):
    """The first parseable JSON value among: fenced blocks, the whole text, the outermost [...] or {...}."""
    candidates = [m.group(1) for m in _FENCED.finditer(text)] + [text]
    for opening, closing in ("[]", "{}"):
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    error = "no JSON found"
    for candidate in candidates:
        try:
            return json.loads(candidate.strip())
        except json.JSONDecodeError as problem:
            error = f"{problem.msg} at line {problem.lineno} column {problem.colno}"
    raise MalformedAnswer(error)


@dataclass(frozen=True)
class Asked:
    """What `ask_parsed` got: the parsed value, or None with the reason; and every answer it took (for tokens,
    cost and latency: the first, and the repair's when one was sent)."""

    value: object
    reason: str | None
    answers: tuple[Answer, ...]


def ask_parsed(client, messages: list[dict], parse, language: str, **options) -> Asked:
    """Ask, parse; when the answer is malformed, reject it from the cache (llm/cache.py: a later run asks again
    instead of failing on the same text forever) and send one repair request naming the problem. `options` go to
    `client.complete` (temperature, sample, ...). A reply without text fails at once, with its reason (no repair:
    a refusal or a tool call is not a formatting slip)."""
    try:
        answer = client.complete(messages, **options)
    except EmptyReply as error:
        return Asked(None, str(error), ())
    try:
        return Asked(parse(answer.text), None, (answer,))
    except MalformedAnswer as error:
        client.reject(answer, str(error))
        repair = messages + [{"role": "assistant", "content": answer.text},
                             {"role": "user", "content": REPAIR[language].format(error=error)}]
    try:
        second = client.complete(repair, **options)
    except EmptyReply as error:
        return Asked(None, str(error), (answer,))
    try:
        return Asked(parse(second.text), None, (answer, second))
    except MalformedAnswer as error:
        client.reject(second, str(error))
        return Asked(None, f"malformed JSON after one repair request: {error}", (answer, second))


def ask(client, messages: list[dict], parse, language: str, **options):
    """(parsed answer, None); or, when the answer and one repair request are both malformed, (None, reason)."""
    asked = ask_parsed(client, messages, parse, language, **options)
    return asked.value, asked.reason


class TooManyFailures(RagretrievalError):
    """Most requests of a run got no usable answer: exit non-zero rather than write numbers from what is left."""


def mostly_failed(failed: int, total: int) -> bool:
    """The one failure rule of every run (`answer`, judges, LLM questions and judgements, web evaluations and their
    workers): more than half of the items failed. At or below it the run completes, and says how many answered."""
    return total > 0 and 2 * failed > total


def failure_message(reasons: list[str], total: int, noun: str, failed: int | None = None) -> str:
    """``20 of 30 questions got no usable answer (first reasons: ...)``: how many failed (`failed`, default: one per
    reason) and up to three distinct reasons."""
    first = "; ".join(list(dict.fromkeys(reasons))[:3])
    count = len(reasons) if failed is None else failed
    return f"{count} of {total} {noun} got no usable answer (first reasons: {first})"


def check_failures(reasons: list[str], total: int, noun: str, kept: str, failed: int | None = None) -> None:
    """Raise `TooManyFailures` when more than half of `total` items failed (`failed`, default: one per reason), with
    the count and the first reasons."""
    count = len(reasons) if failed is None else failed
    if mostly_failed(count, total):
        raise TooManyFailures(f"{failure_message(reasons, total, noun, count)}; {kept}. Failed answers are not cached "
                              "as good: running the same command again asks for them again")


class GeneratedQuestion(BaseModel):
    """One question as the model writes it (field names of the ApeRAG question-set design, plus evidence)."""

    model_config = ConfigDict(extra="ignore")
    question_type: str
    question_text: str = Field(min_length=1)
    ground_truth: str = ""
    evidence: list[str] = Field(default_factory=list)

    @field_validator("question_type")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.strip().upper()

    @field_validator("evidence", mode="before")
    @classmethod
    def _one_quote_is_a_list(cls, value):
        return [value] if isinstance(value, str) else value


def parse_questions(text: str) -> list[GeneratedQuestion]:
    data = extract_json(text)
    if isinstance(data, dict):
        data = data.get("questions", [data] if "question_text" in data else None)
    if not isinstance(data, list):
        raise MalformedAnswer('expected a JSON list of questions, or an object with a "questions" list')
    questions = []
    for number, item in enumerate(data, start=1):
        try:
            questions.append(GeneratedQuestion.model_validate(item))
        except ValidationError as error:
            raise MalformedAnswer(f"question {number}, {describe(error, 'item')}") from None
    return questions


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")
    score: int = Field(ge=0, le=3)
    reasoning: str = ""


def parse_object(schema: type[BaseModel], text: str, shape: str):
    """The reply as one JSON object of `schema` (a list holding one object is taken too); `shape` is quoted back to
    the model in the repair request when the reply is not an object."""
    data = extract_json(text)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise MalformedAnswer(f"expected one JSON object {shape}")
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        raise MalformedAnswer(describe(error, "answer")) from None


def parse_judgement(text: str) -> Judgement:
    return parse_object(Judgement, text, '{"score": 0-3, "reasoning": "..."}')
