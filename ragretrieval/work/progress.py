"""The `Progress` protocol: stages with a size, steps within a stage, and notes.

A stage is one countable piece of work ("embedding chunks", 1,695 texts); `advance` moves it on and may say how it is
going ("tokens 12,345, $0.0042"); `note` is a line worth keeping ("index loaded from .index"). Starting a stage ends
the one before. Library code takes ``progress: Progress | None`` and calls `as_progress` once.
"""

from __future__ import annotations

import sys
from typing import Protocol, runtime_checkable


@runtime_checkable
class Progress(Protocol):
    def stage(self, name: str, total: int | None = None, unit: str = "item") -> None: ...

    def advance(self, n: int = 1, status: str | None = None) -> None: ...

    def note(self, message: str) -> None: ...


class Silent:
    """Follows nothing: for library callers that want no output."""

    def stage(self, name: str, total: int | None = None, unit: str = "item") -> None:
        pass

    def advance(self, n: int = 1, status: str | None = None) -> None:
        pass

    def note(self, message: str) -> None:
        pass


class RecordingProgress(Silent):
    """Keeps what it is told: stages as [name, total, done], notes in order (for tests, logs and servers)."""

    def __init__(self):
        self.stages: list[list] = []
        self.notes: list[str] = []

    def stage(self, name: str, total: int | None = None, unit: str = "item") -> None:
        self.stages.append([name, total, 0])

    def advance(self, n: int = 1, status: str | None = None) -> None:
        if self.stages:
            self.stages[-1][2] += n

    def note(self, message: str) -> None:
        self.notes.append(message)


class TerminalProgress:
    """tqdm bars on standard error, one per stage; notes are printed there too, with or without bars."""

    def __init__(self, bars: bool = True, stream=None):
        self.bars = bars
        self.stream = stream or sys.stderr
        self._bar = None

    def stage(self, name: str, total: int | None = None, unit: str = "item") -> None:
        self.close()
        if self.bars:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=name, unit=unit, file=self.stream)

    def advance(self, n: int = 1, status: str | None = None) -> None:
        if self._bar is not None:
            self._bar.update(n)
            if status:
                self._bar.set_postfix_str(status, refresh=False)

    def note(self, message: str) -> None:
        if self._bar is not None:
            self._bar.write(message, file=self.stream)
        else:
            print(message, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def as_progress(progress) -> Progress:
    """None or False: `Silent`; True: `TerminalProgress` (what ``progress=True`` meant before 0.2); else itself."""
    if progress is None or progress is False:
        return Silent()
    if progress is True:
        return TerminalProgress()
    if not isinstance(progress, Progress):
        raise TypeError(f"progress must follow the Progress protocol (stage, advance, note), got {progress!r}")
    return progress
