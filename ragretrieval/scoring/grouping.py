"""Group an interleaved run on disk: its lines are dealt into temporary files by a hash of their query id, so all the
lines of a query land in one file, and each file is small enough to be read as one batch (`stream.py`).

Dealing by hash is all grouping needs (the order of queries does not matter, and a file keeps its lines in the order
of the run, so each query's lines too): one pass that reads the run and writes it once, no sort and no merge. Every
line is checked as it is dealt (fields, score), so errors name the line of the run; the files are removed afterwards,
also when scoring fails or is interrupted.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections import deque
from pathlib import Path

import numpy as np

from .scan import LineError, TrecFormatError, blocks, fields, is_gzip, newlines_in, numbers, tokens
from .trec import RUN_LAYOUT, parse_blocks
from .types import THREADS, ScoringError
from .vocabulary import hash_rows

GZIP_RATIO = 10  # a gzip run is taken to hold this many times its size in text (run files compress 5-10 times)
MAX_FILES = 1024  # temporary files open at once


def file_count(path, batch_bytes: int) -> int:
    """How many files to deal the run into: about one batch of text each."""
    size = os.path.getsize(path) * (GZIP_RATIO if is_gzip(path) else 1)
    return max(1, min(MAX_FILES, math.ceil(size / batch_bytes)))


def grouped_batches(path, pool, columns, batch_bytes: int):
    """Yield (batch, tag) for each temporary file: the file's blocks parsed (`Parsed`, one list: whole queries), and
    the run tag of the run's last line."""
    count = file_count(path, batch_bytes)
    with tempfile.TemporaryDirectory(prefix="ragretrieval-grouping-") as folder:
        try:
            paths, tag = _deal(path, Path(folder), count, pool)
        except OSError as error:  # a full disk, most likely
            raise ScoringError(f"{path}: could not group the interleaved run in {folder} ({error.strerror or error}); "
                               f"set TMPDIR to a folder with room for a copy of the run, or group it first: "
                               f"LC_ALL=C sort -k1,1 -s {path} > grouped.txt") from None
        for part in paths:
            if part.stat().st_size:
                yield list(parse_blocks(part, RUN_LAYOUT, columns, pool)), tag


def _deal(path, folder: Path, count: int, pool):
    """Deal the lines of `path` into `count` files in `folder`; return their paths and the last line's tag."""
    paths = [folder / f"{i}.txt" for i in range(count)]
    files = [open(p, "wb") for p in paths]
    tag, first_line = None, 1
    try:
        pending: deque = deque()

        def write(future) -> None:
            nonlocal first_line, tag
            try:
                n_lines, parts, last_tag = future.result()
            except LineError as error:
                raise TrecFormatError(f"{path}:{first_line + error.line}: {error.detail}") from None
            first_line += n_lines
            tag = last_tag if last_tag is not None else tag
            for i, data in parts:
                files[i].write(data)

        for buffer, size in blocks(path, buffers=2 * THREADS + 1):
            pending.append(pool.submit(_deal_block, buffer, size, count))
            if len(pending) == 2 * THREADS:
                write(pending.popleft())
        while pending:
            write(pending.popleft())
    finally:
        for file in files:
            file.close()
    return paths, tag


def _deal_block(buffer, size: int, count: int):
    """(lines in the block, [(file, bytes of its lines in block order)], tag of the block's last line); the lines
    are checked as the reader checks them."""
    layout = RUN_LAYOUT
    newlines = newlines_in(buffer, size)
    found = fields(buffer, newlines, None, len(layout.fields.split()), layout.fields)
    lines = found.lines
    at = layout.number_field
    numbers(buffer, found.starts(at), found.ends(at), layout.dtype, layout.message, lambda i: int(lines[i]))
    if len(lines) == 0:
        return len(newlines), [], None
    assert layout.tag_field is not None  # the run layout keeps its tag field
    tag = bytes(buffer[found.starts(layout.tag_field)[-1] : found.ends(layout.tag_field)[-1]])
    query = hash_rows(tokens(buffer, found.starts(0), found.ends(0)))
    target = ((query >> np.uint64(32)) % np.uint64(count)).astype(np.int64)
    starts = np.concatenate(([0], newlines[:-1] + 1))[lines]
    lengths = newlines[lines] + 1 - starts  # with the newline
    order = np.argsort(target, kind="stable")  # lines by file, in block order within a file
    ordered = lengths[order]
    data = buffer[np.repeat(starts[order] - (np.cumsum(ordered) - ordered), ordered) + np.arange(int(ordered.sum()))]
    ends = np.cumsum(np.bincount(target, weights=lengths, minlength=count)).astype(np.int64)
    begins = np.concatenate(([0], ends[:-1]))
    parts = [(i, data[begins[i] : ends[i]].tobytes()) for i in np.flatnonzero(ends > begins).tolist()]
    return len(newlines), parts, tag
