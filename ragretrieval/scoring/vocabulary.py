"""Ids to integer codes: hash each id token to 64 bits, group equal hashes, check every member byte for byte.

A hash collision splits a group, it never merges two ids; only the vocabulary of distinct ids becomes Python strings.
"""

from __future__ import annotations

import numpy as np

from .scan import NEWLINE, token_bytes


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


def _group(hashes: np.ndarray, rows: np.ndarray, ordered: bool):
    """Number equal rows; return (code per row, first row of each code). Codes follow first appearance if `ordered`,
    else hash order.

    The hash prefix is packed above the row index so one integer sort (much faster than an argsort) groups the rows;
    then every row is compared byte for byte with its group's first row, and groups that mix ids are re-split exactly.
    Arrays are reused in place where possible (`hashes` is overwritten): fresh memory is slow to map.
    """
    n, step = len(hashes), 1 << 20
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    keys = np.bitwise_and(hashes, ~low, out=hashes)  # the hash prefix above the row index
    index = np.arange(n, dtype=np.uint64)
    keys |= index
    keys.sort()
    new = np.ones(n, bool)
    np.greater(keys[1:] ^ keys[:-1], low, out=new[1:])
    order = np.bitwise_and(keys, low, out=keys).view(np.int64)
    first = order[new]
    group = np.cumsum(new, out=index.view(np.int64))
    group -= 1
    codes = np.empty(n, np.int64)
    codes[order] = group
    representatives = rows[first]
    mixed = [np.flatnonzero(rows[i : i + step] != representatives[codes[i : i + step]]) + i for i in range(0, n, step)]
    mixed = np.concatenate(mixed)
    if len(mixed) == 0 and not ordered:
        return codes, first
    live = len(first)
    if len(mixed):
        mixed_groups = np.unique(codes[mixed])
        members = np.flatnonzero(np.isin(codes, mixed_groups))
        _, sub_first, sub_codes = np.unique(rows[members], return_index=True, return_inverse=True)
        codes[members] = len(first) + sub_codes.ravel()
        first = np.concatenate([first, members[sub_first]])
        first[mixed_groups] = n  # emptied groups sort last and are dropped
        live = len(first) - len(mixed_groups)
    by_first = _sort_order(first)[:live]
    renumber = np.full(len(first), -1, np.int64)
    renumber[by_first] = np.arange(live)
    return renumber[codes], first[by_first]


def _sort_order(values: np.ndarray) -> np.ndarray:
    """argsort of non-negative ints below 2**32, as one packed integer sort."""
    bits = max(1, (len(values) - 1).bit_length())
    keys = (values.astype(np.uint64) << np.uint64(bits)) | np.arange(len(values), dtype=np.uint64)
    keys.sort()
    return (keys & np.uint64((1 << bits) - 1)).astype(np.int64)


def _decode(rows: np.ndarray) -> np.ndarray:
    """Distinct ids (bytes rows) -> object array of str, decoded in one call; UnicodeDecodeError if not UTF-8."""
    matrix = rows.view(np.uint8).reshape(len(rows), rows.dtype.itemsize)
    joined = np.zeros((len(rows), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = NEWLINE
    flat = joined.ravel()
    return np.array(flat[flat != 0].tobytes().decode("utf-8").split("\n")[:-1], dtype=object)


def distinct_runs(matrix: np.ndarray):
    """(hashes, rows, repeats) of the runs of equal consecutive ids in a block (a query's lines are one run);
    repeats is None when no id repeats the one before it."""
    hashes, rows = _hash(matrix), token_bytes(matrix)
    head = np.ones(len(matrix), bool)
    np.not_equal(hashes[1:], hashes[:-1], out=head[1:])
    same = np.flatnonzero(~head[1:]) + 1
    if len(same) == 0:
        return hashes, rows, None
    head[same] = rows[same] != rows[same - 1]  # equal hashes: compare the bytes too
    at = np.flatnonzero(head)
    return hashes[at], rows[at], np.diff(at, append=len(matrix)).astype(np.int32)


class IdColumn:
    """One id field, gathered block by block."""

    def __init__(self, ordered: bool):
        self.ordered, self.heads, self.hashes, self.repeats = ordered, [], [], []

    def add(self, hashes, rows, repeats) -> None:
        self.hashes.append(hashes)
        self.heads.append(rows)
        self.repeats.append(repeats)

    def encode(self):
        """(code per line, vocabulary)."""
        if sum(len(rows) for rows in self.heads) == 0:
            return np.zeros(0, np.int64), np.zeros(0, object)
        rows = np.concatenate(self.heads)
        codes, first = _group(np.concatenate(self.hashes), rows, self.ordered)
        if any(r is not None for r in self.repeats):  # some lines repeat the id of the line before
            ones = (np.ones(len(rows), np.int32) for rows in self.heads)
            codes = np.repeat(codes, np.concatenate([o if r is None else r for r, o in zip(self.repeats, ones)]))
        return codes, _decode(rows[first])
