"""A client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...): chat completions (or, with
``text_completion``, plain ``/completions``), with a local answer cache, bounded retries and a running bill.

The API key is read from the environment when the client is made and handed only to the `openai` client; it is not a
field of `LLMSettings`, so nothing that records settings (manifests, reports, caches, logs) can carry it, and error
messages are scrubbed of it.

What is retried (work/retry.py: backoff with jitter, ``Retry-After`` honoured): 429, 5xx, timeouts, lost
connections, and a 200 answer that is not a completion (HTML from a proxy, a body that is not JSON, no choices).
Other 4xx answers (a bad key, an unknown model) are not: they will not change. docs/troubleshooting.md says more.

A completion without text (``content`` null, empty or white space; only a ``refusal``; only ``tool_calls``) is
`EmptyReply`: that one request fails with the reason (a question without an answer, a verdict that failed), it is
not retried (the same request gets the same reply) and never cached, so a later run asks again. An empty answer
cached by an older version is not served either.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

from pydantic import AliasChoices, ConfigDict, Field

from ..errors import RagretrievalError
from ..io.openai_calls import NO_SDK_RETRIES, describe, is_retryable, retry_after, retryable_status
from ..io.redact import public_url
from ..work.limits import Integer, Price, Retries, Timeout, Wait
from ..work.options import SettingsModel
from ..work.remote import RemoteCall
from ..work.retry import RetriesExhausted, with_retries
from ..work.stop import StopToken
from ..work.usage import TokenCount
from .budget import Budget
from .cache import Answer, AnswerCache, request_key
from .tokens import Calibration, body_tokens

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
SHOWN = 200  # characters of a bad answer shown in an error
# statuses that refuse one request (too long, ...) while others may pass; 401, 403, 404 would refuse every one
PER_REQUEST_STATUS = frozenset({400, 413, 422})
OUTPUT_TOKENS = 200  # expected answer length before the endpoint has answered anything (llm/tokens.py)


class LLMError(RagretrievalError, RuntimeError):
    """The endpoint could not answer: a bad key or model, or it kept failing after every retry. `status` is the HTTP
    status of an answer that was not retried (a 400 for one request, a 401 for every one), else None."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status

    @property
    def per_request(self) -> bool:
        """This request failed, others may pass (a context too long): the item fails, the run goes on."""
        return self.status in PER_REQUEST_STATUS


class EndpointFailed(LLMError):
    """The endpoint was asked and failed. `answered`: the HTTP status of its last answer, retried or not (None: it
    gave none); `kind`: what went wrong without one (``timeout``, ``APIConnectionError``, ``NotACompletion``). So a
    caller can word the failure for its own readers (the web app's dialogs)."""

    def __init__(self, message: str, status: int | None = None, answered: int | None = None, kind: str = ""):
        super().__init__(message, status)
        self.answered, self.kind = answered, kind


class EmptyReply(LLMError):
    """A completion without text (see the module's text): this request fails, the run goes on."""

    per_request = True


class _NotACompletion(Exception):
    """A 2xx answer that is not a completion: retried, like a 5xx."""


# an LLM's calls: a long answer from a busy endpoint takes a minute or two
LLM_CALLS = RemoteCall(timeout=120.0, retries=4, backoff=1.0, concurrency=4)


class LLMSettings(SettingsModel):
    """Everything about the endpoint except the key. Prices are per million tokens (input, output). Its remote
    call (timeout, max_retries, backoff) defaults to `LLM_CALLS`; ``sleep_time`` is read as ``backoff``. A bad value
    is a `SettingsError` naming the field."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    model: str = Field(DEFAULT_MODEL, min_length=1, description="Model name")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint [default: OpenAI's]")
    api_key_env: str = Field(DEFAULT_KEY_ENV, min_length=1, description="Variable holding the API key")
    timeout: Timeout = LLM_CALLS.field("timeout")
    max_retries: Retries = LLM_CALLS.field("retries")
    backoff: Wait = LLM_CALLS.field("backoff", validation_alias=AliasChoices("backoff", "sleep_time"))
    temperature: float = Field(0.0, ge=0, le=2, allow_inf_nan=False, description="Sampling temperature")
    max_tokens: Integer | None = Field(None, ge=1, description="Most tokens per answer")
    text_completion: bool = Field(False, description="/completions with one prompt instead of /chat/completions")
    price_in: Price = Field(0.0, description="Price per million input tokens")
    price_out: Price = Field(0.0, description="Price per million output tokens")

    @property
    def calls(self) -> RemoteCall:
        """Its remote call: timeout, retries and first wait given; requests at once are `LLM_CALLS`'."""
        return LLM_CALLS.but(timeout=self.timeout, retries=self.max_retries, backoff=self.backoff)

    def public(self) -> dict:
        """What may be written down: the endpoint without credentials, the model and what changes answers."""
        info = {"model": self.model, "base_url": public_url(self.base_url), "temperature": self.temperature}
        if self.max_tokens is not None:
            info["max_tokens"] = self.max_tokens
        if self.text_completion:
            info["api"] = "completions"
        return info

    @property
    def endpoint(self) -> str:
        return public_url(self.base_url) or "https://api.openai.com/v1"


@dataclass
class Usage(TokenCount):
    """The LLM client's requests, tokens and cost (work/usage.py, the one counter; cached answers cost nothing)."""

    def add(self, answer: Answer, settings: LLMSettings) -> None:
        if answer.cached:
            self.record_cached()
        else:
            self.record(answer.prompt_tokens, answer.completion_tokens, price(answer, settings))

    def as_dict(self) -> dict:
        return {"requests": self.requests, "cached": self.cached, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost": round(self.cost, 6)}


def price(answer: Answer, settings: LLMSettings) -> float:
    """What an answer costs (or cost, when it was asked) at the settings' prices."""
    return (answer.prompt_tokens * settings.price_in + answer.completion_tokens * settings.price_out) / 1e6


class ChatClient:
    """``complete(messages) -> Answer``, from the cache when the identical request was answered before."""

    def __init__(self, settings: LLMSettings, cache: AnswerCache | None = None, stop: StopToken | None = None,
                 budget: Budget | None = None, output_tokens: int = OUTPUT_TOKENS):
        import openai

        key = os.environ.get(settings.api_key_env, "")
        if not key:
            raise LLMError(f"no API key: set the environment variable {settings.api_key_env} (a local endpoint that "
                           f"ignores keys accepts any value, e.g. {settings.api_key_env}=local)")
        self._openai = openai
        self._secret = key
        self._client = openai.OpenAI(api_key=key, base_url=settings.base_url, timeout=settings.timeout,
                                     max_retries=NO_SDK_RETRIES)
        self.settings = settings
        self.cache = cache or AnswerCache()
        self.stop = stop
        self.usage = Usage()
        self.budget = budget
        self.calibration = Calibration(output_tokens)

    def request(self, messages: list[dict], temperature: float | None = None, max_tokens: int | None = None) -> dict:
        """The request body sent for `messages` (and what the cache key covers, with the endpoint)."""
        s = self.settings
        body: dict = {"model": s.model, "temperature": s.temperature if temperature is None else temperature}
        if (max_tokens or s.max_tokens) is not None:
            body["max_tokens"] = max_tokens or s.max_tokens
        if s.text_completion:
            body["prompt"] = "\n\n".join(m["content"] for m in messages)
        else:
            body["messages"] = messages
        return body

    def lookup(self, messages: list[dict], *, temperature: float | None = None, max_tokens: int | None = None,
               sample: int = 0) -> tuple[dict, Answer | None]:
        """The body `complete` would send for `messages` and the cached answer to it (None: it would be sent);
        nothing is sent or counted (``--dry-run``)."""
        body = self.request(messages, temperature, max_tokens)
        return body, self.cache.get(self._key(body, sample))

    def _key(self, body: dict, sample: int) -> str:
        return request_key({"endpoint": self.settings.endpoint, "body": body, "sample": sample})

    def estimate(self, body: dict, output_tokens: int | None = None) -> tuple[int, int, float]:
        """(input tokens, output tokens, dollars) a request is expected to take: the character rule scaled by what
        this endpoint reported so far; output: `output_tokens`, else the mean so far, capped by max_tokens."""
        tokens_in = self.calibration.input_tokens(body_tokens(body))
        expected, cap = output_tokens or self.calibration.output_tokens(), body.get("max_tokens")
        tokens_out = min(expected, cap) if cap else expected
        return tokens_in, tokens_out, (tokens_in * self.settings.price_in + tokens_out * self.settings.price_out) / 1e6

    def complete(self, messages: list[dict], *, temperature: float | None = None, max_tokens: int | None = None,
                 sample: int = 0) -> Answer:
        """The answer to `messages`; `sample` tells repeated samples of one request apart (they are cached apart).
        With a `budget`, a request that would pass it is not sent (`BudgetReached`)."""
        body, answer = self.lookup(messages, temperature=temperature, max_tokens=max_tokens, sample=sample)
        if answer is not None and not answer.text.strip():  # cached as good by a version that took empty answers
            answer = None
        if answer is None:
            key = self._key(body, sample)
            held = self.estimate(body)[2] if self.budget is not None else 0.0
            if self.budget is not None:
                self.budget.hold(held, f"model {self.settings.model}")
            try:
                answer = self._ask(body)
            except BaseException:
                if self.budget is not None:
                    self.budget.release(held)
                raise
            answer = Answer(answer.text, answer.prompt_tokens, answer.completion_tokens, False, answer.latency, key)
            if self.budget is not None:
                self.budget.settle(held, price(answer, self.settings))
            self.calibration.add(body_tokens(body), answer.prompt_tokens, answer.completion_tokens)
            self.cache.put(key, self.settings.model, answer)
        self.usage.add(answer, self.settings)
        return answer

    def reject(self, answer: Answer, reason: str) -> None:
        """The answer did not parse or validate: never serve it from the cache again."""
        if answer.key:
            self.cache.reject(answer.key, reason)

    def _ask(self, body: dict) -> Answer:
        oa = self._openai

        def attempt() -> Answer:
            started = time.perf_counter()
            try:
                if self.settings.text_completion:
                    response = self._client.completions.create(**body)
                else:
                    response = self._client.chat.completions.create(**body)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise _NotACompletion(f"the answer is not JSON: {getattr(error, 'doc', '')[:SHOWN]!r}") from None
            except oa.APIStatusError as error:
                if retryable_status(error):
                    raise
                raise EndpointFailed(f"{self._where()}: {self._describe(error)} (not retried)",
                                     error.status_code, error.status_code) from None
            try:
                return _answer(response, time.perf_counter() - started)
            except EmptyReply as error:
                raise EmptyReply(f"{self._where()}: {error}") from None

        try:
            return with_retries(attempt, **self.settings.calls.retry_args(),
                                retryable=lambda error: is_retryable(error, oa, (_NotACompletion,)),
                                retry_after=retry_after, stop=self.stop)
        except RetriesExhausted as error:
            last = error.last
            kind = "timeout" if isinstance(last, oa.APITimeoutError) else type(last).__name__.lstrip("_")
            raise EndpointFailed(f"{self._where()}: gave up after {error.attempts} attempts; last error: "
                                 f"{self._describe(last)}", answered=getattr(last, "status_code", None),
                                 kind=kind) from None

    def _describe(self, error) -> str:
        return describe(error, self._openai, self._secret)

    def _where(self) -> str:
        return f"{self.settings.endpoint} (model {self.settings.model})"


def _answer(response, latency: float) -> Answer:
    """The text and usage of a completion; anything else is `_NotACompletion` (retried)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        shown = response if isinstance(response, str) else repr(response)
        raise _NotACompletion(f"the answer is not a completion: {shown[:SHOWN]!r}")
    first = choices[0]
    message = getattr(first, "message", None)
    text = message.content if message is not None else getattr(first, "text", None)
    if not isinstance(text, str) or not text.strip():
        raise EmptyReply(why_empty(message, text))
    usage = getattr(response, "usage", None)
    return Answer(
        text=text,
        prompt_tokens=(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0,
        completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) if usage else 0,
        latency=latency,
    )


def why_empty(message, text) -> str:
    """Why a completion has no text, in the words of its fields."""
    refusal = getattr(message, "refusal", None)
    if isinstance(refusal, str) and refusal.strip():
        return f"the model refused: {refusal.strip()[:SHOWN]!r}"
    calls = getattr(message, "tool_calls", None) or getattr(message, "function_call", None)
    if calls:
        calls = calls if isinstance(calls, list) else [calls]
        names = [getattr(getattr(c, "function", c), "name", None) or "?" for c in calls]
        return f"the reply holds only tool calls ({', '.join(names)}), no text"
    if text is None:
        return "the reply's content is null"
    return "the reply's content is empty" if text == "" else "the reply's content is only white space"
