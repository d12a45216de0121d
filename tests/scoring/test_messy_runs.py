"""Messy runs: score ties broken from the tied docs' bytes, run doc ids kept as bytes until asked for, and agreement
with pytrec_eval (trec_eval's semantics) on TREC files full of ties, repeated lines and missing queries.

The new internal paths are forced and compared with the default ones: the vocabulary ranked whole or only the tied
docs (`GLOBAL_SHARE`), ids held as `LazyIds` or decoded, ids ordered as UTF-8 words or as NumPy str (how the scorer
ordered them before).
"""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

from ragretrieval.scoring import PAD, Qrels, Run, ranking, score, vocabulary
from ragretrieval.scoring.ids import LazyIds, check_utf8, id_bytes
from ragretrieval.scoring.trec import TrecFormatError, read_qrels, read_run

pytrec_eval = pytest.importorskip("pytrec_eval")

METRICS = ["precision@1", "precision@5", "recall@3", "hit_rate@2", "mrr", "mrr@3", "f1@4", "ndcg@3", "ndcg",
           "ndcg_exp@5", "map", "map@2", "r_precision"]
# ids whose byte order is a trap: shared prefixes over 8 bytes, lengths at and around a word, multi-byte UTF-8
PREFIXES = ["d", "D", "doc-", "clueweb12-0000tw-", "é", "ü/🙂", "x" * 15, "z"]


def messy_ids(rng, n: int) -> list[str]:
    return list(dict.fromkeys(f"{PREFIXES[int(rng.integers(len(PREFIXES)))]}{int(rng.integers(10**6))}"
                              for _ in range(n)))


# ------------------------------------------------------------------------------------------------ byte order
def numpy_str_rank(ids: np.ndarray) -> np.ndarray:
    """How the scorer ordered ids before: NumPy str (code points; trailing NULs dropped), equal ids one rank."""
    return np.unique(ids.astype(str), return_inverse=True)[1].ravel()


def test_ids_order_as_utf8_words_as_they_did_as_numpy_str():
    """`_byte_rank` of `id_bytes` (big-endian words of UTF-8) ranks ids exactly as NumPy str did, equal ones (also
    "a" and "a\\0") sharing a rank: NULs inside and at the end, lone surrogates, the empty id, non-str ids, lengths
    around 8 bytes."""
    rng = np.random.default_rng(3)
    alphabet = ["a", "b", "z", "A", "0", "\x00", "\x7f", "é", "ÿ", "\u0800", "\ud800", "\udfff", "\ue000", "🙂", "-"]
    ids = ["".join(rng.choice(alphabet, int(rng.integers(0, 20)))) for _ in range(3000)]
    ids += ["", "a", "a\x00", "a\x00b", "abcdefgh", "abcdefgh\x00", "abcdefghi", 7, 12.5]
    ids = np.array(ids, dtype=object)
    rank = ranking._byte_rank(id_bytes(ids, np.arange(len(ids))))
    np.testing.assert_array_equal(rank, numpy_str_rank(ids))
    assert rank[-8] == rank[-7] and rank[-5] == rank[-4] != rank[-3]  # "a" = "a\0", "abcdefgh" = "abcdefgh\0"


@pytest.mark.parametrize("first", ["a", "a\x00"])
def test_ids_that_differ_by_trailing_nuls_tie_alike_on_either_path(monkeypatch, first):
    """"a" and "a\\0" are one id to `strcmp` (trec_eval's tie-break) and pad to the same bytes: tied, they keep the
    order given, whether only the tied docs' bytes are read (GLOBAL_SHARE inf) or the whole vocabulary is ranked
    (0). The two paths once disagreed here (the vocabulary's order against the order given: MRR 1.0 against 0.5)."""
    second = "a" if first == "a\x00" else "a\x00"
    qrels = Qrels.from_dict({"q": {"a\x00": 1}})
    run = Run.from_dict({"q": {first: 1.0, second: 1.0, **{f"pad{i}": 0.5 for i in range(20)}}})
    expected = 1.0 if first == "a\x00" else 0.5
    for share in (np.inf, 0.0):
        monkeypatch.setattr(ranking, "GLOBAL_SHARE", share)
        assert score(qrels, run, "mrr").means["mrr"] == expected, share


def test_ids_held_as_bytes_order_as_the_same_ids_decoded():
    """A `LazyIds` vocabulary (head ids as str, tail ids as bytes) gives the same byte rows, so the same order."""
    rng = np.random.default_rng(4)
    ids = np.array(messy_ids(rng, 2000), dtype=object)
    tail = np.array([i.encode() for i in ids[500:]], dtype=bytes)
    lazy = LazyIds(ids[:500], tail.astype(f"S{-(-tail.dtype.itemsize // 8) * 8}"))
    codes = rng.permutation(len(ids))[:1500]
    np.testing.assert_array_equal(id_bytes(lazy, codes), id_bytes(ids, codes))
    np.testing.assert_array_equal(lazy.take(codes), ids[codes])
    assert list(lazy.materialise()) == list(ids) and all(a is b for a, b in zip(lazy.materialise()[:500], ids))


# ------------------------------------------------------------------------------------------------ tie-breaking
@pytest.mark.parametrize("share", [0.25, 0.0])
def test_tied_docs_order_by_group_then_id_descending(monkeypatch, share):
    """`LexicalOrder.order` (byte-string keys: the group big-endian, then the id complemented; or, past
    GLOBAL_SHARE, the vocabulary's rank) is the stable sort by (group, id bytes descending): groups past one byte,
    ids that prefix others, NULs, lone surrogates, non-str ids, repeated codes (equal ids keep their order)."""
    rng = np.random.default_rng(9)
    alphabet = ["a", "b", "z", "A", "0", "\x00", "é", "\ud800", "🙂", "-"]
    ids = list(dict.fromkeys("".join(rng.choice(alphabet, int(rng.integers(1, 12)))) for _ in range(2000)))
    ids = np.array(ids + ["ab", "abc", "abcdefgh", "abcdefghi", 7], dtype=object)
    codes = rng.integers(0, len(ids), 3000)
    group = np.sort(rng.integers(0, 70_000, 3000))  # runs of ties come in order, as in `_break_ties`
    key = [(str(i) if not isinstance(i, str) else i).encode("utf-8", "surrogatepass") for i in ids]
    expected = sorted(sorted(range(len(codes)), key=lambda i: key[codes[i]], reverse=True), key=lambda i: group[i])
    assert expected != sorted(range(len(codes)), key=lambda i: group[i])  # some ties to break
    monkeypatch.setattr(ranking, "GLOBAL_SHARE", share)
    got = ranking.LexicalOrder(ids).order(codes, group)
    assert [codes[i] for i in got] == [codes[i] for i in expected]
    equal = [i for i in got if codes[i] == codes[got[0]] and group[i] == group[got[0]]]
    assert equal == sorted(equal)  # a code repeated within a group keeps its order


def tied_case(rng, n_queries: int = 40, depth: int = 30) -> tuple[Qrels, Run]:
    """Rows tied everywhere (scores in quarters), empty slots anywhere, docs scored -inf, repeated docs."""
    docs = messy_ids(rng, 300)
    codes = rng.integers(0, len(docs), (n_queries, depth))
    scores = rng.integers(0, 6, (n_queries, depth)) / 4
    scores[rng.random(scores.shape) < 0.05] = -np.inf
    codes[rng.random(codes.shape) < 0.1] = PAD
    labels = {f"q{i}": {docs[d]: int(rng.integers(0, 4)) for d in rng.choice(len(docs), 8, replace=False)}
              for i in range(n_queries)}
    return Qrels.from_dict(labels), Run.from_arrays([f"q{i}" for i in range(n_queries)], docs, codes, scores)


def reference_order(run: Run, row: int) -> list[str]:
    """trec_eval's ranking from the definition: score descending, then doc id descending (bytes), repeats kept."""
    pairs = [(run.doc_ids[c], s) for c, s in zip(run.codes[row], run.scores[row]) if c != PAD]
    by_id = sorted(pairs, key=lambda pair: pair[0].encode(), reverse=True)
    return [doc for doc, _ in sorted(by_id, key=lambda pair: -pair[1])]


@pytest.mark.parametrize("share", [0.0, 0.25, np.inf])
def test_ties_broken_the_same_whether_the_vocabulary_is_ranked_whole_or_not(monkeypatch, share):
    """GLOBAL_SHARE = 0 ranks the whole vocabulary at the first tie, inf never does (only the tied docs' bytes),
    0.25 (the default) switches part way (blocks of 4 rows); each gives trec_eval's order, row by row."""
    monkeypatch.setattr(ranking, "GLOBAL_SHARE", share)
    monkeypatch.setattr(ranking, "BLOCK_ROWS", 4)
    for seed in range(20):
        qrels, run = tied_case(np.random.default_rng(seed))
        ranked = ranking.ranked_codes(run, "score")
        for row in range(run.n_queries):
            assert [run.doc_ids[c] for c in ranked[row] if c != PAD] == reference_order(run, row), (seed, row)
            assert (ranked[row] == PAD).sum() == (run.codes[row] == PAD).sum()
            assert np.all(np.diff(ranked[row] == PAD) >= 0)  # empty slots last


def test_rows_out_of_order_alone_are_ranked_as_a_whole_block_would_be():
    """`_canonical_block` ranks only the rows out of order and de-duplicates only the rows with a repeat; ranking
    and de-duplicating every row of the block (the way it was done) gives the same block, for rows taken in any
    order (a copy) or consecutive (a view of the run, which must stay untouched)."""
    rng = np.random.default_rng(5)
    for seed in range(30):
        _, run = tied_case(np.random.default_rng(seed))
        clean = rng.random(run.n_queries) < 0.6  # most rows in rank order: distinct docs, falling scores
        codes, scores = run.codes.copy(), run.scores.copy()
        for row in np.flatnonzero(clean):
            codes[row] = rng.choice(run.n_docs, run.depth, replace=False)
            scores[row] = np.sort(rng.random(run.depth))[::-1]
        run = Run.from_arrays(run.query_ids, run.doc_ids, codes, scores)
        n = int(rng.integers(1, run.n_queries))
        rows = rng.permutation(run.n_queries)[:n] if seed % 2 else np.arange(run.n_queries - n, run.n_queries)
        lexical = ranking.LexicalOrder(run.vocabulary)
        whole = ranking.drop_duplicates(ranking.rank_rows(run.codes[rows], run.scores[rows], "score", lexical))
        got = ranking._canonical_block(run, rows, "score", "first", lexical, narrow=False)
        np.testing.assert_array_equal(got, whole)
        np.testing.assert_array_equal(run.codes, codes)


def odd_vocabulary(rng, kind: str, docs: list[str]):
    """The docs as plain str, with ids only from_dict can hold (a NUL inside or at the end, ints), or as LazyIds."""
    if kind == "str":
        return np.array(docs, dtype=object)
    if kind == "odd":
        odd = docs[:]
        for i in rng.choice(len(odd), 40, replace=False):
            odd[i] = rng.choice([odd[i] + "\x00", odd[i][:2] + "\x00" + odd[i][2:], int(rng.integers(100))])
        return np.array(list(dict.fromkeys(odd)) + [f"pad{i}" for i in range(len(odd) - len(set(odd)))], dtype=object)
    tail = np.array([d.encode() for d in docs[100:]], dtype=bytes)
    return LazyIds(np.array(docs[:100], dtype=object), tail.astype(f"S{-(-tail.dtype.itemsize // 8) * 8}"))


@pytest.mark.parametrize("kind", ["str", "odd", "lazy"])
@pytest.mark.parametrize("share", [0.0, np.inf])
def test_wanted_docs_rank_as_in_the_full_ranking_once_repeats_are_dropped(monkeypatch, kind, share):
    """Ordering only the runs of ties that hold a wanted doc gives every wanted doc the rank the full tie-break gives
    it after repeated docs are dropped: with docs repeated inside and across runs of ties (a
    repeat before a wanted doc moves it up), ids held as str, with a NUL or as ints (only from_dict makes them),
    or as bytes (LazyIds), and with the vocabulary ranked whole."""
    monkeypatch.setattr(ranking, "GLOBAL_SHARE", share)
    for seed in range(25):
        rng = np.random.default_rng(seed)
        _, run = tied_case(rng)
        codes = np.where(rng.random(run.codes.shape) < 0.3, rng.integers(0, 12, run.codes.shape), run.codes)
        run = Run.from_arrays(run.query_ids, odd_vocabulary(rng, kind, list(run.doc_ids)), codes, run.scores)
        wanted = rng.random(run.n_docs) < rng.choice([0.02, 0.2, 1.0])
        full = ranking.drop_duplicates(ranking.rank_rows(run.codes, run.scores, "score",
                                                         ranking.LexicalOrder(run.vocabulary)))
        part = ranking.drop_duplicates(ranking.rank_rows(run.codes, run.scores, "score",
                                                         ranking.LexicalOrder(run.vocabulary), wanted))
        for row in range(run.n_queries):
            keep = (full[row] != PAD) & wanted[np.maximum(full[row], 0)]
            np.testing.assert_array_equal(part[row][keep], full[row][keep], err_msg=f"seed {seed}, row {row}")


def test_ties_without_a_wanted_doc_are_left_alone_and_no_wanted_rank_moves():
    """With `wanted`, only runs of ties holding a wanted doc are ordered by id: every wanted doc sits where the full
    ranking puts it, each row holds the same docs in each run of equal scores, and a run of ties without a wanted
    doc keeps the order the score sort gave it (its ids are not read)."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        _, run = tied_case(rng)
        lexical = ranking.LexicalOrder(run.vocabulary)
        wanted = rng.random(run.n_docs) < 0.05
        full = ranking.rank_rows(run.codes, run.scores, "score", lexical)
        part = ranking.rank_rows(run.codes, run.scores, "score", lexical, wanted)
        by_score = np.take_along_axis(run.codes, np.argsort(np.where(run.codes == PAD, np.nan, -run.scores), axis=1,
                                                            kind="stable"), 1)
        for row in range(run.n_queries):
            for at in np.flatnonzero((full[row] != PAD) & wanted[np.maximum(full[row], 0)]):
                assert part[row, at] == full[row, at], (seed, row, at)
            assert sorted(part[row].tolist()) == sorted(full[row].tolist())
        untouched = ~np.isin(np.arange(run.n_docs), np.flatnonzero(wanted))
        rows_without = [r for r in range(run.n_queries) if untouched[np.maximum(full[r], 0)].all()]
        for row in rows_without:  # no wanted doc in the row: the score sort's order stays
            np.testing.assert_array_equal(part[row], by_score[row])


# ------------------------------------------------------------------------------------------------ lazy doc ids
def write_lines(path, lines):
    path.write_text("".join(" ".join(map(str, line)) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_run_read_from_a_file_decodes_its_doc_ids_only_when_asked(tmp_path):
    """The doc ids no qrels names stay bytes (`LazyIds`) and score() never decodes them; `doc_ids` decodes them
    once, the known ones being the qrels' own objects; scores equal those of the same run with every id decoded,
    ties between known and unknown docs included."""
    rng = np.random.default_rng(6)
    _, run = tied_case(rng)
    qrels = Qrels.from_dict({f"q{i}": {run.doc_ids[c]: 1 for c in run.codes[i, :3] if c != PAD}
                             for i in range(run.n_queries)})
    lines = [(q, "Q0", run.doc_ids[c], 1, s, "t") for q, codes, scores in zip(run.query_ids, run.codes, run.scores)
             for c, s in zip(codes, scores) if c != PAD]
    lazy = read_run(write_lines(tmp_path / "run.txt", lines), doc_ids=qrels.doc_ids)
    assert isinstance(lazy.vocabulary, LazyIds) and lazy.vocabulary.head is qrels.doc_ids
    results = [score(qrels, lazy, METRICS, **options) for options in ({}, {"depth": 4}, {"rel_level": 2})]
    assert isinstance(lazy.vocabulary, LazyIds)  # scoring decoded nothing
    decoded = Run.from_arrays(lazy.query_ids, lazy.vocabulary.materialise(), lazy.codes, lazy.scores)
    for result, options in zip(results, ({}, {"depth": 4}, {"rel_level": 2})):
        expected = score(qrels, decoded, METRICS, **options)
        for metric in METRICS:
            np.testing.assert_array_equal(result.per_query[metric], expected.per_query[metric])
    assert lazy.n_docs == len(lazy.doc_ids) and isinstance(lazy.vocabulary, np.ndarray)
    assert all(lazy.doc_ids[i] is qrels.doc_ids[i] for i in range(len(qrels.doc_ids)))
    assert list(lazy.doc_ids) == list(decoded.doc_ids)


def test_a_repeated_unknown_doc_is_named_in_the_error(tmp_path):
    path = write_lines(tmp_path / "run.txt", [("q", "Q0", "known", 1, 2, "t"), ("q", "Q0", "ünknown-doc", 2, 1, "t"),
                                              ("q", "Q0", "ünknown-doc", 3, 0.5, "t")])
    qrels = Qrels.from_dict({"q": {"known": 1}})
    with pytest.raises(ValueError, match="query 'q' retrieves document 'ünknown-doc' more than once"):
        score(qrels, read_run(path, doc_ids=qrels.doc_ids), "mrr", duplicates="error")


@pytest.mark.parametrize("known", [None, ["a", "b"]])
@pytest.mark.parametrize("ids, line", [([b"a", b"\xc3", b"b"], 2), ([b"x\xc3", b"\xa9y"], 1), ([b"ok", b"\xff"], 2)])
def test_doc_ids_that_are_not_utf8_are_refused_while_reading(tmp_path, known, ids, line):
    """Ids kept as bytes are still checked when the file is read, and two ids that are each broken are not read
    as one character (b"x\\xc3" then b"\\xa9y" would join into "xéy")."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"".join(b"q Q0 " + doc + b" 1 1 t\n" for doc in ids))
    with pytest.raises(TrecFormatError, match=f"run.txt:{line}: document id .* is not valid UTF-8"):
        read_run(path, doc_ids=known)


def test_the_utf8_check_does_not_join_a_full_width_id_with_the_next():
    """An id as wide as its row has no padding after it: its last byte must not pair with the next id's first."""
    with pytest.raises(UnicodeDecodeError):
        check_utf8(np.array([b"abcdefg\xc3", b"\xa9y"], dtype="S8"))
    check_utf8(np.array(["abcdeféx".encode(), "é".encode(), b"plain"], dtype="S16"))  # valid: no error


def test_known_ids_no_token_can_equal_match_nothing(tmp_path):
    """Known ids holding a NUL (inside or at the end) or a lone surrogate cannot be in a file; they are left out of
    the lookup instead of breaking it, and the run's own ids stay distinct from them."""
    path = write_lines(tmp_path / "run.txt", [("q", "Q0", "a", 1, 3, "t"), ("q", "Q0", "ab", 2, 2, "t"),
                                              ("q", "Q0", "b", 3, 1, "t")])
    qrels = Qrels.from_dict({"q": {"a\x00b": 1, "a\x00": 1, "\ud800": 1, "b": 1}})
    run = read_run(path, doc_ids=qrels.doc_ids)
    assert [run.doc_ids[c] for c in run.codes[0]] == ["a", "ab", "b"]
    assert run.codes[0, 2] == list(qrels.doc_ids).index("b") and run.n_docs == 6


def test_known_ids_encoded_together_as_one_by_one():
    """`_known_rows` encodes the known ids joined in one call, or one by one when an id holds a NUL or cannot be
    encoded; both give the same rows for the same ids, and leave out the ids no token can equal."""
    rng = np.random.default_rng(8)
    texts = messy_ids(rng, 500) + ["", "x" * 40]
    together, usable = vocabulary._known_rows(texts)
    alone, usable_alone = vocabulary._known_rows(texts + ["nul\x00inside", "\ud800", 5])
    np.testing.assert_array_equal(usable, usable_alone)
    assert together.tolist() == alone.tolist() == [t.encode() for t in texts if t]
    assert together.dtype.itemsize % 8 == 0 and alone.dtype.itemsize % 8 == 0


# ------------------------------------------------------------------------------------------------ trec_eval
_FILES = itertools.count()


def messy_files(tmp_path, rng):
    """(qrels path, run path, {query: {doc: best score}}): ties in a third of the queries, repeated lines (some with
    another score), qrels queries missing from the run, run queries the qrels lack, short rankings, lines in any
    order; scores exact in float32 (pytrec_eval compares them as float32). Query ids are new in every call, as
    pytrec_eval keeps state per query id across evaluators (see test_agreement.fresh_ids)."""
    docs = messy_ids(rng, 3000)
    tag = next(_FILES)
    queries = [f"f{tag}q{i}" for i in range(150)]
    judged = {q: {docs[d]: int(rng.integers(0, 4)) for d in rng.choice(len(docs), int(rng.integers(1, 8)))}
              for q in queries}
    lines, best = [], collections.defaultdict(dict)
    for q in [q for q in queries if rng.random() < 0.9] + [f"f{tag}extra{i}" for i in range(10)]:
        picked = list(judged.get(q, {}))[: int(rng.integers(0, 4))]
        picked += [docs[d] for d in rng.choice(len(docs), int(rng.integers(1, 60)), replace=False)]
        coarse = rng.random() < 0.35
        for doc in dict.fromkeys(picked):
            value = int(rng.integers(0, 8)) / 4 if coarse else int(rng.integers(0, 2**20)) / 2**10
            lines.append((q, "Q0", doc, 0, value, "run"))
            if rng.random() < 0.03:
                lines.append((q, "Q0", doc, 0, value if rng.random() < 0.5 else value / 2, "run"))
            best[q][doc] = max(value, best[q].get(doc, -np.inf))
    rng.shuffle(lines)
    run_path = write_lines(tmp_path / "run.txt", lines)
    qrels_path = write_lines(tmp_path / "qrels.txt", [(q, 0, d, v) for q in queries for d, v in judged[q].items()])
    return qrels_path, run_path, best


TREC = {"precision@1": "P_1", "precision@5": "P_5", "recall@3": "recall_3", "hit_rate@2": "success_2", "mrr":
        "recip_rank", "ndcg@3": "ndcg_cut_3", "ndcg": "ndcg", "map": "map", "map@2": "map_cut_2", "r_precision": "Rprec"}


@pytest.mark.parametrize("share, block_rows", [(0.25, 4096), (0.0, 7), (np.inf, 7)])
def test_messy_trec_files_agree_with_pytrec_eval(tmp_path, monkeypatch, share, block_rows):
    """TREC files read as `ragretrieval score` reads them (doc ids against the qrels' vocabulary, unknown ones kept
    as bytes) and scored with each tie-break path agree with pytrec_eval per query and on average, over the queries
    in both files (pytrec_eval's and trec_eval's default); a repeated doc keeps its best line, which pytrec_eval's
    dicts do by its best score."""
    monkeypatch.setattr(ranking, "GLOBAL_SHARE", share)
    monkeypatch.setattr(ranking, "BLOCK_ROWS", block_rows)
    for seed in range(3):
        qrels_path, run_path, best = messy_files(tmp_path, np.random.default_rng(seed))
        qrels = read_qrels(qrels_path)
        result = score(qrels, read_run(run_path, doc_ids=qrels.doc_ids), METRICS, queries="both")
        measures = {"P.1,5", "recall.3", "success.2", "recip_rank", "ndcg_cut.3", "ndcg", "map", "map_cut.2", "Rprec"}
        theirs = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), measures).evaluate(dict(best))
        assert sorted(theirs) == sorted(result.query_ids.tolist()) and len(theirs) < qrels.n_queries
        for metric, name in TREC.items():
            values = dict(zip(result.query_ids.tolist(), result.per_query[metric].tolist()))
            for query, measured in theirs.items():
                assert values[query] == pytest.approx(measured[name], abs=1e-12), (seed, metric, query)
            assert result.means[metric] == pytest.approx(np.mean([m[name] for m in theirs.values()]), abs=1e-12)
