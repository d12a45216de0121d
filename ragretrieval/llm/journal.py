"""An append-only JSON Lines journal of finished items, so an interrupted run resumes where it stopped.

Each item is one line, written and fsynced as soon as it is answered. A run killed mid-write leaves at most a torn
last line, which `load` drops (that item is simply done again); a bad line anywhere else is corruption and an error.
The final result is written elsewhere atomically; the journal is removed only after that succeeds.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import RagretrievalError
from ..io.storage import storage_error

Item = TypeVar("Item", bound=BaseModel)


class JournalError(RagretrievalError, ValueError):
    """A journal line that is not a valid item (other than a torn last line)."""


class Journal(Generic[Item]):
    """`elsewhere`: how the journal is put on another disk when its own is full, where that is not
    ``$RAGRETRIEVAL_CACHE_DIR`` (a journal kept beside the file a command writes moves with that file)."""

    def __init__(self, path, model: type[Item], elsewhere: str | None = None):
        self.path = Path(path)
        self.model = model
        self.elsewhere = elsewhere
        self._lock = threading.Lock()

    def load(self) -> list[Item]:
        if not self.path.is_file():
            return []
        lines = self.path.read_text(encoding="utf-8").split("\n")
        complete = lines[:-1]  # text after the last newline is a torn write, or empty
        items = []
        for number, line in enumerate(complete, start=1):
            if not line.strip():
                continue
            try:
                items.append(self.model.model_validate_json(line))
            except ValidationError as error:
                raise JournalError(f"{self.path}:{number}: not a journal entry ({error.errors()[0]['msg']}); "
                                   "delete the file to start over") from None
        if lines[-1].strip():
            self._truncate(sum(len(line.encode("utf-8")) + 1 for line in complete))
        return items

    def _truncate(self, size: int) -> None:
        with self.path.open("r+b") as f:
            f.truncate(size)

    def append(self, item: Item) -> None:
        line = item.model_dump_json() + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                with self.path.open("a", encoding="utf-8", newline="\n") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as error:  # a full disk: a torn last line at most, which `load` drops
                raise storage_error(self.path, "journal", error, self.elsewhere) from None

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
