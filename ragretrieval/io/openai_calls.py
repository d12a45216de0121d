"""What every call through the `openai` client shares (chat completions in llm/, embeddings in embedders/): which
errors are worth retrying, the wait a server asks for, and an error line without the key.

Retried: 429, 5xx (and the other statuses of `RETRY_STATUS`), timeouts, lost connections, and whatever the caller
adds (a 200 answer that is not what was asked). Not retried: other 4xx answers (a bad key, an unknown model), which
will not change.
"""

from __future__ import annotations

from ..work.retry import parse_retry_after
from .http import RETRY_STATUS

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
NO_SDK_RETRIES = 0  # the openai client must not retry: work/retry.py does, once, with the caller's RemoteCall


def retryable_status(error) -> bool:
    status = getattr(error, "status_code", None)
    return status is not None and (status >= 500 or status in RETRY_STATUS)


def is_retryable(error, openai_module, extra: tuple = ()) -> bool:
    oa = openai_module
    transient = (oa.RateLimitError, oa.InternalServerError, oa.APITimeoutError, oa.APIConnectionError, *extra)
    return isinstance(error, transient) or (isinstance(error, oa.APIStatusError) and retryable_status(error))


def retry_after(error) -> float | None:
    """The server's ``Retry-After`` in seconds, when it sent one."""
    response = getattr(error, "response", None)
    return parse_retry_after(response.headers.get("retry-after")) if response is not None else None


def describe(error, openai_module, secret: str) -> str:
    """One line about a failed call, with the key replaced by ``***``."""
    status = getattr(error, "status_code", None)
    kind = "timeout" if isinstance(error, openai_module.APITimeoutError) else type(error).__name__.lstrip("_")
    text = f"HTTP {status}: {error.message}" if status else f"{kind}: {error}"
    return text.replace(secret, "***") if secret else text
