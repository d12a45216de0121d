"""One retry loop for every remote call (chat completions, embeddings APIs, retrieval and rerank services).

Exponential backoff with jitter (``backoff * 2**attempt``, times a factor in [0.5, 1]), capped at `max_wait`; a server's
``Retry-After`` replaces the computed wait (capped too). Errors the caller calls permanent are raised at once; a
retryable error that lasts past the last attempt becomes `RetriesExhausted`, carrying the attempts and the last error.
"""

from __future__ import annotations

import random
import time
from typing import Callable, TypeVar

from .stop import StopToken

T = TypeVar("T")
MAX_WAIT = 30.0


class RetriesExhausted(Exception):
    """Every attempt failed with a retryable error; `last` is the final one."""

    def __init__(self, attempts: int, last: BaseException):
        super().__init__(f"gave up after {attempts} attempts; last error: {last}")
        self.attempts, self.last = attempts, last


def backoff_wait(attempt: int, backoff: float, max_wait: float = MAX_WAIT, jitter: bool = True) -> float:
    wait = min(backoff * 2**attempt, max_wait)
    return wait * (0.5 + random.random() / 2) if jitter else wait


def with_retries(call: Callable[[], T], *, retries: int, backoff: float,
                 retryable: Callable[[BaseException], bool],
                 retry_after: Callable[[BaseException], float | None] = lambda error: None,
                 max_wait: float = MAX_WAIT, stop: StopToken | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> T:
    """`call()`, tried up to ``retries + 1`` times while it raises errors that `retryable` accepts."""
    for attempt in range(retries + 1):
        if stop is not None:
            stop.check()
        try:
            return call()
        except Exception as error:
            if not retryable(error):
                raise
            if attempt == retries:
                raise RetriesExhausted(attempt + 1, error) from error
            hinted = retry_after(error)
            wait = min(hinted, max_wait) if hinted is not None else backoff_wait(attempt, backoff, max_wait)
            if stop is not None:
                if stop.wait(wait):
                    stop.check()
            else:
                sleep(wait)
    raise AssertionError("unreachable")


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (HTTP dates are rare on APIs and ignored)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
