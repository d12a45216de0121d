"""JSON Lines (and other line files: qrels, TSV) read one way: the one reader of corpora, question sets, answer files,
traces, BEIR's files and RAG-IFEval's documents.

- **One byte-order-mark rule.** A UTF-8 byte-order mark before the first line is dropped (Windows editors write one);
  anywhere else it is part of its line, which is then not valid JSON and is refused naming the line.
- **Lines end at ``\\n``** (``\\r\\n`` too), never at the other characters Python's ``str.splitlines`` breaks on:
  a JSON string may hold U+2028 or a form feed as they are, and its record stays one record.
- Blank lines are skipped; line numbers count every line, blank ones too, so they are the editor's.
- The file is read line by line, never whole: a corpus larger than memory streams.

Problems are `JsonLinesError`s naming ``path:line``; each caller turns them into its own error class with the same
text. A file that is not there is a `MissingInputError` (errors.py), which callers let through: the command must name
another file (exit status 2).
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, Iterator

from ..errors import MissingInputError, RagretrievalError

BOM = b"\xef\xbb\xbf"


class JsonLinesError(RagretrievalError, ValueError):
    """A line file that cannot be read: not UTF-8, or (for records) a line that is not JSON."""


def split_lines(data: bytes) -> Iterator[bytes]:
    """The lines of bytes already read, split where a file object would split them (at ``\\n`` only)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        yield data[start:end]
        start = end


def numbered_lines(path, on_bytes: Callable[[int], None] | None = None, data: bytes | None = None
                   ) -> Iterator[tuple[int, str]]:
    """(line number, text without its line ending) for each non-blank line of a UTF-8 file; `on_bytes` hears how
    many bytes each line took (progress). `data`: the file's bytes when the caller has read them already."""
    path = Path(path)
    if data is None and not path.is_file():
        raise MissingInputError(f"{path}: file not found")
    with path.open("rb") if data is None else nullcontext(split_lines(data)) as lines:
        for number, raw in enumerate(lines, start=1):
            if on_bytes is not None:
                on_bytes(len(raw))
            if number == 1:
                raw = raw.removeprefix(BOM)
            if not raw.strip():
                continue
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise JsonLinesError(f"{path}:{number}: not UTF-8 text (bad byte at offset {error.start})") from None


def numbered_records(path, on_bytes: Callable[[int], None] | None = None, data: bytes | None = None
                     ) -> Iterator[tuple[int, object]]:
    """(line number, the line's JSON value) for each non-blank line (`numbered_lines`)."""
    for number, line in numbered_lines(path, on_bytes, data):
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise JsonLinesError(f"{path}:{number}: invalid JSON: {error.msg} (column {error.colno})") from None

