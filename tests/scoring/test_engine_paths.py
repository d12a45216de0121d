"""Alternative internal code paths of the scorer and the TREC reader give exactly the results of the default ones.

Each test forces a path, by setting a module constant (block sizes, thread count, a threshold) or by the input's
layout, and compares with the default path on the same real data; cases come from seeded generators.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from ragretrieval.scoring import PAD, Qrels, Run, ScoringError, ranking, scan, score, trec, vocabulary
from ragretrieval.scoring.trec import TrecFormatError, read_qrels, read_run

METRICS = ["precision@1", "precision@5", "recall@3", "hit_rate@2", "mrr", "mrr@3", "f1@4", "ndcg@3", "ndcg",
           "ndcg_exp@5", "map", "map@2", "r_precision"]
OPTIONS = [{}, {"rel_level": 2}, {"ties": "rank"}, {"depth": 3}, {"rel_level": 2, "depth": 3, "queries": "both"}]
# ids whose byte order differs from naive expectations, a long one, then plain ones (enough for 30 judged per query)
DOCS = ["d1", "d10", "d2", "D2", "é", "z", "Z", "0", "a", "b", "ü/🙂", "x" * 70 + "-long"]
DOCS += [f"doc{i}" for i in range(36)]


def pick(rng, items):
    return items[int(rng.integers(len(items)))]


def run_dict(run: Run) -> dict:
    """{query: [(doc, score), ...]} in row order, padding dropped."""
    return {q: [(run.doc_ids[c], float(s)) for c, s in zip(codes, scores) if c >= 0]
            for q, codes, scores in zip(run.query_ids, run.codes, run.scores)}


def assert_same_scores(got, expected, where=""):
    assert list(got.query_ids) == list(expected.query_ids), where
    for metric in METRICS:
        np.testing.assert_array_equal(got.per_query[metric], expected.per_query[metric], err_msg=f"{where} {metric}")


# ---------------------------------------------------------------------------------------------------- scoring
def random_case(rng, many_judged: bool = False) -> tuple[Qrels, Run]:
    """Graded, 0 and negative labels; qrels queries missing from the run, a run query without labels, queries in
    another order in the run. Each row is either in rank order already (distinct docs, strictly falling scores,
    empty slots last) or messy (tied scores, repeated docs, empty slots anywhere)."""
    names = [f"q{i}" for i in range(int(rng.integers(1, 10)))]
    labels = {}
    for q in names:
        n = 30 if many_judged and rng.random() < 0.5 else int(rng.integers(1, 7))
        labels[q] = {DOCS[d]: int(rng.integers(-1, 4)) for d in rng.choice(len(DOCS), n, replace=False)}
    in_run = [q for q in names if rng.random() < 0.8] or names[:1]
    in_run += ["unlabelled"] if rng.random() < 0.3 else []
    if rng.random() < 0.5:
        rng.shuffle(in_run)
    depth = int(rng.integers(1, 40 if many_judged else 9))
    codes, scores = np.full((len(in_run), depth), PAD), np.full((len(in_run), depth), -np.inf)
    for i, q in enumerate(in_run):
        pool = list(labels.get(q, {})) + [pick(rng, DOCS) for _ in range(6)]
        pool = [DOCS.index(d) for d in dict.fromkeys(pool)]  # distinct, judged ones first
        if rng.random() < 0.7:  # in rank order
            n = int(rng.integers(0, min(depth, len(pool)) + 1))
            codes[i, :n] = rng.choice(pool, n, replace=False)
            scores[i, :n] = np.sort(rng.choice(64, n, replace=False) / 4)[::-1]
        else:
            filled = rng.random(depth) < 0.8
            codes[i, filled] = rng.choice(pool, filled.sum())  # with repeats
            scores[i, filled] = rng.choice([0.0, 0.5, 1.0, 1.5], filled.sum())  # with ties
    return Qrels.from_dict(labels), Run.from_arrays(in_run, DOCS, codes, None if rng.random() < 0.1 else scores)


def all_scores(cases):
    return [[score(qrels, run, METRICS, **options) for options in OPTIONS] for qrels, run in cases]


def assert_all_same(got, expected):
    for case, (got_case, expected_case) in enumerate(zip(got, expected)):
        for options, g, e in zip(OPTIONS, got_case, expected_case):
            assert_same_scores(g, e, f"case {case} {options}")


CASES = int(os.environ.get("RAGRETRIEVAL_ENGINE_CASES", 300))  # seeded cases per test; fewer in a mutation run


@pytest.fixture(scope="module")
def cases():
    return [random_case(np.random.default_rng(seed)) for seed in range(CASES)]


def counted(function, calls: dict, key: str):
    """`function` itself, counting its calls in calls[key]."""
    def wrapper(*args, **options):
        calls[key] += 1
        return function(*args, **options)
    return wrapper


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@pytest.mark.parametrize("rows", [2, 3])
def test_small_row_blocks_score_as_one_block(monkeypatch, cases, rows):
    """BLOCK_ROWS = 2 or 3 splits each case into blocks: some already in rank order (only checked, never sorted),
    some sorted and de-duplicated. Decisions taken per block must not change any other row's ranks."""
    expected = all_scores(cases)
    calls = {"blocks": 0, "sorted": 0}
    monkeypatch.setattr(ranking, "BLOCK_ROWS", rows)
    monkeypatch.setattr(ranking, "_canonical_block", counted(ranking._canonical_block, calls, "blocks"))
    monkeypatch.setattr(ranking, "rank_rows", counted(ranking.rank_rows, calls, "sorted"))
    assert_all_same(all_scores(cases), expected)
    assert calls["blocks"] // 10 < calls["sorted"] < calls["blocks"] * 9 // 10  # both kinds of block, often


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@pytest.mark.parametrize("dense", [0.0, np.inf])
def test_rows_read_in_place_or_gathered_score_alike(monkeypatch, cases, dense):
    """DENSE_SPAN = inf reads every block's run rows in place, a view spanning rows that no scored query holds
    (passed over, never ranked, never written), 0 gathers the scored rows of every block; blocks of 3 queries."""
    expected = all_scores(cases)
    before = [run.codes.copy() for _, run in cases]
    spans = []

    def recorded(run, run_rows, *args, keep=None, **options):
        spans.append((len(run_rows), len(run_rows) if keep is None else len(keep)))
        return canonical(run, run_rows, *args, keep=keep, **options)

    canonical = ranking._canonical_block
    monkeypatch.setattr(ranking, "_canonical_block", recorded)
    monkeypatch.setattr(ranking, "BLOCK_ROWS", 3)
    monkeypatch.setattr(ranking, "DENSE_SPAN", dense)
    assert_all_same(all_scores(cases), expected)
    for (_, run), codes in zip(cases, before):
        np.testing.assert_array_equal(run.codes, codes)
    passed_over = sum(rows > kept for rows, kept in spans)
    assert passed_over > CASES // 10 if dense else passed_over == 0  # the in-place path passes rows over, often


def test_a_row_passed_over_is_not_checked_for_repeats(monkeypatch):
    """With duplicates="error", only the qrels' queries are checked: a run query the qrels lack may list a doc twice
    even when its row lies between two scored ones and is read in place."""
    monkeypatch.setattr(ranking, "DENSE_SPAN", np.inf)
    qrels = Qrels.from_dict({"a": {"d1": 1}, "c": {"d2": 1}})
    codes = np.array([[0, 1], [2, 2], [0, 1]])
    run = Run.from_arrays(["a", "b", "c"], ["d1", "d2", "d3"], codes, np.array([[2.0, 1.0]] * 3))
    result = score(qrels, run, ["mrr"], duplicates="error")
    assert result.per_query["mrr"].tolist() == [1.0, 0.5]
    with pytest.raises(ScoringError, match="^query 'b' retrieves document 'd3' more than once$"):
        score(Qrels.from_dict({"a": {"d1": 1}, "b": {"d3": 1}}), run, ["mrr"], duplicates="error")


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_blocks_ranked_on_threads_raise_the_first_error_in_run_order(monkeypatch, threads):
    """Blocks are ranked on THREADS threads but read in the run's order: with duplicates="error" and a repeated doc
    in many blocks, the error always names the first query (in run order) that repeats one, however the threads
    happen to finish."""
    monkeypatch.setattr(ranking, "THREADS", threads)
    monkeypatch.setattr(ranking, "BLOCK_ROWS", 2)
    n = 40
    codes = np.tile(np.arange(3), (n, 1))
    codes[5:, 2] = 0  # every query from the sixth on lists d0 twice
    run = Run.from_arrays([f"q{i}" for i in range(n)], ["d0", "d1", "d2"], codes, np.tile([3.0, 2.0, 1.0], (n, 1)))
    qrels = Qrels.from_dict({f"q{i}": {"d1": 1} for i in range(n)})
    for _ in range(20):
        with pytest.raises(ScoringError, match="^query 'q5' retrieves document 'd0' more than once$"):
            score(qrels, run, ["mrr"], duplicates="error")
    assert score(qrels, run, ["mrr"]).per_query["mrr"].tolist() == [0.5] * n


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
@pytest.mark.parametrize("few", [0, 10**6])
def test_judged_docs_located_either_way(monkeypatch, cases, few):
    """_FEW_JUDGED = 0 forces the sorted lookup of judged docs for every block, 10**6 the one-comparison-per-judged-
    doc path even for queries with 30 judged docs (most of them not retrieved); both must find the same ranks."""
    cases = cases + [random_case(np.random.default_rng(seed), many_judged=True) for seed in range(1000, 1000 + CASES // 3)]
    assert max(int(np.diff(qrels.indptr).max()) for qrels, _ in cases) == 30
    expected = all_scores(cases)
    monkeypatch.setattr(ranking, "_FEW_JUDGED", few)
    assert_all_same(all_scores(cases), expected)
    monkeypatch.setattr(ranking, "BLOCK_ROWS", 2)  # and the path chosen block by block
    assert_all_same(all_scores(cases), expected)


# ---------------------------------------------------------------------------------------------------- reading
def layout(rng, fields, messy: bool) -> str:
    """One line: single spaces, or tabs / runs of blanks / CRLF / trailing blanks, sometimes a blank line after."""
    if not messy:
        return " ".join(fields) + "\n"
    text = "".join(f + pick(rng, [" ", "\t", "  ", " \t "]) for f in fields[:-1]) + fields[-1]
    return pick(rng, ["", "", "\t"]) + text + pick(rng, ["\n", "\r\n", " \n"]) + pick(rng, ["", "", "", "\n", " \r\n"])


def trec_files(rng, extra: bool):
    """(run lines, qrels lines): queries interleaved or grouped, repeated docs in runs, score texts of every form;
    each line a list of fields."""
    queries = [f"q{i}" for i in range(8)] + ["é-query"]
    run = []
    for rank in range(int(rng.integers(100, 400))):
        value = int(rng.integers(-5000, 5000)) / 8
        text = pick(rng, [repr(value), f"{value:.4e}", f"+{abs(value)}", str(int(value)), f"{value:.3f}"])
        tail = pick(rng, [[], [], ["more", "junk"]]) if extra else []
        run.append([pick(rng, queries), "Q0", pick(rng, DOCS), str(rank), text, "tag", *tail])
    if rng.random() < 0.5:
        run.sort(key=lambda fields: queries.index(fields[0]))  # each query's lines together
    qrels = [[q, "0", d, str(int(rng.integers(-2, 5)))] for q in queries for d in DOCS if rng.random() < 0.3]
    return run, [qrels[i] for i in rng.permutation(len(qrels))]


def write_lines(path, rng, lines, messy: bool, final_newline: bool = True):
    text = "".join(layout(rng, fields, messy) for fields in lines)
    path.write_bytes((text if final_newline else text.rstrip(" \t\r\n")).encode())
    return path


def expected_run(lines) -> dict:
    out = {}
    for q, _, doc, _, value, *_ in lines:
        out.setdefault(q, []).append((doc, float(value)))
    return out


def read_both(run_path, qrels_path):
    run, qrels = read_run(run_path), read_qrels(qrels_path)
    return run_dict(run), list(run.query_ids), qrels.to_dict(), list(qrels.query_ids)


@pytest.mark.parametrize("threads, block_bytes", [(1, None), (None, 64), (1, 64)])
def test_reader_paths_read_the_same(tmp_path, monkeypatch, threads, block_bytes):
    """_THREADS = 1 (one parser thread, doc ids grouped in one part) and BLOCK_BYTES = 64 (hundreds of blocks in
    flight, lines longer than a block, queries spanning blocks) against the defaults, on files with tabs, CRLF,
    runs of blanks, blank lines, extra run columns, interleaved queries and no final newline."""
    files, expected = [], []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        run, qrels = trec_files(rng, extra=True)
        files.append((write_lines(tmp_path / f"run{seed}", rng, run, True, final_newline=seed % 2 == 0),
                      write_lines(tmp_path / f"qrels{seed}", rng, qrels, True, final_newline=seed % 2 == 1)))
        default = read_both(*files[-1])
        assert default[0] == expected_run(run) and default[1] == list(dict.fromkeys(f[0] for f in run))
        assert default[2] == {q: {d: int(label) for q2, _, d, label in qrels if q2 == q} for q in default[3]}
        expected.append(default)
    if threads is not None:
        monkeypatch.setattr(trec, "_THREADS", threads)
    if block_bytes is not None:
        monkeypatch.setattr(scan, "BLOCK_BYTES", block_bytes)
    assert [read_both(*paths) for paths in files] == expected


def test_run_read_against_the_qrels_vocabulary(tmp_path, monkeypatch):
    """read_run(path, doc_ids=qrels.doc_ids) starts the run's vocabulary with the qrels' own id objects, so score()
    skips translating ids. Known ids absent from the run, ids with a space or empty (only from_dict can make them)
    must match nothing; with every hash colliding (the known ids and the file's ids then share one group, split
    again byte for byte) the answers must not change; and so with one thread (the known ids grouped in one part)."""
    rng = np.random.default_rng(7)
    run, qrels = trec_files(rng, extra=True)
    run_path = write_lines(tmp_path / "run", rng, run, True)
    variants = [read_qrels(write_lines(tmp_path / "qrels", rng, qrels, True)),
                Qrels.from_dict({"q1": {"a b": 1, "": 2, "d1": 1, "absent": 3}, "q2": {"b": 1, "z ": 1, "é": 0}}),
                Qrels.from_dict({"q3": {"d10": 2}}), Qrels.from_dict({"q4": {"a b": 1}}),
                Qrels.from_dict({"q5": {"none": 1, "of these": 1}})]
    for hashing, threads in [("real", trec._THREADS), ("real", 1), ("all colliding", 1), ("all colliding", 4)]:
        monkeypatch.setattr(trec, "_THREADS", threads)
        if hashing != "real":
            monkeypatch.setattr(vocabulary, "_hash", lambda matrix: np.zeros(len(matrix), np.uint64))
        plain = read_run(run_path)
        for qrels in variants:
            known = read_run(run_path, doc_ids=qrels.doc_ids)
            n = len(qrels.doc_ids)
            assert all(known.doc_ids[i] is qrels.doc_ids[i] for i in range(n)), (hashing, threads)
            rest = known.doc_ids[n:].tolist()
            assert len(rest) == len(set(rest)) and set(rest) == set(plain.doc_ids.tolist()) - set(qrels.doc_ids)
            assert run_dict(known) == run_dict(plain) and list(known.query_ids) == list(plain.query_ids)
            unwritable = [i for i, doc in enumerate(qrels.doc_ids) if doc == "" or " " in doc]
            assert not np.isin(unwritable, known.codes).any()
            for options in OPTIONS:
                assert_same_scores(score(qrels, known, METRICS, **options), score(qrels, plain, METRICS, **options),
                                   f"{hashing} {threads} {options}")


def test_a_known_id_ending_in_nul_matches_nothing(tmp_path):
    """A known id ending in NUL (possible from from_dict) can no more be in a TREC file than one with a space."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"q Q0 d1 1 1 t\n")
    qrels = Qrels.from_dict({"q": {"d1\x00": 1}})
    assert run_dict(read_run(path, doc_ids=qrels.doc_ids)) == {"q": [("d1", 1.0)]}
    assert score(qrels, read_run(path, doc_ids=qrels.doc_ids), "mrr").means == {"mrr": 0.0}


@pytest.mark.parametrize("block_bytes", [None, 64])
def test_single_spaced_fast_path_reads_as_the_general_one(tmp_path, monkeypatch, block_bytes):
    """The same lines written single-spaced (fields found from space positions alone, `_single_spaced`) and with
    tabs, runs of blanks and CRLF (the general whitespace scan) read identically; with 64-byte blocks a file mixes
    blocks of both kinds."""
    if block_bytes is not None:
        monkeypatch.setattr(scan, "BLOCK_BYTES", block_bytes)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        run, qrels = trec_files(rng, extra=False)
        # each file named by its number of fields
        single = [write_lines(tmp_path / f"{len(lines[0])}.single", rng, lines, False) for lines in (run, qrels)]
        general = [write_lines(tmp_path / f"{len(lines[0])}.general", rng, lines, True) for lines in (run, qrels)]
        for path, fast in [(p, True) for p in single] + [(p, False) for p in general]:  # the path each file takes
            text = np.frombuffer(path.read_bytes(), np.uint8)
            found = scan._single_spaced(text, scan.newlines_in(text, len(text)), int(path.stem))
            assert (found is not None) == fast, path
        assert read_both(*single) == read_both(*general)
        assert read_both(*single)[0] == expected_run(run)


GOOD = {"qrels": [b"q1 0 d1 1\n", b"q1 0 d2 0\n", b"q2 0 d1 2\n"] * 3,
        "run": [b"q1 Q0 d1 1 0.5 t\n", b"q1 Q0 d2 2 0.25 t\n", b"q2 Q0 d1 1 3 t\n"] * 3}
QRELS_FIELDS, RUN_FIELDS = "4 fields (qid 0 docid rel)", "at least 6 fields (qid Q0 docid rank score tag)"


@pytest.mark.parametrize("block_bytes", [None, 64])
@pytest.mark.parametrize(
    "kind, bad, line, message",
    [
        ("qrels", [b"q1 0 d9 1 x\n"], 5, f"expected {QRELS_FIELDS}, got 5"),
        ("qrels", [b"q1 0 d9 1 x\n", b"q1 0 d8\n"], 5, f"expected {QRELS_FIELDS}, got 5"),  # space count balances
        ("qrels", [b"q1 0 d9 \n"], 5, f"expected {QRELS_FIELDS}, got 3"),  # trailing space: an empty 4th field
        ("qrels", [b" q1 0 d9\n"], 5, f"expected {QRELS_FIELDS}, got 3"),  # leading space
        ("run", [b"q1 Q0 d9 1 0.5\n"], 5, f"expected {RUN_FIELDS}, got 5"),
        ("run", [b"q1 Q0 d9 1 0.5 \n"], 5, f"expected {RUN_FIELDS}, got 5"),  # trailing space: 5 spaces, 5 fields
        ("run", [b"q1 Q0 d9 1 0.5 t x\n", b"q1 Q0 d8 2 0.4\n"], 6, f"expected {RUN_FIELDS}, got 5"),
    ],
)
def test_malformed_single_spaced_lines_name_their_line(tmp_path, monkeypatch, block_bytes, kind, bad, line, message):
    """Lines that have the right number of single spaces but not the right fields (or whose spaces balance another
    line's) must leave the fast path and fail as the general scan does, naming `file:line`."""
    if block_bytes is not None:
        monkeypatch.setattr(scan, "BLOCK_BYTES", block_bytes)
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(b"".join(GOOD[kind][:4] + bad + GOOD[kind][4:]))
    with pytest.raises(TrecFormatError) as error:
        (read_qrels if kind == "qrels" else read_run)(path)
    assert str(error.value) == f"{path}:{line}: {message}"


def word_parse(parser, tokens_):
    """Run a word-at-a-time number parser of `scan` over space-separated tokens: (values, plain)."""
    data = (" ".join(tokens_) + " ").encode()
    buffer = np.frombuffer(data + bytes(64), np.uint8).copy()
    ends = np.flatnonzero(buffer[: len(data)] == ord(" "))
    starts = np.concatenate(([0], ends[:-1] + 1))
    if parser == "short":
        return scan._short_decimals(np.ndarray((len(buffer) - 7,), "<u8", buffer, 0, (1,))[starts], ends - starts)
    return scan._plain_numbers(buffer, starts, ends - starts, integers=False)


@pytest.mark.parametrize("parser", ["short", "plain"])
def test_number_fast_paths_read_what_python_reads(parser):
    """Both word-at-a-time number parsers (`_short_decimals` for columns of tokens up to 8 bytes, `_plain_numbers`
    otherwise) call plain exactly the tokens of their grammar and read them as the very double float() gives;
    everything else is left to the general parser."""
    rng = np.random.default_rng(7)
    alphabet = list("0123456789" * 3 + ".+-eE") + ["x"]
    tokens_ = ["".join(rng.choice(alphabet, int(rng.integers(1, 9)))) for _ in range(20000)]
    tokens_ += ["0.990423", "12.5", "5.", ".5", ".", "1.2.3", "00000001", "99999999", "-0.25", "+7"]
    if parser == "plain":
        tokens_ += ["12345678.12345678", "-1.000000001", "123456789"]
    grammar = r"\d*\.?\d*" if parser == "short" else r"[+-]?\d{0,8}(\.\d{0,8})?"
    values, plain = word_parse(parser, tokens_)
    for token, value, is_plain in zip(tokens_, values, plain):
        expected = bool(re.fullmatch(grammar, token) and re.search(r"\d", token))
        if parser == "plain" and expected and abs(float(token)) >= 2**53 / 1e8:
            expected = False  # its digits times 10**8 would pass 2**53: left to the general parser
        assert is_plain == expected, token
        assert not is_plain or value == float(token), token


def test_ids_must_be_unique_in_a_vocabulary():
    """A doc id listed twice in `doc_ids` would make two codes for one document: refused, naming the id."""
    with pytest.raises(ValueError, match="document ids must be unique: 'x' appears more than once"):
        Run.from_arrays(["a"], ["x", "y", "x"], [[2, 1, 0]], [[3.0, 2.0, 1.0]])
    with pytest.raises(ValueError, match="document ids must be unique: 'x' appears more than once"):
        Qrels.from_arrays(["a"], ["x", "x"], [0, 1], [0], [1])
    with pytest.raises(ValueError, match="query ids must be unique: 'a' appears more than once"):
        Run.from_arrays(["a", "a"], ["x"], [[0], [0]])


def test_duplicates_error_checks_the_scored_rankings():
    """`duplicates="error"` refuses a repeated doc in a ranking that is scored; a run query without labels is not
    scored (as everywhere), so its ranking is not checked either."""
    qrels = Qrels.from_dict({"a": {"x": 1}})
    run = Run.from_dict({"a": ["x", "y"], "other": ["z", "z"]})
    assert score(qrels, run, "mrr", duplicates="error").means == {"mrr": 1.0}
    with pytest.raises(ValueError, match="query 'a' retrieves document 'y' more than once"):
        score(qrels, Run.from_dict({"a": ["x", "y", "y"]}), "mrr", duplicates="error")


def test_ids_matched_by_bytes_as_a_dict_matches_them():
    """`vocabulary.index_in` groups UTF-8 rows by hash; ids that are not str or hold a NUL go through a dict. Both
    give each id's position, -1 where absent, for ids that share prefixes, differ in case or width, or are empty."""
    rng = np.random.default_rng(7)
    pool = DOCS + ["", "d1\udc80", "x" * 7, "x" * 8, "x" * 9, "q1", "Q1", "q" * 16 + "1"]
    for _ in range(50):
        among = np.array(list(dict.fromkeys(rng.choice(pool, int(rng.integers(0, 30))))), dtype=object)
        ids = np.array(list(dict.fromkeys(rng.choice(pool, int(rng.integers(0, 30))))), dtype=object)
        position = {key: i for i, key in enumerate(among.tolist())}
        expected = [position.get(key, -1) for key in ids.tolist()]
        assert vocabulary.index_in(ids, among).tolist() == expected
    odd = np.array(["a\x00", "a", 3, "3"], dtype=object)  # a NUL, and an int next to its str: the dict's turn
    assert vocabulary.index_in(odd, odd[::-1].copy()).tolist() == [3, 2, 1, 0]
    assert vocabulary.index_in(odd[1:2], np.array(["a\x00"], dtype=object)).tolist() == [-1]


def test_rankings_without_a_wanted_doc_are_checked_only_for_errors():
    """With duplicates="first" a query whose labels are all <= 0 has no rank to read, so its ranking is skipped;
    with "error" it is still checked for repeated docs."""
    qrels = Qrels.from_dict({"a": {"x": 1}, "b": {"y": 0, "z": -1}})
    run = Run.from_dict({"a": {"w": 2.0, "x": 1.0}, "b": {"y": 1.0, "z": 1.0, "v": 3.0}})
    assert score(qrels, run, ["mrr", "map"]).means == {"mrr": 0.25, "map": 0.25}
    repeated = Run.from_arrays(["a", "b"], ["x", "y"], [[0, PAD], [1, 1]], [[1.0, -np.inf], [2.0, 1.0]])
    assert score(qrels, repeated, "mrr").means == {"mrr": 0.5}
    with pytest.raises(ValueError, match="query 'b' retrieves document 'y' more than once"):
        score(qrels, repeated, "mrr", duplicates="error")
