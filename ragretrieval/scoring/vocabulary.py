"""Ids to integer codes: hash each id token to 64 bits, group equal hashes, check every member byte for byte.

A hash collision splits a group, it never merges two ids; only the vocabulary of distinct ids becomes Python strings.
"""

from __future__ import annotations

import numpy as np

from .ids import LazyIds, check_utf8, decode_rows
from .scan import token_bytes


def _hash(matrix: np.ndarray) -> np.ndarray:
    """64-bit hash of each zero-padded row (multiply-xorshift over the row's uint64 words). Zero words (padding:
    a token never holds eight NUL bytes) leave the hash as it is, so a row hashes alike at any padded width."""
    words = matrix.view(np.uint64)
    hashes = np.full(len(words), 0x9E3779B97F4A7C15, np.uint64)
    for j, column in enumerate(words.T):
        mixed = hashes ^ column
        mixed *= np.uint64(0xFF51AFD7ED558CCD)
        mixed ^= mixed >> np.uint64(33)
        hashes = mixed if j == 0 else np.where(column != 0, mixed, hashes)
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
    n = len(hashes)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
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
    words = rows.view(np.uint64).reshape(n, -1)  # rows are whole words wide, so compare word by word (fast)
    representatives = rows[first].view(np.uint64).reshape(len(first), -1)
    differ = np.zeros(n, bool)
    for j in range(words.shape[1]):
        differ |= np.ascontiguousarray(representatives[:, j])[codes] != words[:, j]
    mixed = np.flatnonzero(differ)
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


def distinct_runs(matrix: np.ndarray):
    """(hashes, rows, repeats) of the runs of equal consecutive ids in a block (a query's lines are one run);
    repeats is None when no id repeats the one before it. Neighbours are compared word by word first, so only the
    first id of each run is hashed."""
    words = matrix.view(np.uint64)
    head = np.zeros(len(matrix), bool)
    head[:1] = True
    for column in words.T:
        head[1:] |= column[1:] != column[:-1]
    rows = token_bytes(matrix)
    if head.all():
        return _hash(matrix), rows, None
    at = np.flatnonzero(head)
    return _hash(matrix[at]), rows[at], np.diff(at, append=len(matrix)).astype(np.int32)


class IdColumn:
    """One id field, gathered block by block: `prepare` a block's tokens (in any thread), `add` them in file order,
    then `encode` once.

    With `parts` > 1 (a power of two; for big columns whose code order is free), each block's distinct ids are split
    by the top bits of their hash, and `encode` groups the parts independently, in parallel: an id always falls in
    the same part, so the parts' vocabularies never overlap.
    """

    def __init__(self, ordered: bool, parts: int = 1, known=None, lazy: bool = False):
        """`known` (an array of str ids): the vocabulary will start with those ids, in their order and as the same
        objects, followed by the column's other ids. `lazy`: the other ids stay bytes (`LazyIds`), checked to be
        UTF-8 but not decoded."""
        self.ordered, self.parts, self.blocks = ordered, parts, []
        self.known, self._lookup, self.lazy = known, None, lazy

    def prepare(self, matrix: np.ndarray):
        hashes, rows, repeats = distinct_runs(matrix)
        if self.parts == 1:
            return [(None, hashes, rows)], len(rows), repeats
        part = hashes >> np.uint64(64 - (self.parts - 1).bit_length())
        pieces = []
        for p in range(self.parts):
            index = np.flatnonzero(part == p)
            pieces.append((index, hashes[index], rows[index]))
        return pieces, len(rows), repeats

    def add(self, prepared) -> None:
        if self.known is not None and self._lookup is None:  # once, while the first blocks are being parsed
            self._lookup = _KnownIds(self.known)
        self.blocks.append(prepared)

    def encode(self, pool=None, runs: bool = False):
        """(code per line, vocabulary); with `runs`, ((code, length) of each run of equal consecutive ids,
        vocabulary). The vocabulary is an array of str, or `LazyIds` when the column is `lazy`."""
        known = self.known
        sizes = np.array([n for _, n, _ in self.blocks], dtype=np.int64)
        decode = (lambda rows: rows) if self.lazy else decode_rows
        if sizes.sum() == 0:
            empty = np.zeros(0, np.int64)
            return (empty, empty) if runs else empty, self._vocabulary([decode(np.zeros(0, "S8"))])
        offsets = np.cumsum(sizes) - sizes

        def group(p):
            """Part p: (line index or None, code per line, distinct rows, index of each in `known` or -1)."""
            mine = [(split[p], offset) for (split, _, _), offset in zip(self.blocks, offsets)]
            rows = np.concatenate([rows for (_, _, rows), _ in mine])
            codes, first = _group(np.concatenate([hashes for (_, hashes, _), _ in mine]), rows, self.ordered)
            index = None if self.parts == 1 else np.concatenate([i + offset for (i, _, _), offset in mine])
            distinct = rows[first]
            return index, codes, distinct, None if known is None else self._lookup.find(distinct)

        # Parts are taken in order as they are grouped: their codes placed by the pool, their new ids decoded here
        # (decoding holds the GIL; the rest is NumPy, which does not).
        grouping = [pool.submit(group, p) for p in range(self.parts)] if pool and self.parts > 1 else None
        codes = np.empty(int(sizes.sum()), np.int64)
        decoded, placing, base, n_new = [], [], 0, 0
        for p in range(self.parts):
            index, part_codes, distinct, found = grouping[p].result() if grouping else group(p)
            if found is None:
                placing.append(_submit(pool, _place, codes, index, part_codes + base))
                decoded.append(decode(distinct))
            else:
                new = found < 0
                found[new] = len(known) + n_new + np.arange(np.count_nonzero(new))
                n_new += np.count_nonzero(new)
                placing.append(_submit(pool, _place, codes, index, found, part_codes))
                decoded.append(decode(distinct[new]))
            base += len(distinct)
        for future in placing:
            future.result()
        vocabulary = self._vocabulary(decoded)
        repeats = any(r is not None for _, _, r in self.blocks)  # some lines repeat the id of the line before
        if runs or repeats:
            lengths = np.concatenate([np.ones(n, np.int32) if r is None else r for _, n, r in self.blocks])
            return ((codes, lengths) if runs else np.repeat(codes, lengths)), vocabulary
        return codes, vocabulary


    def _vocabulary(self, decoded: list) -> np.ndarray | LazyIds:
        """The known ids, then the new ones of each part (str arrays, or bytes rows when `lazy`)."""
        head = np.zeros(0, object) if self.known is None else self.known
        if not self.lazy:
            new = [ids for ids in decoded if len(ids)]
            return np.concatenate([head, *new]) if new else head
        tail = np.concatenate(decoded)
        check_utf8(tail)
        return LazyIds(head, tail)


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _submit(pool, function, *args):
    """`pool.submit`, or the call itself (as a done future) without a pool."""
    return pool.submit(function, *args) if pool is not None else _Done(function(*args))


def _place(codes, index, values, by=None) -> None:
    """codes[index] = values (values[by] when `by` is given); all of `codes` when `index` is None."""
    codes[slice(None) if index is None else index] = values if by is None else values[by]


class _KnownIds:
    """Given str ids, hashed and sorted once, to look byte rows up in: hashes joined, then bytes compared."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        encoded = [i.encode("utf-8") for i in ids.tolist()]
        self.encoded = np.array(encoded, dtype=bytes)
        if self.encoded.dtype.itemsize % 8:  # a width of whole words, as `_hash` reads them
            self.encoded = self.encoded.astype(f"S{-(-self.encoded.dtype.itemsize // 8) * 8}")
        # An id ending in NUL would read as the same fixed-width bytes as the id without it; no token holds a NUL
        # (it separates fields), so such ids are left out: they match nothing.
        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        usable = np.flatnonzero(lengths == np.char.str_len(self.encoded)) if len(ids) else np.zeros(0, np.int64)
        hashes = _hash(self.encoded[usable].view(np.uint8).reshape(len(usable), -1)) if len(usable) else usable
        by_hash = np.argsort(hashes)
        self.order, self.hashes = usable[by_hash], hashes[by_hash].astype(np.uint64)
        self.unique = not np.any(self.hashes[1:] == self.hashes[:-1])
        self._index = None  # str -> position, built on first use when the hashes are not unique

    def find(self, rows: np.ndarray) -> np.ndarray:
        """Index in the ids of each distinct bytes row, -1 when absent."""
        if len(self.order) == 0 or len(rows) == 0:
            return np.full(len(rows), -1, np.int64)
        if not self.unique:  # two ids share a hash (once in ~10^10 vocabularies): look up by string instead
            if self._index is None:
                self._index = {k: i for i, k in enumerate(self.ids.tolist())}
            return np.array([self._index.get(r, -1) for r in decode_rows(rows).tolist()], dtype=np.int64)
        hashes = _hash(rows.view(np.uint8).reshape(len(rows), -1))
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.order) - 1)
        found = np.full(len(rows), -1, np.int64)
        hit = np.flatnonzero(self.hashes[at] == hashes)
        candidate = self.order[at[hit]]
        same = self.encoded[candidate] == rows[hit]  # the bytes, only where the hashes agree
        found[hit[same]] = candidate[same]
        return found
