"""Contracts of `scan`, the byte scanner under the TREC reader: each function against a reference written from its
definition (Python's `bytes.split`, `float()`, `int()`, `bytes.rfind`) on small hand-made or seeded inputs, and the
exact messages the reader builds from its errors. Kept fast: `make mutation` runs this file once per mutant."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from ragretrieval.scoring import scan
from ragretrieval.scoring.trec import TrecFormatError, read_qrels, read_run

BLANK = re.compile(rb"[^\x00-\x20]+")  # a token: a run of bytes above 0x20 (the reader splits on every byte <= 0x20)


def buffer_of(data: bytes, after: bytes = b"") -> np.ndarray:
    """`data` as a scan buffer: `after` (say, the start of a held line), then the spare bytes every block has."""
    return np.frombuffer(data + after + bytes(scan.SLACK), np.uint8).copy()


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def read_error(tmp_path, reader, data: bytes) -> str:
    path = tmp_path / "data.txt"
    path.write_bytes(data)
    with pytest.raises(TrecFormatError) as error:
        reader(path)
    prefix = f"{path}:"
    assert str(error.value).startswith(prefix)
    return str(error.value)[len(prefix):]


# ------------------------------------------------------------------------------------------------------ errors
def test_a_line_error_reads_as_its_detail():
    error = scan.LineError(3, "expected 4 fields (qid 0 docid rel), got 1")
    assert (error.line, error.detail) == (3, "expected 4 fields (qid 0 docid rel), got 1")
    assert str(error) == "expected 4 fields (qid 0 docid rel), got 1"
    assert isinstance(error, ValueError)


# ------------------------------------------------------------------------------------------------------ blocks
@pytest.mark.parametrize("data", [b"", b"abc", b"\n", b"ab\n", b"a\nb", b"\n\n\n", b"\n" + b"x" * 70000,
                                  b"x" * 70000 + b"\n" + b"y" * 10, b"a\n" + b"x" * 65534, b"a\n" + b"x" * 65535,
                                  b"a\n" + b"x" * 65536, (b"line\n" * 30000)[:-3]])
def test_after_last_newline_is_found_wherever_it_is(data):
    """Newlines at the very start, just inside and just outside the searched tail, or nowhere; those past `end`
    do not count."""
    assert scan._after_last_newline(buffer_of(data, b"\n\n"), len(data)) == data.rfind(b"\n") + 1


def expected_text(data: bytes) -> bytes:
    """What the blocks of a file hold together: a UTF-8 byte-order mark blanked, a final newline added if missing."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = b"   " + data[3:]
    return data + b"\n" if data and not data.endswith(b"\n") else data


@pytest.mark.parametrize("block_bytes", [8, 64, 1 << 22])
@pytest.mark.parametrize("buffers", [1, 2, 3])
def test_blocks_are_whole_lines_that_make_the_file(tmp_path, monkeypatch, block_bytes, buffers):
    """The blocks, in order, are the file's lines (lines longer than a block included), each block as many whole
    lines as the bytes read so far hold; a block stays intact until `buffers` more blocks were read; spare bytes
    follow each block's data."""
    monkeypatch.setattr(scan, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(block_bytes + buffers)
    cases = [b"", b"\n", b"x", b"\xef\xbb\xbfq 0 d 1\n", b"\xef\xbb\xbf", b"\xef\xbbq\n", b"ab\ncd", b"\n\nq\n"]
    for _ in range(6):
        lines = [b"x" * int(rng.integers(0, 3 * block_bytes if block_bytes < 100 else 300))
                 for _ in range(int(rng.integers(1, 40)))]
        cases.append(b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b""))
    if block_bytes < 100:  # a line starting with the mark at the front of a later read: it is part of that line
        cases.append(b"x" * (block_bytes - 1) + b"\n\xef\xbb\xbfq 0 d 1\n")
    for data in cases:
        path = tmp_path / "file.txt"
        path.write_bytes(data)
        held, got = [], []
        for buffer, size in scan.blocks(path, buffers=buffers):
            block = bytes(buffer[:size])
            assert size > 0 and block.endswith(b"\n") and len(buffer) >= size + scan.SLACK
            got.append(block)
            held.append((buffer, size, block))
            for old_buffer, old_size, old_block in held[-buffers:]:  # the last `buffers` blocks are untouched
                assert bytes(old_buffer[:old_size]) == old_block
        assert b"".join(got) == expected_text(data), data


def test_blocks_reuse_one_buffer_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(scan, "BLOCK_BYTES", 16)
    path = tmp_path / "file.txt"
    path.write_bytes(b"q 0 d 1\n" * 20)
    seen = [buffer for buffer, _ in scan.blocks(path)]
    assert len(seen) > 5 and all(buffer is seen[0] for buffer in seen)


# ------------------------------------------------------------------------------------------------------ fields
def reference_fields(data: bytes, exact: int | None, at_least: int | None, layout: str):
    """From the definition: the first `count` tokens (start, end) of each line holding any token, and those lines'
    indexes; or the LineError (line, detail) of the first line with a wrong number of tokens."""
    count = exact or at_least
    starts, ends, lines, offset = [], [], [], 0
    for index, line in enumerate(data.split(b"\n")[:-1]):
        found = [(offset + m.start(), offset + m.end()) for m in BLANK.finditer(line)]
        offset += len(line) + 1
        if not found:
            continue
        if (exact is not None and len(found) != exact) or (exact is None and len(found) < at_least):
            expected = f"{exact} fields" if exact is not None else f"at least {at_least} fields"
            return index, f"expected {expected} ({layout}), got {len(found)}"
        starts.append([s for s, _ in found[:count]])
        ends.append([e for _, e in found[:count]])
        lines.append(index)
    return starts, ends, lines


def single_spaced(data: bytes, count: int) -> bool:
    """Every line exactly `count` tokens joined by single spaces, no other byte <= 0x20 than the newlines."""
    return all(len(line.split(b" ")) == count and all(t and BLANK.fullmatch(t) for t in line.split(b" "))
               for line in data.split(b"\n")[:-1])


def random_block(rng, count: int) -> bytes:
    """Lines of about `count` tokens: mostly single-spaced, sometimes with runs of blanks, tabs, CR, NUL, leading
    or trailing blanks, blank lines, or one token too few or too many."""
    seps = [b" ", b" ", b" ", b"  ", b"\t", b" \r", b"\x00", b"\x1f"]
    messy = rng.random() < 0.5
    lines = []
    for _ in range(int(rng.integers(1, 8))):
        n = count if rng.random() < 0.85 else max(0, count + int(rng.choice([-1, 1, 2, -count])))
        words = [b"".join(rng.choice([b"a", b"7", b".", b"\xc3\xa9", b"Q0"], int(rng.integers(1, 4))))
                 for _ in range(n)]
        sep = (lambda: seps[int(rng.integers(len(seps)))]) if messy else (lambda: b" ")
        line = b"".join(w + sep() for w in words)[: -1 if words and not messy else None]
        if messy and rng.random() < 0.3:
            line = sep() + line
        lines.append(line)
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize("count", [1, 2, 3, 4, 6])
def test_fields_are_the_tokens_python_splits(count):
    """`fields` (whichever path it takes) finds the first `count` tokens of each non-blank line as splitting on the
    bytes <= 0x20 does, or names the first line with the wrong number of tokens; the single-spaced fast path is
    taken exactly for single-spaced blocks."""
    rng = np.random.default_rng(count)
    blocks = [random_block(rng, count) for _ in range(150)]
    blocks += [b" a\nb c\n", b"a \nb c\n", b"a  b\nc d\n", b"\n", b"a\n\nb\n", b"a\n \n", b"a b\n\n", b"x\n"]
    for data in blocks:
        buffer = buffer_of(data, b" x\ty")
        newlines = scan.newlines_in(buffer, len(data))
        assert newlines.tolist() == [i for i, byte in enumerate(data) if byte == 10]
        for exact, at_least in ((count, None), (None, count)):
            expected = reference_fields(data, exact, at_least, "a layout")
            if isinstance(expected[0], int):
                with pytest.raises(scan.LineError) as error:
                    scan.fields(buffer, newlines, exact, at_least, "a layout")
                assert (error.value.line, error.value.detail) == expected, data
                continue
            found = scan.fields(buffer, newlines, exact, at_least, "a layout")
            assert found.lines.tolist() == expected[2], data
            for f in range(count):
                assert found.starts(f).tolist() == [row[f] for row in expected[0]], (data, f)
                assert found.ends(f).tolist() == [row[f] for row in expected[1]], (data, f)
        fast = scan._single_spaced(buffer[: len(data)], newlines, count)
        assert (fast is not None) == single_spaced(data, count), data


@pytest.mark.parametrize("reader, data, message", [
    (read_qrels, b"q1 0 d1 1\nq1\nq1 0 d2 1\n", "2: expected 4 fields (qid 0 docid rel), got 1"),
    (read_qrels, b"q1 0 d1 1\nq1 0  d2\n", "2: expected 4 fields (qid 0 docid rel), got 3"),  # 3 spaces, 3 tokens
    (read_run, b"q1 Q0 d1 1 0.5 t\nq1\n", "2: expected at least 6 fields (qid Q0 docid rank score tag), got 1"),
    (read_run, b"q1  Q0 d1 1 0.5\n", "1: expected at least 6 fields (qid Q0 docid rank score tag), got 5"),
])
def test_lines_with_too_few_tokens_are_named(tmp_path, reader, data, message):
    assert read_error(tmp_path, reader, data) == message


# ------------------------------------------------------------------------------------------------------ tokens
def test_tokens_are_the_bytes_between_starts_and_ends():
    """Zero-padded rows of a width that is a multiple of 8 (at least 8), also for tokens running past the spare
    bytes; `token_bytes` gives each row back as the token's bytes."""
    rng = np.random.default_rng(1)
    for _ in range(60):
        pieces = [bytes(rng.integers(33, 256, int(rng.choice([0, 1, 7, 8, 9, 15, 16, 17, 40, 300])), np.uint8))
                  for _ in range(int(rng.integers(1, 6)))]
        data = b" ".join(pieces) + b"\n"
        ends = np.array([m.end() for m in re.finditer(rb"[^ \n]*", data)][::2][: len(pieces)], np.int64)
        starts = ends - np.array([len(p) for p in pieces], np.int64)
        buffer = np.frombuffer(data + bytes(int(rng.choice([0, 8, scan.SLACK]))), np.uint8).copy()
        before = buffer.copy()
        matrix = scan.tokens(buffer, starts, ends)
        width = max(8, -(-max((len(p) for p in pieces), default=0) // 8) * 8)
        assert matrix.dtype == np.uint8 and matrix.shape == (len(pieces), width)
        assert [bytes(row) for row in matrix] == [p.ljust(width, b"\0") for p in pieces]
        assert scan.token_bytes(matrix).tolist() == pieces
        assert np.array_equal(buffer, before)  # parsing never writes into a block's buffer


# ----------------------------------------------------------------------------------------- word-at-a-time helpers
def test_first_byte_finds_the_lowest_match():
    """For each little-endian word, the index of the first byte equal to `byte`, 8 when none: bytes next to the
    wanted one (one bit off, high bit set, borrows from the byte below) must not count."""
    rng = np.random.default_rng(2)
    for byte in (ord("."), 0, 0x80, 0xFF, ord("0")):
        near = [byte, byte ^ 1, (byte + 1) % 256, (byte - 1) % 256, byte ^ 0x80, 0, 0xFF, 0x7F, 0x01]
        rows = rng.choice(near, (3000, 8)).astype(np.uint8)
        rows[:200] = rng.integers(0, 256, (200, 8))
        words = rows.view("<u8").ravel()
        expected = [row.tobytes().find(bytes([byte])) % 9 if bytes([byte]) in row.tobytes() else 8 for row in rows]
        found = scan._first_byte(words, byte)
        assert found.dtype == np.int64 and found.tolist() == expected, byte


def test_eight_digits_reads_a_word_of_ascii_digits():
    """(value, valid): valid exactly when all eight bytes are ASCII digits, and then the value is their number,
    the first byte (the lowest) most significant."""
    rng = np.random.default_rng(3)
    digits = rng.integers(0, 10, (4000, 8)) + ord("0")
    digits[:10] = ord("9")
    digits[10:20] = ord("0")
    odd = np.tile(np.array([ord("5")] * 8), (8 * 256, 1))
    odd[np.arange(8 * 256), np.arange(8 * 256) // 256] = np.arange(8 * 256) % 256  # every byte at every place
    rows = np.concatenate([digits, odd]).astype(np.uint8)
    value, valid = scan._eight_digits(rows.view("<u8").ravel().copy())
    expected_valid = [row.tobytes().isdigit() for row in rows]
    assert valid.tolist() == expected_valid
    assert [int(v) for v, ok in zip(value, valid) if ok] == [int(row.tobytes()) for row in rows if row.tobytes().isdigit()]


# ------------------------------------------------------------------------------------------------------ numbers
def column(tokens_: list[bytes], sep: bytes = b" ") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = b"".join(t + sep for t in tokens_)
    starts = np.cumsum([0] + [len(t) + len(sep) for t in tokens_[:-1]]).astype(np.int64)
    return buffer_of(data), starts, starts + np.array([len(t) for t in tokens_], np.int64)


INTEGER = re.compile(rb"[+-]?\d{1,8}")
DECIMAL = re.compile(rb"[+-]?(\d{1,8}(\.\d{0,8})?|\.\d{1,8})")


@pytest.mark.parametrize("integers", [True, False])
@pytest.mark.parametrize("widest", [8, 20])
def test_plain_numbers_read_their_grammar_bit_for_bit(integers, widest):
    """`_plain_numbers` (and `_short_decimals` for columns of floats up to 8 bytes) call plain exactly the tokens of
    their grammar, reading each as `int()` or `float()` does, to the bit (the sign of zero included)."""
    rng = np.random.default_rng(widest + integers)
    alphabet = [b"0", b"1", b"5", b"9", b"7", b".", b"-", b"+", b"e", b"x", b"/", b":"]
    weights = np.array([12] * 5 + [10, 5, 5, 5] + [2] * 3) / 100
    tokens_ = [b"".join(rng.choice(alphabet, int(rng.integers(1, widest + 1)), p=weights / weights.sum()))
               for _ in range(3000)]
    tokens_ += [b"0", b"-0", b"+0", b"-0.0", b"0.", b".0", b".", b"-", b"+", b"-.", b"5.", b".5", b"-.5", b"+.5",
                b"12345678", b"99999999", b"00000000", b"1234567", b"1.234567", b"1234.567", b"0.999999",
                b"9999999.", b".9999999", b"-.999999"]
    if widest > 8:
        tokens_ += [b"123456789", b"12345678.12345678", b"-12345678.12345678", b"+99999999.99999999",
                    b"90071992.54740992", b"90071992.54740991", b"1.000000001", b"123456789.5", b".123456789",
                    b"-0000000001", b"1234567.", b"+12345678", b"-12345678.", b"00000000.00000001",
                    b"1.2345678", b"1234.5678", b"0.99999999", b"-.99999999"]
    buffer, starts, ends = column(tokens_, b"\t")
    if integers:
        values, plain = scan._plain_numbers(buffer, starts, ends - starts, True)
        expected = [bool(INTEGER.fullmatch(t)) for t in tokens_]
        assert values.dtype == np.int64
        assert [int(v) for v, p in zip(values, plain) if p] == [int(t) for t, e in zip(tokens_, expected) if e]
    else:
        if widest == 8:
            head = np.ndarray((len(buffer) - 7,), "<u8", buffer, 0, (1,))[starts]
            short_values, short_plain = scan._short_decimals(head, ends - starts)
            short = [bool(re.fullmatch(rb"\d*\.?\d*", t)) and any(c.isdigit() for c in t.decode()) for t in tokens_]
            assert short_plain.tolist() == short
            assert [bits(v) for v, p in zip(short_values, short_plain) if p] == \
                [bits(float(t)) for t, e in zip(tokens_, short) if e]
        values, plain = scan._plain_numbers(buffer, starts, ends - starts, False)
        expected = [bool(DECIMAL.fullmatch(t)) and abs(float(t)) < 2**53 / 1e8 for t in tokens_]
        if widest == 8:  # a column of short tokens takes `_short_decimals`: no signs there
            expected = short
        assert values.dtype == np.float64
        assert [bits(v) for v, p in zip(values, plain) if p] == [bits(float(t)) for t, e in zip(tokens_, expected) if e]
    assert plain.tolist() == expected


def reference_number(token: bytes, integers: bool):
    """The value of a well-formed token, or None: decimal integers within int64, or decimal floats (exponent,
    inf and infinity allowed; nan is not a number here)."""
    text = token.decode("ascii", "replace")
    if integers:
        return int(text) if re.fullmatch(r"[+-]?\d+", text) and -(2**63) <= int(text) < 2**63 else None
    if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?inf(inity)?", text, re.IGNORECASE):
        return float(text)
    return None


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_numbers_read_every_token_or_name_the_first_bad_one(dtype):
    """`numbers` reads a column as `int()`/`float()` would (fast path or not), or raises the LineError of the first
    token that is not a number, its line from `line_of`, the token in the message cut to 40 characters."""
    integers = dtype == np.int64
    rng = np.random.default_rng(4 + integers)
    good = [b"1", b"-7", b"+3", b"0", b"123456789012", b"-9223372036854775808", b"9223372036854775807",
            b"1e3", b"2.5E-3", b"inf", b"-Infinity", b".5", b"5.", b"0.99999999", b"-12345678.123456789", b"1e400"]
    bad = [b"nan", b".", b"abc", b"1.2.3", b"0x1F", b"1e", b"--1", b"99999999999999999999", b"\xff\xfe7",
           b"1_000", b"e5", b"-9223372036854775809"] + ([] if integers else [b"-", b"+"])
    for _ in range(120):
        tokens_ = [bytes(rng.choice(good)) for _ in range(int(rng.integers(1, 8)))]
        if rng.random() < 0.7:
            tokens_.insert(int(rng.integers(len(tokens_) + 1)), bytes(rng.choice(bad + good)))
        if rng.random() < 0.3:
            tokens_.append(bytes(rng.choice(bad)))
        expected = [reference_number(t, integers) for t in tokens_]
        buffer, starts, ends = column(tokens_, bytes(rng.choice([b" ", b"\t", b"\r\n"])))
        lines = rng.permutation(100)[: len(tokens_)]
        first_bad = next((i for i, v in enumerate(expected) if v is None), None)
        if first_bad is None:
            values = scan.numbers(buffer, starts, ends, dtype, "'{token}' is bad", lines.item)
            assert values.dtype == dtype
            same = (lambda v: v) if integers else bits  # ints compared exactly, floats to the bit
            assert [same(v) for v in values.tolist()] == [same(v) for v in expected], tokens_
        else:
            with pytest.raises(scan.LineError) as error:
                scan.numbers(buffer, starts, ends, dtype, "'{token}' is bad", lines.item)
            token = tokens_[first_bad].decode("utf-8", "replace")
            assert (error.value.line, error.value.detail) == (lines[first_bad], f"'{token}' is bad"), tokens_


@pytest.mark.parametrize("reader, data, message", [
    # a fast-path number, then numbers the general parser reads, then the bad one: the bad one is named
    (read_run, b"q Q0 d 1 0.5 t\nq Q0 e 2 1e-3 t\nq Q0 f 3 2E5 t\nq Q0 g 4 nan t\n", "4: score 'nan' is not a number"),
    (read_run, b"q Q0 d 1 1e-3 t\nq Q0 e 2 abc t\n", "2: score 'abc' is not a number"),
    (read_run, b"q Q0 d 1 1e-3 t\nq Q0 e 2 0.5 t\nq Q0 f 3 \xff\xfe1 t\n", "3: score '\ufffd\ufffd1' is not a number"),
    (read_run, b"q Q0 d 1 1e-3 t\nq Q0 e 2 " + b"7" * 30 + b"x" * 30 + b" t\n",
     "2: score '" + "7" * 30 + "x" * 10 + "' is not a number"),
    (read_qrels, b"q 0 d 123456789012 \nq 0 e 99999999999999999999\n", "2: label '99999999999999999999' is not an integer"),
    (read_qrels, b"q 0 d 123456789012\nq 0 e 1.5\n", "2: label '1.5' is not an integer"),
])
def test_the_first_bad_number_is_named(tmp_path, reader, data, message):
    assert read_error(tmp_path, reader, data) == message


@pytest.mark.parametrize("data, message", [
    (b"q 0 d 1\nq 0 e -\n", "2: label '-' is not an integer"),
    (b"q 0 d 1e3\nq 0 e +\n", "1: label '1e3' is not an integer"),
    (b"q 0 d 1\nq 0 e 123456789012\nq 0 f +\n", "3: label '+' is not an integer"),
    (b"q 0 d 9223372036854775807\nq 0 e 9223372036854775808\n", "2: label '9223372036854775808' is not an integer"),
    (b"q 0 d 1\nq 0 e 9223372036854775809\nq 0 f -\n", "2: label '9223372036854775809' is not an integer"),
])
def test_integers_the_c_parser_misreads_are_refused(tmp_path, data, message):
    """NumPy's integer parser reads a lone sign as 0 and saturates beyond int64, also where a float64 cannot tell
    (2**63 reads as 2**63 - 1): such labels are errors naming their line, not wrong labels or a bare ValueError."""
    assert read_error(tmp_path, read_qrels, data) == message


def test_the_extreme_integers_and_floats_near_them_read_exactly(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q 0 a 9223372036854775807\nq 0 b -9223372036854775808\nq 0 c 123456789012\nq 0 d -0\n")
    assert read_qrels(path).to_dict() == {"q": {"a": 2**63 - 1, "b": -(2**63), "c": 123456789012, "d": 0}}
    path = tmp_path / "run.txt"
    scores = [b"9223372036854775807", b"9.223372036854775807e18", b"-9223372036854775808.0", b"1e-3", b"inf"]
    path.write_bytes(b"".join(b"q Q0 d%d 1 %s t\n" % (i, s) for i, s in enumerate(scores)))
    run = read_run(path)
    assert [bits(v) for v in run.scores[0]] == [bits(float(s)) for s in scores]
