"""`line_codes.code_lines`: a streamed batch's doc codes, line by line. Two lines share a code exactly when they name
the same doc in the same query, or the same judged doc; a judged doc's line takes its code. Checked against that
rule, with real hashes and with hashes that collide everywhere, and end to end: a streamed run scored with colliding
hashes gives the in-memory numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.scoring import line_codes, scan, score, score_files, stream, vocabulary
from ragretrieval.scoring.trec import read_qrels, read_run, write_qrels
from ragretrieval.scoring.vocabulary import KnownIds

from .test_streaming import METRICS, messy, run_text


def prepared(ids: list[str], block: int = 3) -> list:
    """The doc column of lines `ids`, prepared in blocks of `block` lines as the parsers prepare it."""
    out = []
    for at in range(0, len(ids), block):
        chunk = [i.encode() for i in ids[at : at + block]]
        width = max(8, -(-max(map(len, chunk)) // 8) * 8)
        matrix = np.zeros((len(chunk), width), np.uint8)
        for row, token in enumerate(chunk):
            matrix[row, : len(token)] = np.frombuffer(token, np.uint8)
        out.append(line_codes.LineIds().prepare(matrix))
    return out


def check(ids: list[str], queries: list[int], known: list[str], block: int = 3) -> None:
    lookup = KnownIds(np.array(known, dtype=object), 1)
    codes, vocabulary_ = line_codes.code_lines(prepared(ids, block), np.array(queries), lookup)
    k = len(known)
    assert len(vocabulary_) == k + len(ids) and list(vocabulary_.head) == known
    assert [vocabulary_.take([c])[0] for c in codes.tolist()] == ids  # each code names its line's id
    position = {doc: i for i, doc in enumerate(known)}
    for i, (doc, query) in enumerate(zip(ids, queries)):
        if doc in position:
            assert codes[i] == position[doc]
        else:  # the first line of this doc in this query gives the code
            first = next(j for j in range(i + 1) if ids[j] == doc and queries[j] == query)
            assert codes[i] == k + first
    for i in range(len(ids)):
        for j in range(len(ids)):
            same_doc = ids[i] == ids[j] and (queries[i] == queries[j] or ids[i] in position)
            assert (codes[i] == codes[j]) == same_doc, (i, j)


IDS = st.lists(st.sampled_from(["a", "b", "doc-1", "doc-10", "é", "x" * 17, "x" * 16, "🙂"]), min_size=0, max_size=30)


@given(ids=IDS, data=st.data())
@settings(max_examples=150)
def test_codes_follow_the_rule(ids, data):
    queries = sorted(data.draw(st.lists(st.integers(0, 4), min_size=len(ids), max_size=len(ids))))
    known = data.draw(st.lists(st.sampled_from(["a", "doc-10", "x" * 17, "never"]), unique=True))
    check(ids, queries, known)


@pytest.mark.parametrize("bits", [0, 1, 2])
def test_codes_follow_the_rule_when_hashes_collide(monkeypatch, bits):
    """Every hash kept to its low `bits` bits (0: one hash for every id): known ids sharing a hash, lines sharing a
    hash in one query (groups of two and of more), both checked byte for byte."""
    real = vocabulary._hash
    weak = lambda matrix: real(matrix) & np.uint64((1 << bits) - 1)  # noqa: E731
    monkeypatch.setattr(vocabulary, "_hash", weak)
    monkeypatch.setattr(line_codes, "hash_rows", weak)
    rng = np.random.default_rng(bits)
    pool = ["a", "b", "c", "doc-1", "doc-2", "é", "x" * 20, "y" * 9]
    for _ in range(40):
        ids = [pool[i] for i in rng.integers(0, len(pool), int(rng.integers(0, 25)))]
        queries = sorted(rng.integers(0, 3, len(ids)).tolist())
        known = [pool[i] for i in sorted(set(rng.integers(0, len(pool), int(rng.integers(0, 5))).tolist()))]
        check(ids, queries, known, block=int(rng.integers(1, 6)))


def test_scores_stay_exact_when_every_hash_collides(tmp_path, monkeypatch):
    real = vocabulary._hash
    weak = lambda matrix: real(matrix) & np.uint64(3)  # noqa: E731
    qrels, rankings = messy(5, 40)
    write_qrels(qrels, tmp_path / "q.txt")
    (tmp_path / "r.txt").write_bytes(run_text(rankings, "grouped", np.random.default_rng(0)))
    judged = read_qrels(tmp_path / "q.txt")
    expected = score(judged, read_run(tmp_path / "r.txt", doc_ids=judged.doc_ids), METRICS, duplicates="first")
    monkeypatch.setattr(vocabulary, "_hash", weak)
    monkeypatch.setattr(line_codes, "hash_rows", weak)
    monkeypatch.setattr(scan, "BLOCK_BYTES", 512)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2048)
    got = score_files(tmp_path / "q.txt", tmp_path / "r.txt", METRICS)
    assert all(np.array_equal(got.per_query[m], expected.per_query[m]) for m in expected.per_query)


def test_an_empty_batch_and_a_line_alone():
    lookup = KnownIds(np.array(["a"], dtype=object), 1)
    codes, ids = line_codes.code_lines([], np.zeros(0, np.int64), lookup)
    assert codes.tolist() == [] and len(ids) == 1
    codes, ids = line_codes.code_lines(prepared(["a"]), np.array([0]), lookup)
    assert codes.tolist() == [0] and len(ids) == 2


def test_an_id_that_is_not_utf8_is_refused():
    matrix = np.zeros((1, 8), np.uint8)
    matrix[0, :2] = [0x64, 0xFF]
    with pytest.raises(UnicodeDecodeError):
        line_codes.code_lines([line_codes.LineIds().prepare(matrix)], np.array([0]),
                              KnownIds(np.zeros(0, object), 1))


def test_codes_follow_the_rule_when_query_numbers_leave_no_room_for_a_hash_prefix():
    """Query numbers of 57 bits leave fewer than 8 bits of the packed sort key for the hash: lines are then sorted
    by query and whole hash (the path of a batch of some 2**28 lines), with the same codes."""
    big = 1 << 56
    check(["a", "b", "a", "a", "c", "b"], [0, 0, 0, big, big, big], ["c"])
    check(["x" * 17, "x" * 16, "x" * 17, "é"], [big, big, big + 1, big + 1], [])


def test_every_known_id_is_found_among_many_lines_and_unknown_ids():
    """Thousands of known ids (the prefilter's table then has 2**17 slots): every line naming one takes its code,
    every other line keeps a code of its own."""
    rng = np.random.default_rng(7)
    known = [f"doc-{i}" for i in rng.choice(10**6, 5000, replace=False)]
    ids = [known[i] if rng.random() < 0.3 else f"doc-x{i}" for i in rng.integers(0, len(known), 20000)]
    codes, _ = line_codes.code_lines(prepared(ids, block=4096), np.arange(len(ids)),
                                     KnownIds(np.array(known, dtype=object), 1))
    position = {doc: i for i, doc in enumerate(known)}
    assert codes.tolist() == [position.get(doc, len(known) + i) for i, doc in enumerate(ids)]
