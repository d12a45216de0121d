"""Ids to integer codes: hash each id token to 64 bits, group equal hashes, check every member byte for byte.

A hash collision splits a group, it never merges two ids; only the vocabulary of distinct ids becomes Python strings.
"""

from __future__ import annotations

import numpy as np

from .ids import LazyIds, check_utf8, decode_rows, utf8_rows
from .scan import token_bytes, tokens


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


hash_rows = _hash  # for the other readers of ids (grouping.py deals lines by the hash of their query id)


def _group(hashes: np.ndarray, rows: np.ndarray, ordered: bool):
    """Number equal rows; return (code per row, the distinct rows by code). `hashes` must be a function of the rows'
    bytes. Codes follow first appearance if `ordered`; else they follow the hash prefixes (the bits above the
    bit_length(n - 1) bits that hold the row index), and the ids that share a prefix with an earlier, different id (a
    collision, rare) are numbered after all others, in the order they first appear.

    The hash prefix is packed above the row index so one integer sort (much faster than an argsort) groups the rows;
    then the rows are read whole, as words, in that order, and each is compared with its neighbour: a group whose
    rows are not all equal mixes ids and is re-split exactly (`_split_mixed`). Arrays are reused in place where
    possible (`hashes` is overwritten): fresh memory is slow to map.
    """
    n = len(hashes)
    if n == 0:
        return np.zeros(0, np.int64), rows[:0]
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    keys = np.bitwise_and(hashes, ~low, out=hashes)  # the hash prefix above the row index
    index = np.arange(n, dtype=np.uint64)
    keys |= index
    keys.sort()
    new = np.ones(n, bool)
    np.greater(keys[1:] ^ keys[:-1], low, out=new[1:])
    order = np.bitwise_and(keys, low, out=keys).view(np.int64)
    group = np.cumsum(new, out=index.view(np.int64))
    group -= 1
    codes = np.empty(n, np.int64)
    codes[order] = group
    width = rows.dtype.itemsize // 8  # rows are whole words wide: gathered and compared word by word (fast)
    words = np.take(rows.view(np.uint64).reshape(n, width), order, axis=0)  # in group order
    distinct = np.compress(new, words, axis=0).view(rows.dtype).ravel()
    differ = np.zeros(n - 1, bool)  # a row unlike the one before it in its group
    for j in range(width):
        differ |= words[1:, j] != words[:-1, j]
    differ &= ~new[1:]
    first = order[new] if ordered else None
    if differ.any():
        codes, distinct, first = _split_mixed(codes, distinct, first, rows, group, differ, order, new)
    if not ordered:
        return codes, distinct
    assert first is not None  # set above when ordered
    by_first = _sort_order(first)
    renumber = np.empty(len(first), np.int64)
    renumber[by_first] = np.arange(len(first))
    return renumber[codes], distinct[by_first]


def _split_mixed(codes, distinct, first, rows, group, differ, order, new):
    """Re-split the groups whose rows differ: in each, the id of its first row keeps the group's code, and the other
    ids get new codes after all others, in the order they first appear. `codes` is changed in place; returns (codes,
    distinct, first), `distinct` and `first` (the first row of each code, when given) extended by the new codes."""
    mixed = np.unique(group[1:][differ])
    starts = np.flatnonzero(new)
    begin, length = starts[mixed], np.diff(starts, append=len(new))[mixed]
    positions = np.repeat(begin - np.cumsum(length) + length, length) + np.arange(int(length.sum()))
    members = np.sort(order[positions])  # the rows of the mixed groups, in row order
    _, sub_first, sub_codes = np.unique(rows[members], return_index=True, return_inverse=True)
    sub_codes = sub_codes.ravel()
    at = np.searchsorted(members, order[begin])  # each mixed group's first row (its lowest index) among them
    slot = np.full(len(sub_first), -1, np.int64)
    slot[sub_codes[at]] = mixed
    others = np.flatnonzero(slot < 0)
    others = others[np.argsort(sub_first[others])]  # first rows are distinct: any sort is stable here
    slot[others] = len(distinct) + np.arange(len(others))
    codes[members] = slot[sub_codes]
    added = members[sub_first[others]]
    distinct = np.concatenate([distinct, rows[added]])
    return codes, distinct, None if first is None else np.concatenate([first, added])


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

    def __init__(self, ordered: bool, parts: int = 1, known=None, lazy: bool = False, lookup: KnownIds | None = None):
        """`known` (an array of str ids): the vocabulary will start with those ids, in their order and as the same
        objects, followed by the column's other ids; or `lookup`, such ids already hashed (`KnownIds`, for `parts`
        parts). `lazy`: the other ids stay bytes (`LazyIds`), checked to be UTF-8 but not decoded."""
        self.ordered, self.parts = ordered, parts
        self.blocks: list[tuple] = []  # per block: (split, hashes, rows) as `add` records them
        self.known: np.ndarray | None = known if lookup is None else lookup.ids
        self._lookup: KnownIds | None = lookup
        self.lazy = lazy

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
            self._lookup = KnownIds(self.known, self.parts)
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
            """Part p: (line index or None, code per line, distinct rows) or, with known ids, (line index or None,
            group per line, rows of the groups no known id is in, index in `known` of each group's id or -1).
            The known ids of the part are grouped with the lines' ids, so one sort finds them too."""
            mine = [(split[p], offset) for (split, _, _), offset in zip(self.blocks, offsets)]
            index = None if self.parts == 1 else np.concatenate([i + offset for (i, _, _), offset in mine])
            rows, hashes = [rows for (_, _, rows), _ in mine], [hashes for (_, hashes, _), _ in mine]
            if known is None:
                codes, distinct = _group(np.concatenate(hashes), np.concatenate(rows), self.ordered)
                return index, codes, distinct, None
            assert self._lookup is not None  # `known` comes with its lookup (the constructor)
            known_hashes, known_rows, known_index = self._lookup.parts[p]
            codes, distinct = _group(np.concatenate([*hashes, known_hashes]), np.concatenate([*rows, known_rows]),
                                     self.ordered)
            n_lines = len(codes) - len(known_rows)
            found = np.full(len(distinct), -1, np.int64)
            found[codes[n_lines:]] = known_index
            return index, codes[:n_lines], distinct[found < 0], found

        # Parts are taken in order as they are grouped: their codes placed by the pool, their new ids decoded here
        # (decoding holds the GIL; the rest is NumPy, which does not).
        grouping = [pool.submit(group, p) for p in range(self.parts)] if pool and self.parts > 1 else None
        codes = np.empty(int(sizes.sum()), np.int64)
        decoded, placing, base, n_new = [], [], 0, 0
        for p in range(self.parts):
            index, part_codes, distinct, found = grouping[p].result() if grouping else group(p)
            if found is None:
                placing.append(_submit(pool, _place, codes, index, part_codes + base))
                base += len(distinct)
            else:
                assert known is not None  # `group` finds ids of `known` only when there are some
                new = found < 0
                found[new] = len(known) + n_new + np.arange(len(distinct))
                n_new += len(distinct)
                placing.append(_submit(pool, _place, codes, index, found, part_codes))
            decoded.append(decode(distinct))
        for future in placing:
            future.result()
        vocabulary = self._vocabulary(decoded)
        if runs:
            lengths = np.concatenate([np.ones(n, np.int32) if r is None else r for _, n, r in self.blocks])
            return (codes, lengths), vocabulary
        return _expand_runs(codes, self.blocks), vocabulary

    def _vocabulary(self, decoded: list) -> np.ndarray | LazyIds:
        """The known ids, then the new ones of each part (str arrays, or bytes rows when `lazy`)."""
        head = np.zeros(0, object) if self.known is None else self.known
        if not self.lazy:
            new = [ids for ids in decoded if len(ids)]
            return np.concatenate([head, *new]) if new else head
        tail = np.concatenate(decoded)
        check_utf8(tail)
        return LazyIds(head, tail)


def _expand_runs(codes: np.ndarray, blocks: list) -> np.ndarray:
    """A code per line from a code per run of equal consecutive ids (the blocks' run lengths): only the repeated
    lines are inserted, so a column with a few repeats (a doc listed twice in a row) costs one copy, not a length
    per line and a repeat of every code."""
    positions: list[np.ndarray] = []
    extras: list[np.ndarray] = []
    offset = 0
    for _, n, lengths in blocks:
        if lengths is not None:
            longer = np.flatnonzero(lengths > 1)
            positions.append(longer + offset)
            extras.append(lengths[longer].astype(np.int64) - 1)
        offset += n
    if not positions:
        return codes
    at, extra = np.concatenate(positions), np.concatenate(extras)
    return np.insert(codes, np.repeat(at + 1, extra), codes[np.repeat(at, extra)])


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


class KnownIds:
    """Given str ids as `_group` compares rows: UTF-8, zero-padded to whole words, hashed, and split by hash into the
    parts of a column (`parts[p]`: hashes, rows, index of each id in the given ones). Ids that no token can equal are
    left out, so they match nothing: those holding a NUL (it separates fields; and an id ending in NUL would read as
    the same zero-padded bytes as the id without it) and those that are not valid Unicode (a lone surrogate).
    `subset` picks some of them without encoding or hashing again (a run read in batches, each against the docs its
    queries judge)."""

    def __init__(self, ids: np.ndarray, parts: int, encoded=None):
        self.ids, self.n_parts = ids, parts
        rows, usable = _known_rows(ids.tolist()) if encoded is None else encoded[:2]
        if encoded is None:
            hashes = _hash(rows.view(np.uint8).reshape(len(rows), -1)) if len(rows) else np.zeros(0, np.uint64)
        else:
            hashes = encoded[2]
        self._encoded = (rows, usable, hashes)
        self._row_of: np.ndarray | None = None
        part = hashes >> np.uint64(64 - (parts - 1).bit_length()) if parts > 1 else np.zeros(len(rows), np.uint64)
        self.parts = []
        for p in range(parts):
            mine = np.flatnonzero(part == p)
            self.parts.append((hashes[mine], rows[mine], usable[mine]))

    def subset(self, index: np.ndarray) -> KnownIds:
        """The ids at `index` (increasing positions), as their own `KnownIds`."""
        rows, usable, hashes = self._encoded
        row_of = self._row_of
        if row_of is None:  # once: a batch's subset must cost what the batch holds, not all the ids
            row_of = self._row_of = np.full(len(self.ids), -1, np.int64)
            row_of[usable] = np.arange(len(usable))
        row = row_of[index]
        kept = np.flatnonzero(row >= 0)
        return KnownIds(self.ids[index], self.n_parts, (rows[row[kept]], kept, hashes[row[kept]]))


def _known_rows(texts: list):
    """(UTF-8 bytes of the ids a token can equal, zero-padded to whole words; their indices in `texts`). Usually one
    encode of all ids joined by NULs; one by one when an id holds a NUL or cannot be encoded."""
    try:
        joined = "\x00".join(texts).encode("utf-8") + b"\x00"
    except (TypeError, UnicodeEncodeError):
        joined = b""
    buffer = np.frombuffer(joined, np.uint8)
    ends = np.flatnonzero(buffer == 0)
    if len(ends) == len(texts) and len(texts):
        starts = np.concatenate(([0], ends[:-1] + 1))
        usable = np.flatnonzero(ends > starts)
        matrix = tokens(buffer, starts[usable], ends[usable])
        return token_bytes(matrix), usable
    encoded = [_token_bytes(t) for t in texts]
    usable = np.flatnonzero(np.fromiter(map(len, encoded), np.int64, len(encoded)))
    rows = np.array([encoded[i] for i in usable.tolist()], dtype=bytes)
    return rows.astype(f"S{max(8, -(-rows.dtype.itemsize // 8) * 8)}"), usable  # whole words, as `_hash` reads


def _token_bytes(text) -> bytes:
    """The UTF-8 bytes a token equal to `text` would hold; empty when no token can (see `KnownIds`)."""
    try:
        encoded = text.encode("utf-8")
    except (AttributeError, UnicodeEncodeError):  # not a str, or a lone surrogate
        return b""
    return b"" if b"\x00" in encoded else encoded


def index_in(ids: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Position in `among` (unique ids) of each of `ids`, -1 where absent. Both are encoded to UTF-8 rows and
    grouped by hash (`_group` checks every byte): no Python dict, whose lookups chase one scattered str object per
    id. Ids that are not str, or that hold a NUL (zero padding would hide it), are matched with a dict."""
    rows = [utf8_rows(ids.tolist()), utf8_rows(among.tolist())]
    if rows[0] is None or rows[1] is None:
        position = {key: i for i, key in enumerate(among.tolist())}
        return np.fromiter((position.get(key, -1) for key in ids.tolist()), np.int64, len(ids))
    width = max(r.shape[1] for r in rows if r is not None)
    matrix = np.zeros((len(ids) + len(among), width), np.uint8)
    matrix[: len(ids), : rows[0].shape[1]] = rows[0]
    matrix[len(ids) :, : rows[1].shape[1]] = rows[1]
    codes, distinct = _group(_hash(matrix), token_bytes(matrix), ordered=False)
    at = np.full(len(distinct), -1, np.int64)
    at[codes[len(ids) :]] = np.arange(len(among))
    return at[codes[: len(ids)]]
