"""``http:<url>``: a rerank API, one request per question (``--rerank-format``):

- ``cohere`` (Cohere, Jina, Voyage, Infinity, vLLM's ``/v1/rerank``): ``{"model", "query", "documents", "top_n"}``
  answered by ``{"results": [{"index", "relevance_score"}, ...]}``;
- ``tei`` (Hugging Face text-embeddings-inference ``/rerank``): ``{"query", "texts"}`` answered by
  ``[{"index", "score"}, ...]``.

Requests are retried on connection errors, timeouts, 429 and 5xx (io/http.py, ``Retry-After`` honoured). The key, when
the API needs one, is read from the variable ``--rerank-api-key-env`` names and sent as a Bearer token only.
"""

from __future__ import annotations

import os
from typing import Sequence
from urllib.parse import urlsplit

import numpy as np

from ...io.http import post_json
from ...work.options import SettingsError
from .base import PerQuestion, RerankError


class HttpReranker(PerQuestion):
    def __init__(self, name: str, settings, context):
        super().__init__(context.progress, context.stop)
        url = name.removeprefix("http:") if name.startswith("http:http") else name
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise RerankError(f"{name!r}: expected http:<url>, e.g. http:http://127.0.0.1:8080/rerank")
        self.url, self.settings = url, settings
        self.concurrency = settings.concurrency
        self.identity = f"http:{url}:format={settings.format}" + (f":model={settings.model}" if settings.model else "")

    def _headers(self) -> dict:
        variable = self.settings.api_key_env
        if not variable:
            return {}
        if not os.environ.get(variable):
            raise SettingsError(f"rerank.api_key_env names {variable}, which is not set in the environment",
                                ["rerank.api_key_env"])
        return {"Authorization": f"Bearer {os.environ[variable]}"}

    def score(self, question: str, passages: Sequence[str]) -> np.ndarray:
        if self.settings.format == "tei":
            body = {"query": question, "texts": list(passages), "return_text": False}
        else:
            body = {"query": question, "documents": list(passages), "top_n": len(passages),
                    **({"model": self.settings.model} if self.settings.model else {})}
        answer = post_json(self.url, body, self.settings.calls, headers=self._headers(), stop=self.stop)
        return read_scores(answer, len(passages), self.settings.format)


def read_scores(answer, n: int, format: str) -> np.ndarray:
    """Scores in passage order from a rerank answer; anything else is a `RerankError` saying what was expected."""
    items, key = (answer, "score") if format == "tei" else (
        answer.get("results") if isinstance(answer, dict) else None, "relevance_score")
    shape = "a list of {index, score}" if format == "tei" else "{results: [{index, relevance_score}]}"
    if not isinstance(items, list):
        raise RerankError(f"the answer is not {shape}: {str(answer)[:200]!r}")
    scores = np.full(n, np.nan, dtype=np.float32)
    for item in items:
        index, value = (item.get("index"), item.get(key)) if isinstance(item, dict) else (None, None)
        if not isinstance(index, int) or not 0 <= index < n or not isinstance(value, (int, float)):
            raise RerankError(f"the answer is not {shape}: found {str(item)[:200]!r}")
        scores[index] = value
    if np.isnan(scores).any():
        raise RerankError(f"the answer scores {int((~np.isnan(scores)).sum())} of {n} passages")
    return scores
