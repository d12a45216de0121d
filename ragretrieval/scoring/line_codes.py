"""Doc codes for a batch of whole queries, line by line: what `stream.py` ranks with, instead of a vocabulary.

The scorer reads doc codes for three things only: to find each judged doc in its query's ranking, to see a doc listed
twice in one ranking, and to order tied docs by their ids' bytes. None needs the same code for one doc in two
queries. So a batch's lines need no vocabulary (no sort of every id with a gather of every id's bytes, which was a
third of the time on long ids such as URLs): each line gets a code of its own, except that a line whose id is a judged
doc of the batch takes that doc's code, and a doc listed twice in one ranking gets one code. Both are found by hash,
then checked byte for byte, so a hash collision can split two codes but never merge two ids.
"""

from __future__ import annotations

import numpy as np

from .ids import LazyIds, check_utf8
from .scan import token_bytes
from .vocabulary import KnownIds, hash_rows


class LineIds:
    """The doc id column of a batch, prepared block by block (`prepare`, in any thread): each line's hash and
    bytes (zero-padded, whole words)."""

    parts = 1

    def prepare(self, matrix: np.ndarray):
        return hash_rows(matrix), token_bytes(matrix)


def code_lines(prepared: list, query_of_line: np.ndarray, known: KnownIds):
    """(code of each line, vocabulary): the `known` ids (one part) first, their codes 0..k-1, then one entry per
    line, its bytes. A line whose id is a known id takes its code; lines of one query with the same id share the
    first one's code. UnicodeDecodeError when an id is not UTF-8."""
    hashes = np.concatenate([h for h, _ in prepared]) if prepared else np.zeros(0, np.uint64)
    rows = np.concatenate([r for _, r in prepared]) if prepared else np.zeros(0, "S8")
    check_utf8(rows)
    n, k = len(hashes), len(known.ids)
    codes = np.arange(k, k + n, dtype=np.int64)
    _take_known(codes, hashes, rows, known)
    _share_within_queries(codes, hashes, rows, query_of_line)
    return codes, LazyIds(known.ids, rows)


def _take_known(codes, hashes, rows, known: KnownIds) -> None:
    """codes[line] = the known id's code where the line's id is that id."""
    known_hashes, known_rows, known_index = known.parts[0]
    if len(known_hashes) == 0 or len(hashes) == 0:
        return
    maybe = _maybe_known(hashes, known_hashes)
    maybe_hashes = hashes[maybe]
    order = np.argsort(known_hashes, kind="stable")
    sorted_hashes = known_hashes[order]
    at = np.minimum(np.searchsorted(sorted_hashes, maybe_hashes), len(order) - 1)
    found = np.flatnonzero(sorted_hashes[at] == maybe_hashes)
    lines = maybe[found]
    if not len(lines):
        return
    first = at[found]
    same = rows[lines] == known_rows[order[first]]  # S rows: compared as bytes (zero padding is not part of an id)
    codes[lines[same]] = known_index[order[first[same]]]
    shared = np.flatnonzero(sorted_hashes[1:] == sorted_hashes[:-1])  # known ids sharing a hash: rare
    if len(shared):
        colliding = set(sorted_hashes[shared].tolist())
        for line in lines[~same].tolist():
            if int(hashes[line]) in colliding:
                for j in np.flatnonzero(sorted_hashes == hashes[line]).tolist():
                    if rows[line] == known_rows[order[j]]:
                        codes[line] = known_index[order[j]]


def _maybe_known(hashes: np.ndarray, known_hashes: np.ndarray) -> np.ndarray:
    """The lines whose hash may be a known one: a table of 16 slots per known id marks the slots of the known hashes'
    top bits, and a line goes on only if its slot is marked. Most lines of a run name docs nobody judged, so the
    binary search that follows sees the judged ones and about 1 in 16 of the others (on 700,000 lines against 20,000
    judged docs, the search over every line was a fifth of a batch's time)."""
    bits = max(8, (16 * len(known_hashes) - 1).bit_length())
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, bool)
    table[(known_hashes >> shift).astype(np.intp)] = True
    return np.flatnonzero(table[(hashes >> shift).astype(np.intp)])


def _share_within_queries(codes, hashes, rows, query_of_line) -> None:
    """Lines of one query with the same id take the code of the first of them. Lines are sorted by (query, hash
    prefix, line) packed in one integer; lines next to each other with the same query and prefix are compared."""
    n = len(hashes)
    if n < 2:
        return
    line_bits = (n - 1).bit_length()
    query_bits = max(1, int(query_of_line.max(initial=0)).bit_length())
    prefix_bits = 64 - line_bits - query_bits
    if prefix_bits < 8:  # a batch of some 2**28 lines: sort by query and the whole hash instead
        order = np.lexsort((np.arange(n), hashes, query_of_line))
        group_key = np.stack([query_of_line[order], hashes[order]], axis=1)
        candidate = np.all(group_key[1:] == group_key[:-1], axis=1)
    else:
        keys = query_of_line.astype(np.uint64) << np.uint64(64 - query_bits)
        keys |= (hashes >> np.uint64(64 - prefix_bits)) << np.uint64(line_bits)
        keys |= np.arange(n, dtype=np.uint64)
        keys.sort()
        order = (keys & np.uint64((1 << line_bits) - 1)).astype(np.int64)
        candidate = (keys[1:] >> np.uint64(line_bits)) == (keys[:-1] >> np.uint64(line_bits))
    pairs = np.flatnonzero(candidate)
    if not len(pairs):
        return
    first = np.concatenate(([True], pairs[1:] != pairs[:-1] + 1))  # runs of neighbouring pairs: groups of lines
    starts = pairs[first]
    run_lengths = np.diff(np.append(np.flatnonzero(first), len(pairs)))  # pairs per group: its lines less one
    simple = run_lengths == 1  # a group of two lines, the usual case
    a, b = order[starts[simple]], order[starts[simple] + 1]
    same = rows[a] == rows[b]
    codes[b[same]] = codes[a[same]]  # a is the earlier line: its line number is lower in the key
    for start, length in zip(starts[~simple].tolist(), run_lengths[~simple].tolist()):  # three or more: rare
        members = order[start : start + length + 1].tolist()
        first_of: dict = {}
        for line in members:
            code = first_of.setdefault(bytes(rows[line]), codes[line])
            codes[line] = code
