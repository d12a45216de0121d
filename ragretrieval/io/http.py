"""JSON over HTTP with retries: one function for every service ragretrieval calls without an SDK (retrieval
services, rerank APIs, embeddings servers).

Retried (with backoff, and ``Retry-After`` honoured): connection errors, timeouts, HTTP 408/425/429/5xx, and a 2xx
answer whose body is not JSON (a proxy's HTML page, a truncated body). Not retried: other 4xx answers, which will
not change. Every error names the endpoint (``where``) and shows the first bytes of the answer.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ..errors import RagretrievalError
from ..work.remote import RemoteCall
from ..work.retry import RetriesExhausted, parse_retry_after, with_retries
from ..work.stop import StopToken

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
SHOWN_BYTES = 200


class HttpError(RagretrievalError):
    """A service that answered with an error, or not at all, after every retry."""


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def shown(payload: bytes) -> str:
    """The first bytes of a body, readable in one line."""
    text = payload[:SHOWN_BYTES].decode("utf-8", "replace")
    return repr(text) + (" ..." if len(payload) > SHOWN_BYTES else "")


def request_json(request: urllib.request.Request, *, where: str, timeout: float, retries: int, backoff: float,
                 stop: StopToken | None = None) -> Any:
    """The parsed JSON answer to `request`; `HttpError` when it fails for good."""

    def attempt():
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read()[:300].decode("utf-8", "replace")
            message = f"HTTP {error.code} {error.reason}: {detail}"
            if error.code in RETRY_STATUS:
                raise _Retryable(message, parse_retry_after(error.headers.get("Retry-After"))) from None
            raise HttpError(f"{where}: {message}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as error:
            raise _Retryable(f"no answer: {getattr(error, 'reason', error)}") from None
        try:
            return json.loads(payload)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Retryable(f"the answer is not JSON: {shown(payload)}") from None

    try:
        return with_retries(attempt, retries=retries, backoff=backoff, retryable=lambda e: isinstance(e, _Retryable),
                            retry_after=lambda e: getattr(e, "retry_after", None), stop=stop)
    except RetriesExhausted as error:
        tries = f" after {error.attempts} attempts" if error.attempts > 1 else ""
        raise HttpError(f"{where}: {error.last}{tries}") from None


def post_json(url: str, body: Any, calls: RemoteCall, *, headers: dict | None = None, where: str | None = None,
              stop: StopToken | None = None) -> Any:
    """POST `body` as JSON with the caller's timeout and retries (`calls`: its settings' `RemoteCall`)."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json", **(headers or {})})
    return request_json(request, where=where or f"POST {url}", timeout=calls.timeout, **calls.retry_args(),
                        stop=stop)
