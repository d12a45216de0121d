"""A chat-completions client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...), with a local answer
cache, bounded retries and a running bill.

The API key is read from the environment when the client is made and handed only to the `openai` client; it is not a
field of `LLMSettings`, so nothing that records settings (manifests, reports, caches, logs) can carry it, and error
messages are scrubbed of it.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from .cache import Answer, AnswerCache, request_key

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_BACKOFF = 30.0  # seconds; also caps a server's Retry-After


class LLMError(RuntimeError):
    """The endpoint could not answer: a bad key or model, or it kept failing after every retry."""


@dataclass(frozen=True)
class LLMSettings:
    """Everything about the endpoint except the key. Prices are per million tokens (input, output)."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0
    max_retries: int = 4
    backoff: float = 1.0  # first wait; doubles on each retry, with jitter
    temperature: float = 0.0
    price_in: float = 0.0
    price_out: float = 0.0

    def public(self) -> dict:
        """What may be written down: the endpoint without user info or query string, and the model."""
        url = None
        if self.base_url:
            parts = urlsplit(self.base_url)
            host = parts.hostname or ""
            host = f"[{host}]" if ":" in host else host
            url = urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path, "", ""))
        return {"model": self.model, "base_url": url, "temperature": self.temperature}


@dataclass
class Usage:
    """Tokens paid for (answers served from the cache cost nothing) and what they cost."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    cached: int = 0
    cost: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, answer: Answer, settings: LLMSettings) -> None:
        with self._lock:
            if answer.cached:
                self.cached += 1
                return
            self.requests += 1
            self.prompt_tokens += answer.prompt_tokens
            self.completion_tokens += answer.completion_tokens
            paid = answer.prompt_tokens * settings.price_in + answer.completion_tokens * settings.price_out
            self.cost += paid / 1e6

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict:
        return {"requests": self.requests, "cached": self.cached, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost": round(self.cost, 6)}


class ChatClient:
    """``complete(messages) -> Answer``, from the cache when the identical request was answered before."""

    def __init__(self, settings: LLMSettings, cache: AnswerCache | None = None):
        try:
            import openai
        except ImportError:
            raise LLMError("the LLM features need the openai package: pip install 'ragretrieval[llm]'") from None
        key = os.environ.get(settings.api_key_env, "")
        if not key:
            raise LLMError(f"no API key: set the environment variable {settings.api_key_env} (a local endpoint that "
                           f"ignores keys accepts any value, e.g. {settings.api_key_env}=local)")
        self._openai = openai
        self._secret = key
        self._client = openai.OpenAI(api_key=key, base_url=settings.base_url, timeout=settings.timeout, max_retries=0)
        self.settings = settings
        self.cache = cache or AnswerCache()
        self.usage = Usage()

    def complete(self, messages: list[dict]) -> Answer:
        request = {"model": self.settings.model, "messages": messages, "temperature": self.settings.temperature}
        key = request_key(request)
        answer = self.cache.get(key)
        if answer is None:
            answer = self._ask(request)
            self.cache.put(key, self.settings.model, answer)
        self.usage.add(answer, self.settings)
        return answer

    def _ask(self, request: dict) -> Answer:
        oa = self._openai
        for attempt in range(self.settings.max_retries + 1):
            try:
                response = self._client.chat.completions.create(**request)
            except (oa.RateLimitError, oa.InternalServerError, oa.APITimeoutError, oa.APIConnectionError) as error:
                problem, wait = self._describe(error), self._wait(attempt, error)
            except oa.APIStatusError as error:
                if error.status_code < 500:
                    raise LLMError(f"{self._where()}: {self._describe(error)} (not retried)") from None
                problem, wait = self._describe(error), self._wait(attempt, error)
            else:
                return _answer(response)
            if attempt < self.settings.max_retries:
                time.sleep(wait)
        attempts = self.settings.max_retries + 1
        raise LLMError(f"{self._where()}: gave up after {attempts} attempts; last error: {problem}")

    def _wait(self, attempt: int, error) -> float:
        response = getattr(error, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            if retry_after is not None:
                return min(float(retry_after), MAX_BACKOFF)
        except ValueError:
            pass
        return min(self.settings.backoff * 2**attempt, MAX_BACKOFF) * (0.5 + random.random() / 2)

    def _describe(self, error) -> str:
        status = getattr(error, "status_code", None)
        kind = "timeout" if isinstance(error, self._openai.APITimeoutError) else type(error).__name__
        text = f"HTTP {status}: {error.message}" if status else f"{kind}: {error}"
        return text.replace(self._secret, "***")

    def _where(self) -> str:
        public = self.settings.public()
        return f"{public['base_url'] or 'api.openai.com'} (model {public['model']})"


def _answer(response) -> Answer:
    if not response.choices:
        raise LLMError("the endpoint answered without any choice")
    usage = response.usage
    return Answer(
        text=response.choices[0].message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0 if usage else 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0 if usage else 0,
    )
