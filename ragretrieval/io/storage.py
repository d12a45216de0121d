"""Local files that keep work between runs (the embedding cache, the LLM answer cache and the probe fingerprints in
SQLite; the journals of answers and verdicts), and every file a command writes (reports, datasets, exports, logs): a
failure to open, read or write one (a full disk, a read-only folder, a damaged file) is one `StorageError` naming
the file and what to do, not a ``sqlite3.OperationalError`` traceback or an ``OSError`` that names no file.

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
LOCK_WAIT = 30.0  # seconds a local SQLite file may stay locked by another writer before the write fails
# what a disk that takes no more says (full, over quota, file too large, read-only), wherever in a write it comes
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


class StorageError(RagretrievalError):
    """A local file (a database, a journal, a file a command writes) that cannot be opened, read or written."""


def _full(error: Exception) -> bool:
    text = str(error).lower()
    return "full" in text or "disk i/o" in text or "no space" in text or getattr(error, "errno", None) in (
        errno.ENOSPC, errno.EDQUOT)


def _not_writable(error: Exception) -> bool:
    text = str(error).lower()
    return ("readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text
            or getattr(error, "errno", None) in (errno.EROFS, errno.EACCES, errno.EPERM))


def advice(error: Exception, elsewhere: str | None = None) -> str:
    """What to do about `error`; `elsewhere` says how to put the file on another disk where that is not
    ``$RAGRETRIEVAL_CACHE_DIR`` (a journal kept beside the file a command writes moves with that file)."""
    if _full(error):
        return (f"free space on its disk, or {elsewhere or f'set ${CACHE_VARIABLE} to a folder on another one'}; "
                "what was stored before is kept, so a re-run continues")
    if _not_writable(error):
        return f"make its folder writable, or {elsewhere or f'set ${CACHE_VARIABLE} to a writable folder'}"
    if "not a database" in str(error).lower() or "malformed" in str(error).lower():
        return "the file is damaged: delete it (a cache can always be deleted; it costs time, never correctness)"
    return f"check the file, or {elsewhere or f'set ${CACHE_VARIABLE} to another folder'}"


def _cause(error: Exception):
    return error.strerror if isinstance(error, OSError) and error.strerror else error


def storage_error(path, what: str, error: Exception, elsewhere: str | None = None) -> StorageError:
    return StorageError(f"{Path(path)}: cannot use the {what} ({_cause(error)}): {advice(error, elsewhere)}")


class UnwritablePathError(StorageError):
    """A file asked to be written where no file can be (a folder of that name, a file where a folder must be): the
    user must name another path."""

    exit_code = 2


def write_error(path, error: OSError, kept: str = "nothing was replaced: a file already there is as it was"
                ) -> StorageError:
    """A file a command writes (a report, a dataset file, an export, a log) that could not be written: its path, the
    system's reason, what to do, and `kept` (what is left of the file)."""
    kind = StorageError
    if _full(error):
        do = "free space on its disk, or write it to another disk"
    elif _not_writable(error):
        do = "make its folder writable, or write it to another folder"
    elif getattr(error, "errno", None) in (errno.ENOTDIR, errno.EISDIR, errno.ENOENT, errno.ENAMETOOLONG):
        do, kind = "name another path", UnwritablePathError
    else:
        do = "check the folder, or write it to another one"
    return kind(f"{Path(path)}: cannot write it ({_cause(error)}): {do}; {kept}")


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
