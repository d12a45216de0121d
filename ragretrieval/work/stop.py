"""`StopToken`: a request to stop at the next boundary, from another thread (a pause button, a signal handler).

Work checks the token between units (an embedding batch, an LLM request, a question, a sweep cell) and raises
`Stopped`; everything finished before is already in a cache, journal or the runs store, so starting the same work
again resumes it.
"""

from __future__ import annotations

import threading

from ..errors import RagretrievalError


class Stopped(RagretrievalError):
    """The work stopped because a stop was requested; finished units are kept."""

    exit_code = 130


class StopToken:
    def __init__(self):
        self._event = threading.Event()
        self.reason = "stop requested"

    def request(self, reason: str = "stop requested") -> None:
        self.reason = reason
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise `Stopped` if a stop was requested."""
        if self._event.is_set():
            raise Stopped(self.reason)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early on a stop request; True when a stop was requested."""
        return self._event.wait(seconds)


def check(stop: StopToken | None) -> None:
    if stop is not None:
        stop.check()
