"""Contracts of `scoring.vocabulary`, pinned on small hand-made inputs against references written here from the
definitions: the id hash, the grouping of rows (collisions forced with hand-made hashes), runs of repeated ids, the
known-id rows, `IdColumn.encode` over its options (parts, pool, known ids, lazy, ordered, runs) and `index_in`.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.scoring import vocabulary
from ragretrieval.scoring.ids import LazyIds

MASK = (1 << 64) - 1
SEED, MIX, FINAL = 0x9E3779B97F4A7C15, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53


def reference_hash(row: bytes) -> int:
    """The documented hash: multiply-xorshift over the row's little-endian 64-bit words; a zero word after the
    first leaves the hash as it is; then one final multiply-xorshift."""
    h = SEED
    for j in range(0, len(row), 8):
        word = int.from_bytes(row[j : j + 8], "little")
        if j == 0 or word:
            h = ((h ^ word) * MIX) & MASK
            h ^= h >> 33
    h = (h * FINAL) & MASK
    return h ^ (h >> 29)


def matrix(ids: list[bytes], width: int | None = None) -> np.ndarray:
    """Ids as a zero-padded uint8 matrix, `width` bytes wide (default: the longest id, rounded up to whole words)."""
    width = width or max(8, -(-max(map(len, ids), default=0) // 8) * 8)
    out = np.zeros((len(ids), width), np.uint8)
    for i, token in enumerate(ids):
        out[i, : len(token)] = np.frombuffer(token, np.uint8)
    return out


def rows_of(ids: list[bytes], width: int | None = None) -> np.ndarray:
    m = matrix(ids, width)
    return m.view(f"S{m.shape[1]}").ravel()


# ------------------------------------------------------------------------------------------------ _hash
HASHED = [b"", b"a", b"b", b"ab", b"ba", b"abcdefgh", b"abcdefgi", b"abcdefghi", b"abcdefghij" * 3,
          b"\xff" * 8, b"x" * 16, b"x" * 15, "é🙂".encode(), b"\x01", b"\x01\x00\x00\x00\x00\x00\x00\x02"]


def test_hash_is_the_documented_multiply_xorshift():
    """Every row (empty, one word, several words, a word of 0xff) hashes exactly as the definition says."""
    got = vocabulary._hash(matrix(HASHED))
    assert got.dtype == np.uint64
    assert got.tolist() == [reference_hash(matrix([t])[0].tobytes()) for t in HASHED]


def test_hash_ignores_padding_and_tells_apart_a_small_set():
    """A row hashes alike padded to 8, 16, 24 or 40 bytes; the distinct rows above all hash differently."""
    short = [t for t in HASHED if len(t) <= 8]
    by_width = [vocabulary._hash(matrix(short, width)).tolist() for width in (8, 16, 24, 40)]
    assert by_width[1:] == by_width[:1] * 3
    hashes = vocabulary._hash(matrix(HASHED, 40)).tolist()
    assert len(set(hashes)) == len(HASHED)


# ------------------------------------------------------------------------------------------------ _group
def first_appearance(rows: list) -> tuple[list[int], list]:
    """The ordered reference: codes number the distinct rows in the order they first appear."""
    seen = {}
    codes = [seen.setdefault(r, len(seen)) for r in rows]
    return codes, list(seen)


def hash_order(ids: list, hashes: list[int]) -> tuple[list[int], list]:
    """The unordered reference: groups are numbered by hash prefix (the bits above the bit_length(n - 1) bits, at
    least one, that hold the row index); in each, the first row's id keeps the number, and the ids that share a
    prefix with a different, earlier id are numbered after all groups, in the order they first appear."""
    bits = max(1, (len(ids) - 1).bit_length())
    prefixes = sorted({h >> bits for h in hashes})
    number = {p: g for g, p in enumerate(prefixes)}
    distinct, others, codes = [None] * len(prefixes), {}, []
    for token, h in zip(ids, hashes):
        g = number[h >> bits]
        distinct[g] = token if distinct[g] is None else distinct[g]
        codes.append(g if token == distinct[g] else others.setdefault(token, len(prefixes) + len(others)))
    return codes, distinct + list(others)


def group(hashes, rows, ordered):
    return vocabulary._group(np.array(hashes, np.uint64), rows, ordered)


def assert_groups_equal_rows(codes, distinct, rows):
    """Equal rows share a code, different rows do not, and `distinct[code]` is each row."""
    assert distinct.dtype == rows.dtype and len(set(distinct.tolist())) == len(distinct)
    assert distinct[codes].tolist() == rows.tolist()
    assert sorted(set(codes.tolist())) == list(range(len(distinct)))


@pytest.mark.parametrize("width", [16, 24, 32])
def test_group_numbers_equal_rows_by_first_appearance_when_ordered(width):
    ids = [b"b", b"a", b"b", b"c" * 9, b"a", b"", b"c" * 9, b"d"]
    rows = rows_of(ids, width)
    for hashes in (vocabulary._hash(matrix(ids, width)), np.zeros(len(ids), np.uint64)):  # real, or all colliding
        codes, distinct = vocabulary._group(hashes.copy(), rows, ordered=True)
        expected, order = first_appearance(ids)
        assert codes.dtype == np.int64 and codes.tolist() == expected
        assert distinct.tolist() == order


def test_group_without_a_collision_numbers_rows_in_hash_order_when_not_ordered():
    """Hashes that differ above the low bits holding the row index (bit_length(n - 1), at least one bit) sort the
    rows apart: codes follow the hashes, a repeated row takes its first's code."""
    rows = rows_of([b"p", b"q"])
    codes, distinct = group([2, 0], rows, ordered=False)  # n = 2: one index bit, the hashes differ at bit 1
    assert codes.tolist() == [1, 0] and distinct.tolist() == [b"q", b"p"]
    rows = rows_of([b"r", b"s", b"t", b"u", b"v"])
    codes, distinct = group([8, 0, 24, 16, 32], rows, ordered=False)  # n = 5: three index bits
    assert codes.tolist() == [1, 0, 3, 2, 4] and distinct.tolist() == [b"s", b"r", b"u", b"t", b"v"]
    long = [b"z" * 8 + b"1", b"a" * 8 + b"1", b"a" * 8 + b"1", b"z" * 8 + b"1"]  # equal rows, two words each
    codes, distinct = group([1 << 60, 1 << 40, 1 << 40, 1 << 60], rows_of(long), ordered=False)
    assert codes.tolist() == [1, 0, 0, 1] and distinct.tolist() == [long[1], long[0]]


@pytest.mark.parametrize("ordered", [True, False])
def test_group_splits_rows_whose_hashes_collide(ordered):
    """Different rows given one hash are told apart byte for byte (in any word) and numbered by first appearance
    (ordered) or as `hash_order` says (not ordered); a group holding only equal rows stays whole."""
    cases = [
        ([b"a", b"b"], [5, 5]),  # one row differs from its group's first
        ([b"x" * 8 + b"1", b"y" * 8 + b"1", b"x" * 8 + b"1"], [7, 7, 7]),  # differ in the first word only
        ([b"x" * 8 + b"1", b"x" * 8 + b"2", b"x" * 8 + b"1"], [7, 7, 7]),  # differ in the last word only
        ([b"m", b"k", b"k", b"j", b"m", b"l", b"j"], [9 << 50, 3 << 50, 3 << 50, 9 << 50, 9 << 50, 1, 9 << 50]),
        ([b"c", b"a", b"b", b"a", b"c"], [0, 0, 0, 0, 0]),
        ([b"q", b"p", b"q", b"r", b"s", b"p", b"t"], [6 << 3, 6 << 3, 6 << 3, 1 << 3, 1 << 3, 6 << 3, 0]),  # two mix
        ([b"u", b"v", b"w", b"v"], [2 << 2, 5 << 2, 2 << 2 | 3, 5 << 2]),  # the same prefix, low bits apart
    ]
    for ids, hashes in cases:
        codes, distinct = group(hashes, rows_of(ids), ordered)
        assert_groups_equal_rows(codes, distinct, rows_of(ids))
        expected, order = first_appearance(ids) if ordered else hash_order(ids, hashes)
        assert codes.tolist() == expected and distinct.tolist() == order


VOCABULARY = [b"", b"a", b"b", b"ab", b"x" * 9, b"x" * 8 + b"y", b"y" * 8 + b"y", "é".encode()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(range(len(VOCABULARY))), max_size=40),
       st.lists(st.integers(0, 2), min_size=len(VOCABULARY), max_size=len(VOCABULARY)),
       st.lists(st.integers(0, 1), min_size=len(VOCABULARY), max_size=len(VOCABULARY)), st.booleans(),
       st.sampled_from([16, 24, 32]))
@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_group_equals_the_references_when_hashes_collide_at_random(drawn, high, low, ordered, width):
    """Each id gets a hash of three possible prefixes (so most groups mix ids) and its own lowest bit, which the
    grouping masks off: the codes and the distinct rows are the references', whatever collides."""
    ids = [VOCABULARY[i] for i in drawn]
    hashes = [high[i] << 6 | low[i] for i in drawn]  # 6 bits: at least the index bits of up to 40 rows
    codes, distinct = group(hashes, rows_of(ids, width), ordered)
    expected, order = first_appearance(ids) if ordered else hash_order(ids, hashes)
    assert codes.tolist() == expected and distinct.tolist() == order


def test_group_compares_rows_as_bytes_not_as_numbers():
    """Rows are compared word by word; two words that are equal as float64 (+0.0 and -0.0) but not as bytes are
    different ids, split apart when their hashes collide."""
    ids = [b"", b"\x00" * 7 + b"\x80", b""]
    for ordered in (True, False):
        codes, distinct = group([4, 4, 4], rows_of(ids), ordered)
        assert codes.tolist() == [0, 1, 0] and distinct.tolist() == [b"", b"\x00" * 7 + b"\x80"]


@pytest.mark.parametrize("ordered", [True, False])
def test_only_the_groups_that_mix_ids_are_split_again(monkeypatch, ordered):
    """The re-split (a sort of the mixed groups' rows) is asked only for the groups holding different rows, and not
    at all when no hash collides."""
    asked = []
    split = vocabulary._split_mixed

    def spy(codes, distinct, first, rows, group, differ, order, new):
        asked.append(sorted(distinct[np.unique(group[1:][differ])].tolist()))
        return split(codes, distinct, first, rows, group, differ, order, new)

    monkeypatch.setattr(vocabulary, "_split_mixed", spy)
    ids = [b"a", b"b", b"a", b"c", b"c", b"d" * 9, b"e" * 9, b"d" * 9, b"f"]
    group(vocabulary._hash(matrix(ids)).tolist(), rows_of(ids), ordered)
    assert asked == []
    hashes = [h << 8 for h in (1, 2, 1, 3, 3, 4, 4, 4, 2)]
    codes, _ = group(hashes, rows_of(ids), ordered)
    assert asked == [[b"b", b"d" * 9]]  # the groups of b (with f) and of d (with e), named by their first rows
    expected, _ = first_appearance(ids) if ordered else hash_order(ids, hashes)
    assert codes.tolist() == expected


def test_group_of_nothing():
    codes, distinct = vocabulary._group(np.zeros(0, np.uint64), rows_of([]), ordered=True)
    assert codes.dtype == np.int64 and len(codes) == 0 and len(distinct) == 0 and distinct.dtype == "S8"


def test_sort_order_is_a_stable_argsort():
    values = np.array([5, 0, 5, 3, 0, 7, 1, 3], np.int64)
    for n in range(len(values) + 1):
        got = vocabulary._sort_order(values[:n])
        assert got.dtype == np.int64
        assert got.tolist() == np.argsort(values[:n], kind="stable").tolist()


# ------------------------------------------------------------------------------------------------ runs
def runs_of(ids: list) -> list[tuple[object, int]]:
    return [(key, len(list(same))) for key, same in itertools.groupby(ids)]


@pytest.mark.parametrize("ids", [
    [b"a", b"a", b"b", b"b", b"b", b"a", b"c"],  # the first id repeated
    [b"x" * 8 + b"1", b"x" * 8 + b"2", b"x" * 8 + b"2", b"y" * 8 + b"2"],  # neighbours differ in the 2nd word only
    [b"a", b"b", b"a"],  # no repeat
    [b"q"],
])
def test_distinct_runs_hash_the_first_id_of_each_run(ids):
    hashes, rows, repeats = vocabulary.distinct_runs(matrix(ids))
    runs = runs_of(ids)
    assert rows.tolist() == [key for key, _ in runs]
    assert hashes.tolist() == [reference_hash(matrix([key])[0].tobytes()) for key, _ in runs]
    if len(runs) == len(ids):
        assert repeats is None
    else:
        assert repeats.dtype == np.int32 and repeats.tolist() == [n for _, n in runs]


def test_expand_runs_repeats_each_code_by_its_run_length():
    """A code per line, as np.repeat gives it, from blocks whose lengths are None (no repeat) or run lengths."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        blocks, codes, lengths = [], [], []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(0, 6))
            runs = rng.integers(1, 4, n).astype(np.int32) if rng.random() < 0.7 else None
            blocks.append((None, n, runs))
            codes.append(rng.integers(0, 50, n))
            lengths.append(np.ones(n, np.int32) if runs is None else runs)
        codes = np.concatenate(codes).astype(np.int64)
        expected = np.repeat(codes, np.concatenate(lengths))
        assert vocabulary._expand_runs(codes, blocks).tolist() == expected.tolist()


# ------------------------------------------------------------------------------------------------ known ids
def reference_known(texts: list) -> tuple[list[bytes], list[int]]:
    """The ids a token can equal: a non-empty str, valid Unicode, without a NUL; their UTF-8 bytes and indices."""
    kept = []
    for i, text in enumerate(texts):
        try:
            encoded = text.encode("utf-8")
        except (AttributeError, UnicodeEncodeError):
            continue
        if encoded and b"\x00" not in encoded:
            kept.append((encoded, i))
    return [e for e, _ in kept], [i for _, i in kept]


KNOWN_TEXTS = [
    ["a", "bb", "", "é🙂", "x" * 9, "y" * 16, "z" * 17, "w" * 40],  # every id encodes at once
    ["a\x01", "b\x01"],  # a byte that is not the separator, once per id
    ["a", "\ud800", "b" * 9],  # a lone surrogate
    ["a\x00", "c" * 9, "\x00", "d"],  # a NUL inside, a NUL alone
    [5, "e" * 10, None],  # not str
    ["f" * 17, "\ud800"], ["g" * 9, "a\x00"], ["h" * 24, "\x00"],  # one by one: widths of 17, 9 and 24 bytes
    [],
]


@pytest.mark.parametrize("texts", KNOWN_TEXTS)
def test_known_rows_keep_the_ids_a_token_can_equal(texts):
    rows, usable = vocabulary._known_rows(texts)
    expected, indices = reference_known(texts)
    assert rows.tolist() == expected and usable.tolist() == indices
    assert rows.dtype.kind == "S" and rows.dtype.itemsize == max(8, -(-max(map(len, expected), default=0) // 8) * 8)


@pytest.mark.parametrize("parts", [1, 2, 4])
def test_known_ids_are_split_by_the_top_bits_of_their_hash(parts):
    texts = ["a", "a\x00", "b" * 12, "\ud800", "é"] + [f"doc{i}" for i in range(40)]
    known = vocabulary.KnownIds(np.array(texts, dtype=object), parts)
    expected, indices = reference_known(texts)
    assert len(known.parts) == parts
    found = {}
    for p, (hashes, rows, usable) in enumerate(known.parts):
        assert hashes.tolist() == [reference_hash(r) for r in rows.tolist()]
        assert all(h >> (64 - (parts - 1).bit_length()) == p for h in hashes.tolist()) if parts > 1 else True
        found.update(zip(usable.tolist(), rows.tolist()))
    assert found == dict(zip(indices, expected))


# ------------------------------------------------------------------------------------------------ IdColumn
LINES = ["d1", "d1", "é🙂", "doc-long-" + "x" * 20, "d2", "d2", "d2", "k3", "d1", "new9", "new10", "k0", "a" * 9,
         "a" * 9, "zz", "new11", "k5", "d2", "doc-long-" + "x" * 20, "b" * 16, "k3", "q", "w", "new12"]
BLOCKS = [LINES[:7], [], LINES[7:8], LINES[8:19], LINES[19:]]  # an empty block, a block of one line
KNOWN = np.array(["k0", "k1", "d2", "k3", "a\x00", "\ud800", "", "k5", "q", "w", "b" * 16], dtype=object)


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(2) as executor:
        yield executor


@pytest.fixture(params=[64, 2], ids=["real-hash", "colliding-hash"])
def hash_bits(request, monkeypatch):
    """The real hash, or one that keeps only its top two bits: then most ids collide, and the callers of `_group`
    (known ids, parts, lazy and ordered columns, `index_in`) must still name every line by its own id."""
    if request.param < 64:
        real, kept = vocabulary._hash, np.uint64(((1 << request.param) - 1) << (64 - request.param))
        monkeypatch.setattr(vocabulary, "_hash", lambda matrix: real(matrix) & kept)
    return request.param


def column_of(blocks, **options) -> vocabulary.IdColumn:
    column = vocabulary.IdColumn(**options)
    for block in blocks:
        column.add(column.prepare(matrix([i.encode() for i in block])))
    return column


def as_list(ids) -> list:
    return (ids.materialise() if isinstance(ids, LazyIds) else ids).tolist()


@pytest.mark.parametrize("parts", [1, 2, 4])
@pytest.mark.parametrize("with_pool", [False, True])
@pytest.mark.parametrize("known", [None, KNOWN])
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("ordered", [True, False])
def test_id_column_codes_name_each_line(parts, with_pool, known, lazy, ordered, pool, hash_bits):
    """Each line's code names its id; ids are distinct; known ids come first, as the same objects, and match the
    lines equal to them; an ordered column of one part numbers its other ids by first appearance; runs are the runs
    of equal consecutive ids within each block."""
    column = column_of(BLOCKS, ordered=ordered, parts=parts, known=known, lazy=lazy)
    codes, ids = column.encode(pool if with_pool else None)
    (heads, lengths), ids_again = column.encode(pool if with_pool else None, runs=True)
    assert isinstance(ids, LazyIds) == lazy
    vocab = as_list(ids)
    assert codes.dtype == np.int64 and [vocab[c] for c in codes] == LINES
    assert len(set(vocab)) == len(vocab)
    head = ids.head if lazy else ids
    if known is None:
        new = vocab
        assert head.dtype == object
    else:
        assert all(a is b for a, b in zip(head[: len(known)], known)) and len(head) >= len(known)
        new = vocab[len(known) :]
        assert not set(new) & set(known.tolist())
    assert sorted(new) == sorted(set(LINES) - set(vocab[: len(vocab) - len(new)]))
    if ordered and parts == 1:
        assert new == [i for i in dict.fromkeys(LINES) if i in new]
    assert as_list(ids_again) == vocab
    assert lengths.dtype == np.int32 and np.repeat(heads, lengths).tolist() == codes.tolist()
    assert lengths.tolist() == [n for block in BLOCKS for _, n in runs_of(block)]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("known", [None, KNOWN])
def test_id_column_without_lines(lazy, known):
    """No lines: no codes, and a vocabulary of just the known ids (an object array; lazy: an empty bytes tail)."""
    for blocks in ([], [[]]):
        column = column_of(blocks, ordered=False, parts=4, known=known, lazy=lazy)
        codes, ids = column.encode()
        (heads, lengths), _ = column.encode(runs=True)
        assert len(codes) == len(heads) == len(lengths) == 0
        head = ids.head if lazy else ids
        assert head.dtype == object and head.tolist() == ([] if known is None else known.tolist())
        if lazy:
            assert len(ids.tail) == 0 and ids.tail.dtype.kind == "S"


# ------------------------------------------------------------------------------------------------ index_in
@pytest.mark.parametrize("ids, among", [
    (["a\x00", "b", "a"], ["a", "b", "c"]),  # ids the rows cannot hold: a NUL in `ids`
    (["a", "b", "c"], ["c", "a\x00", "a"]),  # ... in `among`
    ([3, "3", "x"], ["x", 3]),  # not str
    (["a", "b" * 12, "é", ""], ["", "é", "b" * 12, "z"]),  # rows
])
def test_index_in_finds_each_id_or_minus_one(ids, among, hash_bits):
    ids, among = np.array(ids, dtype=object), np.array(among, dtype=object)
    position = {key: i for i, key in enumerate(among.tolist())}
    got = vocabulary.index_in(ids, among)
    assert got.dtype == np.int64 and got.tolist() == [position.get(key, -1) for key in ids.tolist()]
