"""Read and write TREC qrels and run files at NumPy speed.

Why byte level: a 10M-line run is ~400 MB of text, and one Python string per line (pytrec_eval's parser) costs tens
of seconds. Here a file is read in small blocks of bytes (reused buffers: big fresh allocations are slow), fields are
found with vectorized whitespace/newline masks, ids are hashed to 64 bits and then checked byte for byte against the
first occurrence of their group (a hash collision splits a group, it never merges two ids), and only the vocabulary
of distinct ids ever becomes Python strings.

Formats: fields are separated by runs of spaces, tabs or other ASCII control characters; CRLF, blank lines and a
missing final newline are fine; ids are UTF-8.
- qrels: ``qid iteration docid label``, exactly 4 fields; the iteration is ignored, the label is an integer.
- run: ``qid Q0 docid rank score tag [anything]``, at least 6 fields; only qid, docid and score are read. Lines may
  come in any order: the scorer ranks by score (the rank column is ignored, as by trec_eval).
Errors are `TrecFormatError` naming the file and the 1-based line: ``run.txt:7: score 'abc' is not a number``.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .types import PAD, Qrels, Run

BLOCK_BYTES = 1 << 22  # small enough for every per-block temporary to be recycled by malloc instead of re-mapped
_SLACK = 64  # spare bytes after a block, so a fixed-width window may start at any token
_NEWLINE, _SPACE = 10, 32
_QRELS_FIELDS, _RUN_FIELDS = "qid 0 docid rel", "qid Q0 docid rank score tag"


class TrecFormatError(ValueError):
    """A malformed TREC file; the message starts with ``path:line:``."""


# ---------------------------------------------------------------------------------------------------------- reading
def _blocks(path):
    """Yield (block, newline positions, number of the block's first line); blocks are whole lines."""
    buffer = np.empty(2 * BLOCK_BYTES + _SLACK, np.uint8)
    held, line = 0, 1  # bytes of an unfinished line kept at the front of the buffer
    with open(path, "rb") as file:
        while True:
            if held + BLOCK_BYTES + _SLACK > len(buffer):  # one line longer than a block
                buffer = np.concatenate([buffer[:held], np.empty(held + BLOCK_BYTES + _SLACK, np.uint8)])
            got = file.readinto(memoryview(buffer)[held : held + BLOCK_BYTES])
            end = held + got
            if got == 0 and held == 0:
                return
            if got == 0:
                buffer[end] = _NEWLINE
                end += 1
            if line == 1 and bytes(buffer[:3]) == b"\xef\xbb\xbf":
                buffer[:3] = _SPACE  # a UTF-8 byte-order mark is not part of the first id
            newlines = np.flatnonzero(buffer[:end] == _NEWLINE)
            if len(newlines) == 0:
                held = end
                continue
            cut = int(newlines[-1]) + 1
            yield buffer, newlines, line
            line += len(newlines)
            held = end - cut
            buffer[:held] = buffer[cut:end].copy()


def _fields(buffer, newlines, exact: int | None, at_least: int | None, where, layout: str):
    """Token (start, end) arrays and, per non-blank line, its first token and block line index."""
    text = buffer[: int(newlines[-1]) + 1]
    blank = text <= _SPACE
    edges = np.flatnonzero(blank[1:] != blank[:-1]) + 1
    if not blank[0]:
        edges = np.concatenate(([0], edges))
    starts, ends = edges[0::2], edges[1::2]
    before = np.searchsorted(starts, newlines)  # tokens that start before each line's newline
    counts = np.diff(before, prepend=0)
    bad = (counts != exact) if exact is not None else (counts < at_least)
    bad &= counts > 0
    if bad.any():
        i = int(np.argmax(bad))
        expected = f"{exact} fields" if exact is not None else f"at least {at_least} fields"
        raise TrecFormatError(f"{where(i)}: expected {expected} ({layout}), got {counts[i]}")
    lines = np.flatnonzero(counts)
    return starts, ends, (before - counts)[lines], lines


def _tokens(buffer, starts, ends) -> np.ndarray:
    """Tokens as a zero-padded uint8 matrix whose width is a multiple of 8 (rows read as uint64 words)."""
    lengths = ends - starts
    width = max(8, -(-int(lengths.max(initial=0)) // 8) * 8)
    if len(starts) and int(starts.max()) + width <= len(buffer):
        windows = np.ndarray((len(buffer) - width + 1,), f"V{width}", buffer, 0, (1,))
        matrix = windows[starts].view(np.uint8).reshape(len(starts), width)
    else:
        index = np.minimum(starts[:, None] + np.arange(width), len(buffer) - 1)
        matrix = buffer[index]
    matrix[np.arange(width) >= lengths[:, None]] = 0
    return matrix


def _hash(matrix: np.ndarray) -> np.ndarray:
    """64-bit hash of each row (multiply-xorshift over the row's uint64 words)."""
    words = matrix.view(np.uint64)
    hashes = np.full(len(words), 0x9E3779B97F4A7C15, np.uint64)
    for column in words.T:
        hashes ^= column
        hashes *= np.uint64(0xFF51AFD7ED558CCD)
        hashes ^= hashes >> np.uint64(33)
    hashes *= np.uint64(0xC4CEB9FE1A85EC53)
    hashes ^= hashes >> np.uint64(29)
    return hashes


def _rows(matrix: np.ndarray) -> np.ndarray:
    return matrix.view(f"S{matrix.shape[1]}").ravel()


def _group(hashes: np.ndarray, rows: np.ndarray):
    """Number equal rows 0, 1, ... in order of first appearance; return (code per row, first row of each code).

    The hash prefix is packed above the row index so one integer sort (much faster than an argsort) groups the rows;
    then every row is compared byte for byte with its group's first row, and groups that mix ids are re-split exactly.
    """
    n = len(hashes)
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    keys = (hashes & ~low) | np.arange(n, dtype=np.uint64)
    keys.sort()
    order = (keys & low).astype(np.int64)
    new = np.ones(n, bool)
    np.greater(keys[1:] ^ keys[:-1], low, out=new[1:])
    first = order[new]
    codes = np.empty(n, np.int64)
    codes[order] = np.cumsum(new) - 1
    mixed = rows != rows[first][codes]
    live = len(first)
    if mixed.any():
        mixed_groups = np.unique(codes[mixed])
        members = np.flatnonzero(np.isin(codes, mixed_groups))
        _, sub_first, sub_codes = np.unique(rows[members], return_index=True, return_inverse=True)
        codes[members] = len(first) + sub_codes.ravel()
        first = np.concatenate([first, members[sub_first]])
        first[mixed_groups] = n  # emptied groups sort last and are dropped
        live = len(first) - len(mixed_groups)
    by_first = np.argsort(first, kind="stable")[:live]
    renumber = np.full(len(first), -1, np.int64)
    renumber[by_first] = np.arange(live)
    return renumber[codes], first[by_first]


def _decode(rows: np.ndarray, what: str, path) -> np.ndarray:
    """Distinct ids (bytes rows) -> object array of str, decoded in one call."""
    matrix = rows.view(np.uint8).reshape(len(rows), -1)
    joined = np.zeros((len(rows), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = _NEWLINE
    flat = joined.ravel()
    try:
        text = flat[flat != 0].tobytes().decode("utf-8")
    except UnicodeDecodeError:
        bad = next(r for r in rows.tolist() if not _is_utf8(r))
        raise TrecFormatError(f"{path}: {what} id {bad!r} is not valid UTF-8") from None
    return np.array(text.split("\n")[:-1], dtype=object)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


class _IdColumn:
    """One id field, gathered block by block: consecutive repeats (a query's lines) are stored once."""

    def __init__(self):
        self.heads, self.hashes, self.repeats = [], [], []

    def add(self, matrix: np.ndarray) -> None:
        head = np.ones(len(matrix), bool)
        np.any(matrix[1:] != matrix[:-1], axis=1, out=head[1:])
        at = np.flatnonzero(head)
        self.heads.append(matrix[at])
        self.hashes.append(_hash(matrix[at]))
        self.repeats.append(np.diff(at, append=len(matrix)))

    def encode(self, what: str, path):
        """(code per line, vocabulary in order of first appearance)."""
        if not self.heads:
            return np.zeros(0, np.int64), np.zeros(0, object)
        width = max(m.shape[1] for m in self.heads)
        matrix = np.zeros((sum(len(m) for m in self.heads), width), np.uint8)
        at = 0
        for m in self.heads:
            matrix[at : at + len(m), : m.shape[1]] = m
            at += len(m)
        rows = _rows(matrix)
        codes, first = _group(np.concatenate(self.hashes), rows)
        return np.repeat(codes, np.concatenate(self.repeats)), _decode(rows[first], what, path)


def _numbers(matrix: np.ndarray, dtype, message: str, where):
    """Parse a column of tokens (zero-padded rows) with NumPy's C parser; name the first bad one."""
    if len(matrix) == 0:
        return np.zeros(0, dtype)
    joined = np.empty((len(matrix), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = _SPACE
    flat = joined.ravel()
    try:
        values = np.fromstring(flat[flat != 0].tobytes(), dtype=dtype, sep=" ")
    except ValueError:
        values = None
    if values is not None and len(values) == len(matrix):
        bad = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), bool)
        if not bad.any():
            return values
        i = int(np.argmax(bad))
    else:
        i = next(i for i, token in enumerate(_rows(matrix).tolist()) if not _parses(token, dtype))
    token = _rows(matrix)[i].decode("utf-8", "replace")
    raise TrecFormatError(f"{where(i)}: {message.format(token=token[:40])}")


def _parses(token: bytes, dtype) -> bool:
    try:
        return len(np.fromstring(token + b" ", dtype=dtype, sep=" ")) == 1
    except ValueError:
        return False


def _read(path, exact, at_least, layout, id_fields, number_field, dtype, message):
    """Shared reader: (id codes and vocabularies, numbers, 1-based line of each record)."""
    columns = [_IdColumn() for _ in id_fields]
    numbers, line_numbers = [], []
    for buffer, newlines, line0 in _blocks(path):
        starts, ends, first, lines = _fields(buffer, newlines, exact, at_least, lambda i: f"{path}:{line0 + i}", layout)
        for column, field in zip(columns, id_fields):
            column.add(_tokens(buffer, starts[first + field], ends[first + field]))
        tokens = _tokens(buffer, starts[first + number_field], ends[first + number_field])
        numbers.append(_numbers(tokens, dtype, message, lambda i: f"{path}:{line0 + lines[i]}"))
        line_numbers.append(lines + line0)
    encoded = [c.encode(w, path) for c, w in zip(columns, ("query", "document"))]
    values = np.concatenate(numbers) if numbers else np.zeros(0, dtype)
    lines = np.concatenate(line_numbers) if line_numbers else np.zeros(0, np.int64)
    return encoded, values, lines


def read_qrels(path) -> Qrels:
    """Read ``qid 0 docid label`` lines; a (query, document) pair judged twice is an error."""
    (queries, docs), labels, lines = _read(
        path, 4, None, _QRELS_FIELDS, (0, 2), 3, np.int64, "label '{token}' is not an integer"
    )
    (query_codes, query_ids), (doc_codes, doc_ids) = queries, docs
    if len(labels) == 0:
        raise TrecFormatError(f"{path}: no judgements (empty qrels file)")
    keys = query_codes * len(doc_ids) + doc_codes
    order = np.argsort(keys, kind="stable")
    repeated = keys[order][1:] == keys[order][:-1]
    if repeated.any():
        head = np.maximum.accumulate(np.where(np.concatenate(([True], ~repeated)), np.arange(len(order)), 0))
        i = int(np.argmin(np.where(np.concatenate(([False], repeated)), lines[order], np.iinfo(np.int64).max)))
        record, first = order[i], order[head[i]]
        raise TrecFormatError(
            f"{path}:{lines[record]}: duplicate judgement for query {query_ids[query_codes[record]]}, "
            f"document {doc_ids[doc_codes[record]]} (first on line {lines[first]})"
        )
    order = np.argsort(query_codes, kind="stable")
    indptr = np.concatenate(([0], np.cumsum(np.bincount(query_codes, minlength=len(query_ids)))))
    return Qrels.from_arrays(query_ids, doc_ids, indptr, doc_codes[order], labels[order])


def read_run(path) -> Run:
    """Read ``qid Q0 docid rank score tag`` lines; each query's docs keep file order (the scorer ranks them)."""
    (queries, docs), scores, _ = _read(
        path, None, 6, _RUN_FIELDS, (0, 2), 4, np.float64, "score '{token}' is not a number"
    )
    (query_codes, query_ids), (doc_codes, doc_ids) = queries, docs
    n_queries = len(query_ids)
    if len(query_codes) and np.any(query_codes[1:] < query_codes[:-1]):  # lines of queries interleaved
        order = np.argsort(query_codes, kind="stable")
        query_codes, doc_codes, scores = query_codes[order], doc_codes[order], scores[order]
    counts = np.bincount(query_codes, minlength=n_queries)
    depth = int(counts.max(initial=0))
    if len(counts) and np.all(counts == depth):
        return Run.from_arrays(query_ids, doc_ids, doc_codes.reshape(n_queries, depth), scores.reshape(n_queries, -1))
    position = np.arange(len(query_codes)) - np.repeat(np.cumsum(counts) - counts, counts)
    codes = np.full((n_queries, depth), PAD, np.int64)
    codes[query_codes, position] = doc_codes
    matrix = np.full((n_queries, depth), -np.inf)
    matrix[query_codes, position] = scores
    return Run.from_arrays(query_ids, doc_ids, codes, matrix)
