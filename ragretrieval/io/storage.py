"""Local files that keep work between runs (the embedding cache, the LLM answer cache and the probe fingerprints in
SQLite; the journals of answers and verdicts): a failure to open, read or write one (a full disk, a read-only
folder, a damaged file) is one `StorageError` naming the file and what to do, not a ``sqlite3.OperationalError``
traceback or an ``OSError`` that names no file.

Why a cache failure stops the command rather than running on without the cache: an answer or a vector that cannot
be stored would be paid for again on every re-run, and a full disk fails the journals and reports next anyway.
What was committed before the failure stays (each batch, each answer is its own transaction), so a re-run once
there is room continues where it stopped.
"""

from __future__ import annotations

import errno
import functools
import sqlite3
from contextlib import contextmanager
from pathlib import Path

from ..errors import RagretrievalError

CACHE_VARIABLE = "RAGRETRIEVAL_CACHE_DIR"


class StorageError(RagretrievalError):
    """A local database file that cannot be opened, read or written."""


def advice(error: Exception) -> str:
    text = str(error).lower()
    if "full" in text or "disk i/o" in text or "no space" in text or getattr(error, "errno", None) == errno.ENOSPC:
        return (f"free space on its disk, or set ${CACHE_VARIABLE} to a folder on another one; what was stored "
                "before is kept, so a re-run continues")
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        return f"make its folder writable, or set ${CACHE_VARIABLE} to a writable folder"
    if "not a database" in text or "malformed" in text:
        return "the file is damaged: delete it (a cache can always be deleted; it costs time, never correctness)"
    return f"check the file, or set ${CACHE_VARIABLE} to another folder"


def storage_error(path, what: str, error: Exception) -> StorageError:
    cause = error.strerror if isinstance(error, OSError) and error.strerror else error
    return StorageError(f"{Path(path)}: cannot use the {what} ({cause}): {advice(error)}")


@contextmanager
def sqlite_errors(path, what: str):
    """Turn any SQLite error inside the block into a `StorageError` naming `path` (the `what`: "embedding cache")."""
    try:
        yield
    except sqlite3.Error as error:
        raise storage_error(path, what, error) from None


def guarded(what: str):
    """Decorator for the methods of a class whose ``path`` is its SQLite file (set before the file is opened):
    their errors name the file."""

    def wrap(method):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as error:
                raise storage_error(getattr(self, "path", "?"), what, error) from None

        return call

    return wrap
