"""ranking.py's helpers held to their docstrings with small hand-made arrays, against references written here.

The fast paths (`_ascending`, `_pads_inside`, `_rows_out_of_order`, `_rows_with_repeats`) decide which rows get
sorted: each must answer exactly what its docstring defines. The slow paths must keep the order they promise (the
stable sorts of `rank_rows` and `drop_duplicates`: the order given survives among equals), `_byte_rank` must place
each id at its position in byte order, and `LexicalOrder` must rank the whole vocabulary exactly once the tied docs
asked about pass `GLOBAL_SHARE` of it, then reuse that ranking.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from ragretrieval.scoring import PAD, Qrels, Run, ScoringError, ranking, score
from ragretrieval.scoring.ids import id_bytes

NAN, INF = np.nan, np.inf
# ids whose byte order is a trap: over 8 bytes and differing in both words, a prefix of another, multi-byte UTF-8
IDS = ["baaaaaaaA", "aaaaaaaaZ", "a", "ab", "é", "z", "d7", "d10", "abcdefgh", "abcdefghi", "clueweb-0001", "Z"]


def id_key(doc_id: str) -> bytes:
    return doc_id.encode("utf-8")


def reference_rank(codes, scores, ties: str, ids, wanted=None) -> np.ndarray:
    """`rank_rows` from its definition: docs before empty slots; by score descending, the order given among equal
    scores, then each run of equal scores (holding a wanted doc, when `wanted` is given) by id descending."""
    out = []
    for r, row in enumerate(np.asarray(codes).tolist()):
        slots = [j for j, code in enumerate(row) if code != PAD]
        if ties == "score" and scores is not None:
            slots.sort(key=lambda j: -scores[r][j])  # Python's sort is stable
            ranked = []
            for _, run in itertools.groupby(slots, key=lambda j: scores[r][j]):
                run = list(run)
                if wanted is None or any(wanted[row[j]] for j in run):
                    run.sort(key=lambda j: id_key(ids[row[j]]), reverse=True)  # reverse=True stays stable
                ranked += run
            slots = ranked
        out.append([row[j] for j in slots] + [PAD] * (len(row) - len(slots)))
    return np.array(out, dtype=np.int64).reshape(np.shape(codes))


def reference_dedup(codes) -> np.ndarray:
    """`drop_duplicates` from its definition: the first occurrence of each doc, in order, then empty slots."""
    out = []
    for row in np.asarray(codes).tolist():
        kept = list(dict.fromkeys(code for code in row if code != PAD))
        out.append(kept + [PAD] * (len(row) - len(kept)))
    return np.array(out, dtype=np.int64).reshape(np.shape(codes))


# ------------------------------------------------------------------------------------------------ rank_rows
@pytest.mark.parametrize("path", ["tied docs read one by one", "whole vocabulary ranked"])
def test_rank_rows_orders_by_score_then_id_descending(path):
    """Both tie-break paths order ties as bytes do, ids over 8 bytes included (the first word decides first)."""
    rng = np.random.default_rng(11)
    codes = np.array([rng.permutation(len(IDS))[:8] for _ in range(6)])
    codes[2, 5:] = PAD
    codes[4, 7] = PAD
    scores = rng.integers(0, 3, codes.shape).astype(float)
    scores[0] = [5, 4, 4, 4, 4, 1, 1, 0]  # one run of four ties
    scores[1, :2] = scores[1, 2:4] = 1  # two runs
    unused = [f"zz-unused-{i}" for i in range(40 * len(IDS))]  # a large vocabulary: the ties stay under its share
    vocabulary = np.array(IDS + (unused if path.startswith("tied") else []), dtype=object)
    lexical = ranking.LexicalOrder(vocabulary)
    ranked = ranking.rank_rows(codes, scores, "score", lexical)
    np.testing.assert_array_equal(ranked, reference_rank(codes, scores, "score", IDS))
    assert (lexical._rank is None) == path.startswith("tied")


def test_rank_rows_leaves_ties_without_a_wanted_doc_in_the_order_given():
    """With `wanted`, a run of equal scores without a wanted doc keeps the order the row gave it (the sort by score
    is stable); only runs holding a wanted doc are ordered by id."""
    rng = np.random.default_rng(5)
    ids = [f"doc-{i:02d}" for i in range(30)]
    codes = np.array([rng.permutation(30)[:24] for _ in range(4)])
    scores = rng.integers(0, 4, codes.shape).astype(float)
    wanted = np.zeros(30, dtype=bool)
    wanted[[3, 17, 22]] = True
    lexical = ranking.LexicalOrder(np.array(ids, dtype=object))
    ranked = ranking.rank_rows(codes, scores, "score", lexical, wanted)
    np.testing.assert_array_equal(ranked, reference_rank(codes, scores, "score", ids, wanted))
    assert not np.array_equal(ranked, reference_rank(codes, scores, "score", ids))  # some ties were left alone
    nothing = np.zeros(30, dtype=bool)  # no run holds a wanted doc: only the sort by score
    np.testing.assert_array_equal(ranking.rank_rows(codes, scores, "score", lexical, nothing),
                                  reference_rank(codes, scores, "score", ids, nothing))


@pytest.mark.parametrize("ties, with_scores", [("rank", True), ("rank", False), ("score", False)])
def test_rank_rows_in_the_order_given_moves_empty_slots_last(ties, with_scores):
    """Ranked as given (or without scores), empty slots inside a row move to its end and the docs keep their order;
    a row of two with its empty slot first too."""
    rng = np.random.default_rng(8)
    codes = np.array([rng.permutation(40)[:24] for _ in range(3)])
    codes[rng.random(codes.shape) < 0.4] = PAD
    scores = rng.random(codes.shape) if with_scores else None
    ranked = ranking.rank_rows(codes, scores, ties, ranking.LexicalOrder(np.arange(40).astype(str).astype(object)))
    np.testing.assert_array_equal(ranked, reference_dedup(codes))  # no repeats here: the docs in order, then pads
    pair = np.array([[PAD, 5], [4, 5]])
    np.testing.assert_array_equal(ranking.rank_rows(pair, None, ties, ranking.LexicalOrder(np.arange(6))),
                                  [[5, PAD], [4, 5]])


def test_rank_rows_reads_no_score_of_an_empty_slot():
    """An empty slot goes last whatever score the run holds for it: above every doc, or -inf beside a doc scored
    -inf (as `Run.from_dict` fills it)."""
    codes = np.array([[3, PAD, 0, 1]])
    lexical = ranking.LexicalOrder(np.array(["a", "b", "c", "d"], dtype=object))
    np.testing.assert_array_equal(ranking.rank_rows(codes, np.array([[1.0, 5.0, 2.0, 2.0]]), "score", lexical),
                                  [[1, 0, 3, PAD]])
    run = Run.from_dict({"q1": {"a": 1.0, "b": -INF}, "q2": {"c": -INF, "a": 2.0, "zz": 0.5}})
    np.testing.assert_array_equal(run.doc_ids[ranking.ranked_codes(run, "score")[0, :2]], ["a", "b"])
    assert ranking.ranked_codes(run, "score")[0, 2] == PAD


def test_infinite_scores_rank_without_a_warning():
    """Equal infinite scores tie like any others; the `inf - inf` met while checking the order warns of nothing."""
    run = Run.from_dict({"q1": {"a": -INF, "b": -INF, "c": 1.0}, "q2": {"a": INF, "c": INF, "b": 0.0}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranked = ranking.ranked_codes(run, "score")
    assert run.doc_ids[ranked].tolist() == [["c", "b", "a"], ["c", "a", "b"]]


# ------------------------------------------------------------------------------------------------ LexicalOrder
def test_the_whole_vocabulary_is_ranked_once_the_tied_docs_pass_its_share():
    """Tied docs are read one by one until those asked about (summed over calls) pass `GLOBAL_SHARE` of the
    vocabulary; reaching it exactly is not passing it. Then the vocabulary is ranked once, and that rank reused."""
    n = round(2 / ranking.GLOBAL_SHARE)  # two tied docs reach the share
    lexical = ranking.LexicalOrder(np.array([f"d{i}" for i in range(n)], dtype=object))
    tied_pair = np.array([[1.0, 1.0, 0.0]])
    assert ranking.rank_rows(np.array([[0, 1, 2]]), tied_pair, "score", lexical).tolist() == [[1, 0, 2]]
    assert lexical._rank is None  # 2 of n asked: at the share, not past it
    assert ranking.rank_rows(np.array([[3, 4, 5]]), tied_pair, "score", lexical).tolist() == [[4, 3, 5]]
    rank = lexical._rank
    assert rank is not None  # 4 of n asked: the whole vocabulary is ranked
    assert ranking.rank_rows(np.array([[6, 7, 0]]), tied_pair, "score", lexical).tolist() == [[7, 6, 0]]
    assert lexical._rank is rank  # and reused, not ranked again


def test_tied_docs_whose_ids_have_equal_bytes_keep_the_order_given():
    """`LexicalOrder.order` is a stable sort: ids equal as zero-padded bytes (one ends in NUL) keep the order they
    were given in, in each group, in a sort big enough for NumPy's default sort not to be stable."""
    ids = [f"k{i:02d}" for i in range(30)] + [f"k{i:02d}\x00" for i in range(30)]
    vocabulary = np.array(ids + [f"unused{i}" for i in range(400)], dtype=object)  # the ties stay under its share
    codes = np.random.default_rng(0).permutation(60)
    group = (codes % 3 == 0).astype(np.int64)
    lexical = ranking.LexicalOrder(vocabulary)
    order = lexical.order(codes, group)
    assert lexical._rank is None

    def key(i):
        padded = ids[codes[i]].encode("utf-8").ljust(8, b"\x00")
        return int(group[i]), bytes(255 - b for b in padded)  # id descending

    assert order.tolist() == sorted(range(60), key=key)  # Python's sort is stable


def test_byte_rank_places_each_id_at_its_position_in_byte_order():
    """`_byte_rank` gives each id the position of its bytes among the distinct ids in byte order (an index:
    placing the distinct ids there sorts them); a repeated id ("aaaaaaaaZ") takes its first's rank."""
    ids = np.array(IDS + ["aaaaaaaaZ", ""], dtype=object)
    rank = ranking._byte_rank(id_bytes(ids, np.arange(len(ids))))
    distinct = sorted(set(ids.tolist()), key=id_key)
    assert rank.tolist() == [distinct.index(i) for i in ids.tolist()]
    placed = np.empty(len(distinct), dtype=object)
    placed[rank] = ids
    assert placed.tolist() == distinct


def test_byte_rank_gives_byte_equal_ids_one_rank():
    """Ids equal once zero-padded (a repeat, or an id with trailing NULs) share a rank, and ranks stay dense: the
    next id up is one more, wherever the equal ones stand in the vocabulary."""
    ids = np.array(["b", "a", "a\x00", "c", "a", "b\x00\x00", "aaaaaaaa", "aaaaaaaa\x00"], dtype=object)
    assert ranking._byte_rank(id_bytes(ids, np.arange(len(ids)))).tolist() == [2, 0, 0, 3, 0, 2, 1, 1]
    assert ranking._byte_rank(id_bytes(ids[:0], np.arange(0))).tolist() == []


# ------------------------------------------------------------------------------------------------ fast paths
@pytest.mark.parametrize("key, pad, expected", [
    ([[1.0, 2.0, 3.0]], [[0, 0, 0]], True),
    ([[1.0, 1.0, 2.0]], [[0, 0, 0]], True),  # a key that stays
    ([[0.25, 0.5, 0.75]], [[0, 0, 0]], True),  # steps under 1
    ([[2.0, 1.0]], [[0, 0]], False),
    ([[1.0, NAN, NAN]], [[0, 1, 1]], True),  # empty slots at the end are ignored
    ([[NAN, NAN]], [[1, 1]], True),
    ([[1.0, NAN, 2.0]], [[0, 1, 0]], False),  # a doc after an empty slot
    ([[1.0, 2.0], [2.0, 1.0]], [[0, 0], [0, 0]], False),  # one row falls
    ([[1.0, 2.0], [3.0, NAN]], [[0, 0], [0, 1]], True),
    ([[5.0], [1.0]], [[0], [0]], True),
])
def test_ascending_is_true_exactly_when_every_row_rises_or_stays(key, pad, expected):
    assert ranking._ascending(np.array(key), np.array(pad, dtype=bool)) is expected


@pytest.mark.parametrize("pad, expected", [
    (np.zeros((2, 0), dtype=bool), False),
    ([[1]], False),  # one slot: nothing can follow an empty one
    ([[0]], False),
    ([[0, 0]], False),
    ([[0, 1]], False),
    ([[1, 0]], True),
    ([[0, 1, 0]], True),
    ([[0, 0, 1], [1, 1, 1]], False),
    ([[0, 0, 1], [0, 1, 0]], True),
])
def test_pads_inside_is_true_exactly_when_an_empty_slot_precedes_a_doc(pad, expected):
    assert ranking._pads_inside(np.array(pad, dtype=bool)) is expected


OUT_OF_ORDER_CODES = np.array([[0, 1, 2], [0, 1, 2], [0, 1, PAD], [0, PAD, PAD], [0, PAD, 1], [2, 1, 0],
                               [PAD, PAD, PAD], [0, 1, PAD], [0, PAD, PAD]])
OUT_OF_ORDER_SCORES = np.array([[3, 2, 1], [3, 3, 1], [3, 2, NAN], [5, NAN, NAN], [5, 4, 1], [1, 2, 3],
                                [NAN, NAN, NAN], [3, 2, -INF], [1, 7, 7]], dtype=float)


@pytest.mark.parametrize("ties, scores, expected", [
    ("score", OUT_OF_ORDER_SCORES, [1, 4, 5]),  # a tie, an empty slot before a doc (scores falling), rising scores
    ("rank", OUT_OF_ORDER_SCORES, [4]),
    ("score", None, [4]),
])
def test_rows_out_of_order_are_exactly_those_with_a_gap_or_scores_not_strictly_falling(ties, scores, expected):
    rows = ranking._rows_out_of_order(OUT_OF_ORDER_CODES, scores, ties)
    assert rows.tolist() == expected
    no_pad = OUT_OF_ORDER_CODES[[0, 1, 5]]  # a block without empty slots
    rows = ranking._rows_out_of_order(no_pad, None if scores is None else scores[[0, 1, 5]], ties)
    assert rows.tolist() == ([1, 2] if ties == "score" and scores is not None else [])


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (2, 1), (0, 1)])
def test_rows_out_of_order_and_with_repeats_of_blocks_with_nothing_to_order(shape):
    """No rows, or rows too short to hold two docs: no row to rank or de-duplicate, as positions that index."""
    codes = np.zeros(shape, dtype=np.int64)
    codes[:1] = PAD
    for rows in (ranking._rows_out_of_order(codes, np.zeros(shape), "score"),
                 ranking._rows_out_of_order(codes, None, "rank"), ranking._rows_with_repeats(codes)):
        assert rows.tolist() == []
        assert codes[rows].shape == (0, shape[1])  # positions: an int array


def test_rows_with_repeats_are_exactly_those_listing_a_doc_twice():
    codes = np.array([[0, 1, 2], [0, 1, 0], [0, PAD, PAD], [PAD, PAD, 3], [2, PAD, 2], [5, 5, PAD], [PAD] * 3])
    assert ranking._rows_with_repeats(codes).tolist() == [1, 4, 5]  # empty slots aside
    assert ranking._rows_with_repeats(codes[[0, 1]]).tolist() == [1]  # a block without empty slots


# ------------------------------------------------------------------------------------------------ drop_duplicates
def test_drop_duplicates_keeps_the_first_of_each_doc_in_rank_order():
    """Rows as ranked (empty slots last) lose their repeated docs, the others closing up in order."""
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 15, (4, 24))
    codes[np.arange(24) >= rng.integers(10, 25, (4, 1))] = PAD
    np.testing.assert_array_equal(ranking.drop_duplicates(codes), reference_dedup(codes))


def test_drop_duplicates_names_the_row_and_the_code_when_not_given_their_ids():
    """With ``mode="error"``, the query and the doc are named by their ids when given, else by row and code."""
    codes = np.array([[1, 2, 3], [4, 2, 4]])
    ids = np.array(["d0", "d1", "d2", "d3", "d4"], dtype=object)
    queries = np.array(["q0", "q1"], dtype=object)
    for query_ids, doc_ids, message in [(queries, ids, "query 'q1' retrieves document 'd4' more than once"),
                                        (None, ids, "query 1 retrieves document 'd4' more than once"),
                                        (queries, None, "query 'q1' retrieves document 4 more than once"),
                                        (None, None, "query 1 retrieves document 4 more than once")]:
        with pytest.raises(ScoringError) as error:
            ranking.drop_duplicates(codes, "error", query_ids, doc_ids)
        assert str(error.value) == message


# ------------------------------------------------------------------------------------------------ _canonical_block
BLOCK_IDS = np.array(["a", "b", "c", "d", "e"], dtype=object)
BLOCK_CODES = np.array([[0, 1, 2, PAD],  # clean: distinct docs, scores falling
                        [1, 3, 0, PAD],  # scores rising: out of order
                        [4, 2, 4, 1],  # in order, a repeated doc
                        [2, 0, 4, 3],  # clean
                        [3, PAD, 2, PAD]])  # an empty slot before a doc, scores rising
BLOCK_SCORES = np.array([[9, 8, 7, NAN], [1, 2, 3, NAN], [9, 8, 7, 6], [4, 3, 2, 1], [4, NAN, 5, NAN]], dtype=float)


def block_run() -> Run:
    return Run.from_arrays(["q0", "q1", "q2", "q3", "q4"], BLOCK_IDS, BLOCK_CODES, BLOCK_SCORES)


@pytest.mark.parametrize("rows", [[0, 1, 2, 3, 4], [2, 3], [2, 3, 4], [2, 4], [3, 4], [0, 4]])
@pytest.mark.parametrize("ties", ["score", "rank"])
@pytest.mark.parametrize("narrow", [False, True])
def test_canonical_block_ranks_and_deduplicates_without_writing_into_the_run(rows, ties, narrow):
    """Rows read in place (consecutive: a view of the run's read-only arrays) or gathered, in int64 or int32, come
    back ranked and de-duplicated as the definitions say; the run's own arrays are never written. With ``ties="rank"``
    the scores are not read: only the empty slots move."""
    run = block_run()
    got = ranking._canonical_block(run, np.array(rows), ties, "first", ranking.LexicalOrder(run.vocabulary), narrow)
    expected = reference_dedup(reference_rank(BLOCK_CODES[rows], BLOCK_SCORES[rows], ties, BLOCK_IDS.tolist()))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == (np.int32 if narrow else np.int64)
    np.testing.assert_array_equal(run.codes, BLOCK_CODES)


def test_canonical_block_with_keep_orders_only_the_rows_kept():
    """With `keep`, only those positions are ranked and de-duplicated; the rows passed over come back as given."""
    run = block_run()
    got = ranking._canonical_block(run, np.arange(5), "score", "first", ranking.LexicalOrder(run.vocabulary), False,
                                   keep=np.array([1, 3]))
    expected = BLOCK_CODES.copy()
    expected[1] = reference_rank(BLOCK_CODES[[1]], BLOCK_SCORES[[1]], "score", BLOCK_IDS.tolist())[0]
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(run.codes, BLOCK_CODES)


@pytest.mark.parametrize("narrow", [False, True])
def test_canonical_block_names_the_query_and_the_doc_retrieved_twice(narrow):
    run = block_run()
    with pytest.raises(ScoringError) as error:
        ranking._canonical_block(run, np.array([1, 2]), "score", "error", ranking.LexicalOrder(run.vocabulary),
                                 narrow)
    assert str(error.value) == "query 'q2' retrieves document 'e' more than once"


# ------------------------------------------------------------------------------------------------ judged_ranks
def test_judged_ranks_of_a_run_listing_the_queries_in_another_order():
    """The run's rows in the reverse order of the qrels' queries: every query still gets the ranks of its docs."""
    qrels = Qrels.from_dict({"q0": {"a": 1}, "q1": {"b": 1}, "q2": {"c": 1, "a": 1}})
    run = Run.from_dict({"q2": {"a": 3.0, "b": 2.0, "c": 1.0}, "q1": {"c": 2.0, "b": 1.0}, "q0": {"a": 1.0}})
    result = score(qrels, run, ["mrr", "recall@2"])
    assert result.per_query["mrr"].tolist() == [1.0, 0.5, 1.0]
    assert result.per_query["recall@2"].tolist() == [1.0, 1.0, 0.5]


def test_rows_far_apart_with_a_repeated_doc_raise_when_duplicates_are_errors():
    """Queries whose run rows lie far apart (gathered, not read in place) are de-duplicated in the mode asked."""
    qrels = Qrels.from_dict({"q0": {"a": 1}, "q5": {"b": 1}})
    run = Run.from_arrays([f"q{i}" for i in range(8)], ["a", "b"], [[0, 1]] * 5 + [[1, 1]] + [[0, 1]] * 2,
                          np.tile([2.0, 1.0], (8, 1)))
    with pytest.raises(ScoringError) as error:
        score(qrels, run, "mrr", duplicates="error")
    assert str(error.value) == "query 'q5' retrieves document 'b' more than once"
    assert score(qrels, run, "mrr").per_query["mrr"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("duplicates", ["first", "error"])
def test_a_query_judged_with_no_document_beside_one_with_a_single_judgement(duplicates):
    """Rows with fewer judgements than the most of their block (here none, and a run row passed over) are looked
    up in nothing: the one judgement there is gets its rank."""
    qrels = Qrels.from_dict({"q0": {"a": 1}, "q2": {}})
    run = Run.from_dict({"q0": {"b": 2.0, "a": 1.0}, "q1": {"a": 1.0}, "q2": {"a": 1.0}})
    assert score(qrels, run, "mrr", duplicates=duplicates).per_query["mrr"].tolist() == [0.5, 0.0]
