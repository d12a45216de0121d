"""Atomic file writes: write a temp file beside the target, then rename it over the target.

A reader sees the old file or the new one, never half of one; an interrupted write leaves the old file as it was.

A write the disk refuses (full, over quota, read-only) is one `StorageError` naming the target file, not an
``OSError`` that names none. The temp file is ``.<name>.<random>.tmp``; a process killed mid-write (kill -9, a power
cut) cannot remove its own, so the next write of the same target removes those left over: a temp file is held under
an advisory lock while it is written, and one that nobody holds belongs to a writer that died. (Where the system has
no ``fcntl``, leftovers are not removed.)
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .storage import WRITE_ERRNOS, write_error

try:
    import fcntl
except ImportError:  # Windows: no advisory locks, so no way to tell a live writer's temp file from a dead one's
    fcntl = None

TEMP_SUFFIX = ".tmp"
_RANDOM = re.compile(r"[a-z0-9_]{8}")  # what tempfile.mkstemp puts between prefix and suffix


@contextmanager
def atomic_writer(path, binary: bool = False):
    """``with atomic_writer("out.json") as f: f.write(...)``: the file appears only when the block succeeds."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    except OSError as error:
        raise write_error(path, error) from None
    lock = _hold(tmp)
    in_block = False
    try:
        os.chmod(tmp, _mode_for(path))  # mkstemp makes 0600 files; keep the mode a plain open() would give
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as f:
            in_block = True
            yield f
            in_block = False
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as error:
        _discard(tmp)
        if not in_block or error.errno in WRITE_ERRNOS:  # the disk refused the write: name the file, not the temp
            raise write_error(path, error) from None
        raise  # the block's own error (a file it reads): as it was
    except BaseException:
        _discard(tmp)
        raise
    finally:
        if lock is not None:
            os.close(lock)


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _hold(tmp: str) -> int | None:
    """An advisory lock on the temp file for as long as it is written (released by the system if the process dies);
    on a descriptor of its own, so that it is still held between closing the file and renaming it."""
    if fcntl is None:
        return None
    fd = os.open(tmp, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def remove_leftovers(path) -> list[Path]:
    """Remove the temp files of `path` that writers killed mid-write left (``.<name>.<random>.tmp`` beside it, no
    longer locked by a live writer); returns what was removed. Nothing else is touched."""
    path = Path(path)
    if fcntl is None or not path.parent.is_dir():
        return []
    prefix = f".{path.name}."
    removed = []
    for entry in os.scandir(path.parent):
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)
                and _RANDOM.fullmatch(name[len(prefix):-len(TEMP_SUFFIX)]) and entry.is_file(follow_symlinks=False)):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live writer holds it
        else:
            _discard(entry.path)
            removed.append(Path(entry.path))
        finally:
            os.close(fd)
    return removed


def _mode_for(path: Path) -> int:
    if path.exists():
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_text_atomic(path, text: str) -> None:
    with atomic_writer(path) as f:
        f.write(text)
