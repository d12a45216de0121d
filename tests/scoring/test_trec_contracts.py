"""trec.py held to its documented contracts with small hand-made files and arrays, against references written here.

Readers: the scan that names a line whose id is not UTF-8 splits fields as the reader does; a run read from a file
keeps the doc ids it does not know as bytes (`LazyIds`) and pads short rows as `Run.from_dict` does; a duplicate
judgement is reported at its earliest repeat; a block's buffer is refilled only once that block is parsed, even when
the pool runs every block as late as it may. Writers: the exact text of scores (fixed-point while the digits make an
integer below 2**53 with at most 17 decimals, else Python's repr), of labels up to the int64 limits, and of every
refusal; output written in many steps equals output written in one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ragretrieval.scoring import PAD, Qrels, Run, scan, trec
from ragretrieval.scoring.ids import LazyIds
from ragretrieval.scoring.trec import TrecFormatError, TrecWriteError, read_qrels, read_run, write_qrels, write_run

INF = math.inf
REFUSED = "cannot be written to a TREC file: it is empty or contains whitespace"


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def texts(matrix: np.ndarray) -> list[bytes]:
    """Rows of a zero-padded uint8 matrix as bytes (zero = nothing)."""
    assert matrix.dtype == np.uint8  # the matrices `_write_table` joins are uint8, zero meaning no byte
    return [bytes(row[row != 0]) for row in matrix]


def run_records(run: Run) -> dict:
    return {q: [(run.doc_ids[c], float(s)) for c, s in zip(codes, scores) if c != PAD]
            for q, codes, scores in zip(run.query_ids, run.codes, run.scores)}


# ------------------------------------------------------------------------------------------------------- reading
@pytest.mark.parametrize("data, message", [
    # a line may start with any control byte (the reader splits on every byte <= 0x20); the id after it is named
    (b"q1 0 d1 1\n\x01q2 0 d\xff 1\n", "2: document id 'd\ufffd' is not valid UTF-8"),
    (b"q1 0 d1 1\n\x1f\x0eq2\x1fd0 d\xfe 1\x01\n", "2: document id 'd\ufffd' is not valid UTF-8"),
    # '!' (0x21) is the first byte that is not a separator: it belongs to the id
    (b"!q\xff 0 d1 1\n", "1: query id '!q\ufffd' is not valid UTF-8"),
])
def test_the_id_that_is_not_utf8_is_found_as_the_reader_splits(tmp_path, data, message):
    path = write(tmp_path, "qrels.txt", data)
    with pytest.raises(TrecFormatError) as error:
        read_qrels(path)
    assert str(error.value) == f"{path}:{message}"


def test_a_read_run_keeps_unknown_doc_ids_as_bytes_until_asked(tmp_path):
    path = write(tmp_path, "run.txt", b"q1 Q0 b 1 0.5 t\nq1 Q0 a 2 0.25 t\nq2 Q0 z\xc3\xa9 1 1 t\n")
    run = read_run(path)
    assert isinstance(run.vocabulary, LazyIds) and len(run.vocabulary.head) == 0
    assert sorted(run.vocabulary.tail.tolist()) == [b"a", b"b", "zé".encode()]
    known = np.array(["a", "x"], dtype=object)
    run = read_run(path, doc_ids=known)
    assert isinstance(run.vocabulary, LazyIds)
    assert run.vocabulary.head[0] is known[0] and run.vocabulary.head[1] is known[1]
    assert run.vocabulary.tail.tolist() in ([b"b", "zé".encode()], ["zé".encode(), b"b"])
    assert run_records(run) == {"q1": [("b", 0.5), ("a", 0.25)], "q2": [("zé", 1.0)]}


@pytest.mark.parametrize("data", [
    b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.25 t\nq2 Q0 c 1 1.5 t\n",  # grouped by query
    b"q1 Q0 a 1 0.5 t\nq2 Q0 c 1 1.5 t\nq1 Q0 b 2 0.25 t\n",  # interleaved
])
def test_short_rows_of_a_read_run_are_padded_as_from_dict_pads_them(tmp_path, data):
    run = read_run(write(tmp_path, "run.txt", data))
    expected = Run.from_dict({"q1": {"a": 0.5, "b": 0.25}, "q2": {"c": 1.5}})
    assert run.scores.tolist() == expected.scores.tolist() == [[0.5, 0.25], [1.5, -INF]]
    assert (run.codes == PAD).tolist() == (expected.codes == PAD).tolist() == [[False, False], [False, True]]
    assert run_records(run) == run_records(expected)


def test_a_duplicate_judgement_is_reported_at_its_earliest_repeat(tmp_path):
    # every pair judged three times: line 201 repeats line 1 first; a sort that is not stable would mix up which
    # line of a pair counts as its first
    lines = [f"q 0 d{i % 200} {i % 3}\n" for i in range(600)]
    path = write(tmp_path, "qrels.txt", "".join(lines).encode())
    with pytest.raises(TrecFormatError) as error:
        read_qrels(path)
    assert str(error.value) == f"{path}:201: duplicate judgement for query q, document d0 (first on line 1)"


class _LatePool:
    """A pool whose work starts only when its result is asked for: every block is parsed as late as any pool may
    parse it (the worst case for the reader's reuse of buffers), and deterministically so."""

    def __init__(self, workers=None):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def submit(self, function, *args):
        return _Later(function, args)


class _Later:
    def __init__(self, function, args):
        self.function, self.args, self.done = function, args, None

    def result(self):
        if self.done is None:
            self.done = (self.function(*self.args),)
        return self.done[0]


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_a_block_is_parsed_before_its_buffer_is_refilled(tmp_path, monkeypatch, threads):
    lines = [f"q{i % 5} Q0 d{i % 37} {i} {i}.5 t\n" for i in range(240)]
    path = write(tmp_path, "run.txt", "".join(lines).encode())
    monkeypatch.setattr(scan, "BLOCK_BYTES", 64)  # dozens of blocks, a few lines each
    monkeypatch.setattr(trec, "_THREADS", threads)
    monkeypatch.setattr(trec, "ThreadPoolExecutor", _LatePool)
    expected = {}
    for line in lines:
        query, _, doc, _, value, _ = line.split()
        expected.setdefault(query, []).append((doc, float(value)))
    assert run_records(read_run(path)) == expected


# ------------------------------------------------------------------------------------------------------- writing
def reference_number(value: float) -> bytes:
    """The score text from its definition: the fewest decimals d <= 17 whose digits make an integer below 2**53 and
    read back as the value, else Python's repr."""
    if math.isfinite(value):
        sign = "-" if math.copysign(1.0, value) < 0 else ""
        for d in range(18):
            text = f"{abs(value):.{d}f}"
            if int(text.replace(".", "")) < 2**53 and float(text) == abs(value):
                return (sign + text).encode()
    return repr(value).encode()


NUMBERS = [
    (0.5, b"0.5"), (123.0, b"123"), (-7.25, b"-7.25"), (0.0, b"0"), (-0.0, b"-0"), (1e-5, b"0.00001"),
    (1.5e-5, b"0.000015"), (0.1 + 0.2, b"0.30000000000000004"), (1e-17, b"0.00000000000000001"),
    (1e-18, b"1e-18"),  # 18 decimals: repr
    (2.0**53 - 1, b"9007199254740991"), (2.0**53, b"9007199254740992.0"),  # digits of 2**53 or more: repr
    (2.0**53 + 2, b"9007199254740994.0"), (0.9007199254740991, b"0.9007199254740991"),
    (1e300, b"1e+300"), (-1.7976931348623157e308, b"-1.7976931348623157e+308"), (5e-324, b"5e-324"),
    (INF, b"inf"), (-INF, b"-inf"), (math.nan, b"nan"),
]


def test_scores_are_written_as_the_shortest_fixed_point_text_or_repr():
    values = [v for v, _ in NUMBERS]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # huge scores overflow when scaled; that must stay silent
        with np.errstate(all="raise"):
            written = texts(trec._format_numbers(np.array(values)))
    assert written == [text for _, text in NUMBERS]
    assert written == [reference_number(v) for v in values]
    assert all(float(t) == v for t, v in zip(written, values) if not math.isnan(v))
    # repr rows narrower than the fixed-point ones keep no byte of what was under them
    assert texts(trec._format_numbers(np.array([0.000012345, INF, 1e22]))) == [b"0.000012345", b"inf", b"1e+22"]
    assert texts(trec._format_numbers(np.zeros(0))) == []


def test_random_scores_match_the_reference_text():
    rng = np.random.default_rng(7)
    values = np.concatenate([
        rng.integers(-10**6, 10**6, 300) / 10.0 ** rng.integers(0, 12, 300),  # short decimals
        rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300),  # full-precision doubles
        rng.integers(0, 2**62, 100).astype(np.float64),  # large integers, both sides of 2**53
    ])
    assert texts(trec._format_numbers(values)) == [reference_number(v) for v in values.tolist()]


def test_digit_matrices_are_right_aligned_uint8_text():
    out = trec._digits(np.array([5, 120, 7, 0], np.uint64), np.array([0, 2, 3, 1]), np.array([False, True, True, False]))
    assert texts(out) == [b"5", b"-1.20", b"-0.007", b"0.0"]
    assert texts(trec._digits(np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, bool))) == []
    # an empty vocabulary makes the same matrix as the scanner's tokens of no token
    nothing = scan.tokens(np.zeros(16, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    empty = trec._id_matrix([], "query")
    assert empty.dtype == nothing.dtype and empty.shape == nothing.shape


def test_labels_are_written_exactly_up_to_the_int64_limits(tmp_path):
    labels = [2**53 + 1, -(2**63), 2**63 - 1, 1234567890123456789, -99999999999999999, 0, -7, 10**18]
    path = tmp_path / "qrels.txt"
    write_qrels(Qrels.from_dict({"q": {f"d{i}": label for i, label in enumerate(labels)}}), path)
    assert path.read_text() == "".join(f"q 0 d{i} {label}\n" for i, label in enumerate(labels))


def test_writing_in_many_steps_writes_the_same_text(tmp_path, monkeypatch):
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"b": -1}, "q3": {"d": 3, "a": 4}})
    run = Run.from_dict({"q1": {"a": 0.5}, "q2": {"b": 2.0}, "q3": {"c": 1.25}, "q4": {"a": -1.0}, "q5": {"d": 3.0}})
    ragged = Run.from_dict({"q1": ["a", "b", "c"], "q2": ["d"], "q3": [], "q4": ["b", "a"]})
    qrels_text = "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 b -1\nq3 0 a 4\nq3 0 d 3\n"
    run_text = "q1 Q0 a 1 0.5 t\nq2 Q0 b 1 2 t\nq3 Q0 c 1 1.25 t\nq4 Q0 a 1 -1 t\nq5 Q0 d 1 3 t\n"
    ragged_text = "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\nq2 Q0 d 1 1 t\nq4 Q0 b 1 2 t\nq4 Q0 a 2 1 t\n"
    for rows in (1 << 18, 2, 1):
        monkeypatch.setattr(trec, "_WRITE_ROWS", rows)
        write_qrels(qrels, tmp_path / "qrels.txt")
        write_run(run, tmp_path / "run.txt", tag="t")
        write_run(ragged, tmp_path / "ragged.txt", tag="t")
        assert (tmp_path / "qrels.txt").read_text() == qrels_text
        assert (tmp_path / "run.txt").read_text() == run_text
        assert (tmp_path / "ragged.txt").read_text() == ragged_text


def test_queries_without_docs_write_no_lines(tmp_path):
    for run in (Run.from_dict({"q": {}}), Run.from_dict({"q": [], "r": []})):
        write_run(run, tmp_path / "run.txt")
        assert (tmp_path / "run.txt").read_bytes() == b""


@pytest.mark.parametrize("writer, data, message", [
    (write_qrels, Qrels.from_dict({"q1": {"a": 1}, "q 2": {"a": 1}}), f"query id 'q 2' {REFUSED}"),
    (write_qrels, Qrels.from_dict({"q1": {"a": 1, "b\tc": 1}}), f"document id 'b\\tc' {REFUSED}"),
    (write_qrels, Qrels.from_dict({"q1": {"a": 1, "": 1}}), f"document id '' {REFUSED}"),
    (write_run, Run.from_dict({"q1": {"a": 1.0}, "q\n2": {"a": 1.0}}), f"query id 'q\\n2' {REFUSED}"),
    (write_run, Run.from_dict({"": {"a": 1.0}}), f"query id '' {REFUSED}"),
    (write_run, Run.from_dict({"q": {"ok": 1.0, "also-ok": 2.0, "no\x01": 0.0}}), f"document id 'no\\x01' {REFUSED}"),
])
def test_ids_a_trec_file_cannot_hold_are_named(tmp_path, writer, data, message):
    with pytest.raises(TrecWriteError) as error:
        writer(data, tmp_path / "out.txt")
    assert str(error.value) == message
    assert list(tmp_path.iterdir()) == []
