"""TREC files: every error message, layouts (CRLF, tabs, blank lines, any line order), exact round trips, and the
`score` command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.cli import main
from ragretrieval.cli.score import DEFAULT_METRICS
from ragretrieval.scoring import Qrels, Run, scan, score, trec, vocabulary
from ragretrieval.scoring.trec import TrecFormatError, read_qrels, read_run, write_qrels, write_run


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def run_dict(run: Run) -> dict:
    """{query: [(doc, score), ...]} in row order, padding dropped."""
    return {q: [(run.doc_ids[c], float(s)) for c, s in zip(codes, scores) if c >= 0]
            for q, codes, scores in zip(run.query_ids, run.codes, run.scores)}


# ------------------------------------------------------------------------------------------------ error messages
QRELS_ERRORS = [
    (b"301 0 d1 1\n301 0 d2\n", 2, "expected 4 fields (qid 0 docid rel), got 3"),
    (b"301 0 d1 1 extra\n", 1, "expected 4 fields (qid 0 docid rel), got 5"),
    (b"301 0 d1 1\n\n301 0 d2 1.5\n", 3, "label '1.5' is not an integer"),
    (b"301 0 d1 one\n", 1, "label 'one' is not an integer"),
    (b"301 0 d1 1\n301 0 d2 1\n302 0 d1 1\n301 0 d1 0\n", 4,
     "duplicate judgement for query 301, document d1 (first on line 1)"),
    (b"301 0 d1 1\n301 0 d\xff 1\n", 2, "document id 'd\ufffd' is not valid UTF-8"),
    (b"301 0 d1 1\n301 0 d2 99999999999999999999\n", 2, "label '99999999999999999999' is not an integer"),
    (b"301 0 d1 -9223372036854775809\n", 1, "label '-9223372036854775809' is not an integer"),
]


def test_an_empty_qrels_file_is_an_error(tmp_path):
    for data in (b"", b"\n \n\t\n"):
        path = write(tmp_path, "qrels.txt", data)
        with pytest.raises(TrecFormatError, match=r"qrels.txt: no judgements"):
            read_qrels(path)


RUN_ERRORS = [
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\n", 2, "expected at least 6 fields (qid Q0 docid rank score tag), got 5"),
    (b"q1 Q0 d1 1 0.5 t\n\n\nq1 Q0 d2 2 abc t\n", 4, "score 'abc' is not a number"),
    (b"q1 Q0 d1 1 nan t\n", 1, "score 'nan' is not a number"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 1.2.3 t\n", 2, "score '1.2.3' is not a number"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 - t\n", 2, "score '-' is not a number"),
    (b"q1 Q0 d1 1 0.5 t\nq\xe9 Q0 d2 2 1 t\n", 2, "query id 'q\ufffd' is not valid UTF-8"),
    # the reader splits on every byte <= 0x20 (here \x1f), and so does the scan that names the bad line
        (b"q1\x1fQ0 d1 \xff 1.0 t\nq1 Q0 d2\xfe 2 0.5 t\n", 2, "document id 'd2\ufffd' is not valid UTF-8"),
]


@pytest.mark.parametrize("reader, data, line, message",
                         [(read_qrels, *case) for case in QRELS_ERRORS] + [(read_run, *case) for case in RUN_ERRORS])
def test_errors_name_the_file_and_line(tmp_path, reader, data, line, message):
    path = write(tmp_path, "data.txt", data)
    with pytest.raises(TrecFormatError) as error:
        reader(path)
    assert str(error.value) == f"{path}:{line}: {message}"


def test_line_numbers_stay_right_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)  # many blocks, and lines longer than a block
    lines = [f"q{i % 7} Q0 doc-{'x' * (i % 90)}-{i} {i} {i / 8} tag\n".encode() for i in range(300)]
    lines[250] = b"q1 Q0 d 1 0x1F tag\n"
    path = write(tmp_path, "run.txt", b"".join(lines))
    with pytest.raises(TrecFormatError, match=rf"^{path}:251: score '0x1F' is not a number$"):
        read_run(path)


# ----------------------------------------------------------------------------------------------------- layouts
def test_crlf_tabs_spaces_blank_lines_bom_and_no_final_newline(tmp_path):
    data = b"\xef\xbb\xbf301 0 d1 1\r\n301\t0\t d2   0\r\n\r\n  \n302 0 d\xc3\xa9 2\r\n303 0 d1 -1"
    assert read_qrels(write(tmp_path, "qrels.txt", data)).to_dict() == {
        "301": {"d1": 1, "d2": 0}, "302": {"dé": 2}, "303": {"d1": -1}}
    data = b"q1\tQ0\td1\t1\t0.5\tt\r\nq1 Q0  d2 2   -1.25e1 t\r\n\n\n"
    assert run_dict(read_run(write(tmp_path, "run.txt", data))) == {"q1": [("d1", 0.5), ("d2", -12.5)]}


def test_run_lines_in_any_order_extra_columns_and_ignored_rank(tmp_path):
    data = b"q2 Q0 a 7 1.5 t more junk\nq1 Q0 b 1 0.5 t\nq2 Q0 c 7 2.5 t\nq1 Q0 a 99 0.25 t x\n"
    run = read_run(write(tmp_path, "run.txt", data))
    assert list(run.query_ids) == ["q2", "q1"]  # in order of first appearance
    assert run_dict(run) == {"q2": [("a", 1.5), ("c", 2.5)], "q1": [("b", 0.5), ("a", 0.25)]}  # file order kept


def test_an_empty_run_file_has_no_queries(tmp_path):
    run = read_run(write(tmp_path, "run.txt", b"\n\n"))
    assert run.n_queries == 0 and run.codes.shape == (0, 0)


def test_empty_runs_and_qrels_write_empty_files(tmp_path):
    write_run(Run.from_dict({}), tmp_path / "run.txt")
    write_qrels(Qrels.from_dict({"q": {}}), tmp_path / "qrels.txt")
    assert (tmp_path / "run.txt").read_bytes() == b"" and (tmp_path / "qrels.txt").read_bytes() == b""
    assert read_run(tmp_path / "run.txt").n_queries == 0


def test_duplicate_run_lines_are_kept_for_the_scorer(tmp_path):
    run = read_run(write(tmp_path, "run.txt", b"q Q0 a 1 0.5 t\nq Q0 a 2 0.7 t\n"))
    assert run_dict(run) == {"q": [("a", 0.5), ("a", 0.7)]}


def test_tiny_blocks_and_hash_collisions_change_nothing(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    lines = [f"q{q} Q0 doc{d} 1 {s} t\n" for q, d, s in zip(rng.integers(0, 30, 2000), rng.integers(0, 500, 2000),
                                                          rng.integers(0, 10**6, 2000) / 1000)]
    path = write(tmp_path, "run.txt", "".join(lines).encode())
    expected = run_dict(read_run(path))
    monkeypatch.setattr(scan, "BLOCK_BYTES", 100)
    assert run_dict(read_run(path)) == expected
    monkeypatch.setattr(vocabulary, "_hash", lambda matrix: np.zeros(len(matrix), np.uint64))  # every id collides
    assert run_dict(read_run(path)) == expected
    parsed = {}
    for line in lines:
        query, _, doc, _, value, _ = line.split()
        parsed.setdefault(query, []).append((doc, float(value)))
    assert expected == parsed


NUMBER_TEXTS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=6).map(str),
    st.tuples(st.sampled_from(["", "-", "+"]), st.text("0123456789", max_size=10), st.sampled_from(["", "."]),
              st.text("0123456789", max_size=10)).map("".join).filter(lambda t: any(c.isdigit() for c in t)),
    st.integers(-10**20, 10**20).map(str),
    st.sampled_from(["inf", "-inf", "1e5", "1E-5", ".5", "5.", "-0", "+0.0", "00012.50"]),
)


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
@settings(max_examples=300, deadline=None)
@given(st.lists(NUMBER_TEXTS, min_size=1, max_size=30))
def test_scores_parse_exactly_as_python_floats(tmp_path_factory, texts):
    path = tmp_path_factory.mktemp("numbers") / "run.txt"
    path.write_text("".join(f"q Q0 d{i} {i} {text} t\n" for i, text in enumerate(texts)))
    values = [s for _, s in run_dict(read_run(path))["q"]]
    assert values == [float(text) for text in texts]
    assert [math.copysign(1, v) for v in values] == [math.copysign(1, float(t)) for t in texts]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=20))
def test_labels_parse_as_python_ints(tmp_path_factory, labels):
    path = tmp_path_factory.mktemp("labels") / "qrels.txt"
    path.write_text("".join(f"q 0 d{i} {label}\n" for i, label in enumerate(labels)))
    assert read_qrels(path).to_dict() == {"q": {f"d{i}": label for i, label in enumerate(labels)}}


# ------------------------------------------------------------------------------------------------- round trips
# any text without ASCII spaces and control characters (the field separators): Unicode spaces, emoji, CJK...
IDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=[chr(i) for i in range(33)]),
              min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(IDS, st.dictionaries(IDS, st.integers(-3, 5), min_size=1, max_size=6), min_size=1, max_size=5))
def test_qrels_round_trip(tmp_path_factory, labels):
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    write_qrels(Qrels.from_dict(labels), path)
    assert read_qrels(path).to_dict() == labels


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(IDS, st.dictionaries(IDS, st.floats(allow_nan=False), min_size=1, max_size=8),
                       min_size=1, max_size=5))
@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_run_round_trip_keeps_every_score_bit(tmp_path_factory, rankings):
    path = tmp_path_factory.mktemp("run") / "run.txt"
    write_run(Run.from_dict(rankings), path, tag="mine")
    assert run_dict(read_run(path)) == {q: list(docs.items()) for q, docs in rankings.items()}
    assert all(line.split()[5] == b"mine" for line in path.read_bytes().splitlines())  # bytes: ASCII separators


def test_written_run_text(tmp_path):
    path = tmp_path / "run.txt"
    write_run(Run.from_dict({"q1": {"a": 0.5, "b": 2.0, "c": -1e-20}, "q2": {"é": 3.0}}), path, tag="t")
    assert path.read_text("utf-8") == "q1 Q0 a 1 0.5 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 -1e-20 t\nq2 Q0 é 1 3 t\n"
    write_run(Run.from_dict({"q1": ["x", "y", "z"], "q2": ["w"]}), path)  # no scores: descending synthetic ones
    assert path.read_text() == ("q1 Q0 x 1 3 ragretrieval\nq1 Q0 y 2 2 ragretrieval\nq1 Q0 z 3 1 ragretrieval\n"
                                "q2 Q0 w 1 1 ragretrieval\n")
    assert score(Qrels.from_dict({"q1": {"z": 1}}), read_run(path), ["mrr"]).means["mrr"] == pytest.approx(1 / 3)


def test_written_qrels_text(tmp_path):
    path = tmp_path / "qrels.txt"
    write_qrels(Qrels.from_dict({"301": {"b": 2, "a": -1}, "302": {"c": 0}}), path)
    assert sorted(path.read_text().splitlines()) == ["301 0 a -1", "301 0 b 2", "302 0 c 0"]


def test_ids_a_trec_file_cannot_hold_are_refused_and_nothing_is_written(tmp_path):
    path = tmp_path / "run.txt"
    with pytest.raises(ValueError, match="document id 'a b' cannot be written"):
        write_run(Run.from_dict({"q": {"a b": 1.0}}), path)
    with pytest.raises(ValueError, match="tag 'my run' cannot be written"):
        write_run(Run.from_dict({"q": {"a": 1.0}}), path, tag="my run")
    assert list(tmp_path.iterdir()) == []


def test_writes_are_atomic(tmp_path, monkeypatch):
    path = tmp_path / "qrels.txt"
    path.write_text("old\n")

    def half_then_fail(file, columns):
        file.write(b"301 0 half")
        raise OSError("disk full")

    monkeypatch.setattr(trec, "_write_table", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_qrels(Qrels.from_dict({"301": {"a": 1}}), path)
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["qrels.txt"]


# ---------------------------------------------------------------------------------------------------- the CLI
@pytest.fixture
def files(tmp_path):
    qrels = write(tmp_path, "qrels.txt", b"q1 0 a 1\nq1 0 b 2\nq2 0 c 1\nq3 0 d 1\n")
    run = write(tmp_path, "run.txt", b"q1 Q0 x 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 a 3 1 t\nq2 Q0 c 1 1 t\n")
    return qrels, run


def invoke(*args):
    return CliRunner().invoke(main, ["score", *map(str, args)])


def test_cli_table(files):
    result = invoke(*files, "-m", "mrr", "-m", "recall@2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["metric        mean", "mrr         0.5000", "recall@2    0.5000",
                                          "(3 queries averaged)"]  # q1: 1/2, q2: 1, q3 (not in the run): 0
    assert "1 qrels query has no ranking in the run" in result.stderr


def test_cli_json_is_one_object_with_keys_as_typed(files):
    result = invoke(*files, "--json", "-m", "ndcg@010", "-m", "mrr", "--queries", "both", "--depth", "1")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"ndcg@010": pytest.approx(0.5), "mrr": pytest.approx(0.5)}
    assert result.stdout.count("\n") == 1


def test_cli_default_metrics(files):
    result = invoke(*files, "--json")
    assert list(json.loads(result.stdout)) == list(DEFAULT_METRICS)


def test_cli_per_query_file(files, tmp_path):
    out = tmp_path / "per_query.tsv"
    result = invoke(*files, "-m", "mrr", "-m", "precision@1", "--rel-level", "2", "--per-query", out)
    assert result.exit_code == 0
    assert out.read_text().splitlines() == ["query\tmetric\tvalue", "q1\tmrr\t0.5", "q1\tprecision@1\t0.0",
                                            "q2\tmrr\t0.0", "q2\tprecision@1\t0.0", "q3\tmrr\t0.0",
                                            "q3\tprecision@1\t0.0"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-m", "nope@3"], "Error: unknown metric 'nope'"),
        (["-m", "ndcg@0"], "Error: cutoff of 'ndcg' must be a positive integer, got 0"),
        (["--depth", "0"], "Error: depth must be a positive integer, got 0"),
    ],
)
def test_cli_bad_options(files, extra, message):
    result = invoke(*files, *extra)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_cli_bad_files(files, tmp_path):
    qrels, run = files
    bad = write(tmp_path, "bad.txt", b"q1 0 a 1\nq1 0 a 2\n")
    result = invoke(bad, run)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {bad}:2: duplicate judgement for query q1, document a (first on line 1)\n"
    bad = write(tmp_path, "bad_run.txt", b"q1 Q0 a 1 x t\n")
    assert invoke(qrels, bad).stderr == f"Error: {bad}:1: score 'x' is not a number\n"
    result = invoke(tmp_path / "missing.txt", run)
    assert result.exit_code == 2 and "does not exist" in result.stderr and result.stderr.count("Error") == 1
