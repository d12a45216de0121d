"""Read and write TREC qrels and run files at NumPy speed.

Why byte level: a 10M-line run is ~400 MB of text, and one Python string per line (pytrec_eval's parser) costs tens
of seconds. Here a file is read in small blocks of bytes (reused buffers: big fresh allocations are slow), fields are
found with vectorized whitespace/newline masks, ids are hashed to 64 bits and then checked byte for byte against the
first occurrence of their group (a hash collision splits a group, it never merges two ids), and only the vocabulary
of distinct ids ever becomes Python strings.

Formats: fields are separated by runs of spaces, tabs or other ASCII control characters; CRLF, blank lines and a
missing final newline are fine; ids are UTF-8.
- qrels: ``qid iteration docid label``, exactly 4 fields; the iteration is ignored, the label is an integer.
- run: ``qid Q0 docid rank score tag [anything]``, at least 6 fields; only qid, docid and score are read. Lines may
  come in any order: the scorer ranks by score (the rank column is ignored, as by trec_eval).
Errors are `TrecFormatError` naming the file and the 1-based line: ``run.txt:7: score 'abc' is not a number``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..atomic import atomic_writer
from .types import PAD, Qrels, Run

BLOCK_BYTES = 1 << 22  # small enough for every per-block temporary to be recycled by malloc instead of re-mapped
_SLACK = 256  # spare bytes after a block, so a fixed-width window may start at any token
_NEWLINE, _SPACE = 10, 32


class TrecFormatError(ValueError):
    """A malformed TREC file; the message starts with ``path:line:``."""


# ---------------------------------------------------------------------------------------------------------- reading
def _blocks(path):
    """Yield (block, newline positions, number of the block's first line); blocks are whole lines, in one reused
    buffer with spare bytes after them."""
    buffer = np.empty(2 * BLOCK_BYTES + _SLACK, np.uint8)
    held, line = 0, 1  # bytes of an unfinished line kept at the front of the buffer
    with open(path, "rb") as file:
        while True:
            if held + BLOCK_BYTES + _SLACK > len(buffer):  # one line longer than a block
                buffer = np.concatenate([buffer[:held], np.empty(held + BLOCK_BYTES + _SLACK, np.uint8)])
            got = file.readinto(memoryview(buffer)[held : held + BLOCK_BYTES])
            end = held + got
            if end == 0:
                return
            if got == 0:  # no final newline
                buffer[end] = _NEWLINE
                end += 1
            if line == 1 and bytes(buffer[:3]) == b"\xef\xbb\xbf":
                buffer[:3] = _SPACE  # a UTF-8 byte-order mark is not part of the first id
            newlines = np.flatnonzero(buffer[:end] == _NEWLINE)
            if len(newlines):
                yield buffer, newlines, line
                line += len(newlines)
            cut = int(newlines[-1]) + 1 if len(newlines) else 0
            held = end - cut
            buffer[:held] = buffer[cut:end].copy()


def _fields(buffer, newlines, exact: int | None, at_least: int | None, where, layout: str):
    """Token (start, end) arrays and, per non-blank line, its first token and block line index."""
    text = buffer[: int(newlines[-1]) + 1]
    blank = text <= _SPACE
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    edges += 1
    if not blank[0]:
        edges = np.concatenate(([0], edges))
    starts, ends = edges[0::2], edges[1::2]
    fields = exact or at_least
    if len(starts) == fields * len(newlines):  # maybe every line has exactly that many fields: no search needed
        grid_starts, grid_ends = starts.reshape(-1, fields), ends.reshape(-1, fields)
        if np.all(grid_ends[:, -1] <= newlines) and np.all(grid_starts[1:, 0] > newlines[:-1]):
            lines = np.arange(len(newlines))
            return starts, ends, lines * fields, lines
    before = np.searchsorted(starts, newlines)  # tokens that start before each line's newline
    counts = np.diff(before, prepend=0)
    bad = (counts != exact) if exact is not None else (counts < at_least)
    bad &= counts > 0
    if bad.any():
        i = int(np.argmax(bad))
        expected = f"{exact} fields" if exact is not None else f"at least {at_least} fields"
        raise TrecFormatError(f"{where(i)}: expected {expected} ({layout}), got {counts[i]}")
    lines = np.flatnonzero(counts)
    return starts, ends, (before - counts)[lines], lines


def _tokens(buffer, starts, ends) -> np.ndarray:
    """Tokens as a zero-padded uint8 matrix whose width is a multiple of 8 (rows read as uint64 words)."""
    lengths = ends - starts
    width = max(8, -(-int(lengths.max(initial=0)) // 8) * 8)
    if len(starts) and int(starts.max()) + width > len(buffer):  # a token longer than the slack: rare
        buffer = np.concatenate([buffer, np.zeros(width, np.uint8)])
    windows = np.ndarray((len(buffer) - width + 1,), f"V{width}", buffer, 0, (1,))
    words = windows[starts].view(np.uint64).reshape(len(starts), width // 8)
    for j in range(width // 8):  # keep each token's own bytes: masks per uint64 word, not per byte
        words[:, j] &= _LOW_BYTES[np.clip(lengths - 8 * j, 0, 8)]
    return words.view(np.uint8).reshape(len(starts), width)


_LOW_BYTES = np.array([(1 << 8 * i) - 1 for i in range(9)], np.uint64)  # the low i bytes of a word
_ONES, _DIGIT_ZEROS = 0x0101010101010101, 0x3030303030303030


def _hash(matrix: np.ndarray) -> np.ndarray:
    """64-bit hash of each row (multiply-xorshift over the row's uint64 words)."""
    words = matrix.view(np.uint64)
    hashes = np.full(len(words), 0x9E3779B97F4A7C15, np.uint64)
    for column in words.T:
        hashes ^= column
        hashes *= np.uint64(0xFF51AFD7ED558CCD)
        hashes ^= hashes >> np.uint64(33)
    hashes *= np.uint64(0xC4CEB9FE1A85EC53)
    hashes ^= hashes >> np.uint64(29)
    return hashes


def _rows(matrix: np.ndarray) -> np.ndarray:
    """A zero-padded uint8 matrix as bytes strings (its width stays a multiple of 8: such strings compare fast)."""
    return np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel()


def _group(hashes: np.ndarray, rows: np.ndarray, ordered: bool):
    """Number equal rows; return (code per row, first row of each code). Codes follow first appearance if `ordered`,
    else hash order.

    The hash prefix is packed above the row index so one integer sort (much faster than an argsort) groups the rows;
    then every row is compared byte for byte with its group's first row, and groups that mix ids are re-split exactly.
    Arrays are reused in place where possible (`hashes` is overwritten): fresh memory is slow to map.
    """
    n, step = len(hashes), 1 << 20
    bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << bits) - 1)
    keys = np.bitwise_and(hashes, ~low, out=hashes)  # the hash prefix above the row index
    index = np.arange(n, dtype=np.uint64)
    keys |= index
    keys.sort()
    new = np.ones(n, bool)
    np.greater(keys[1:] ^ keys[:-1], low, out=new[1:])
    order = np.bitwise_and(keys, low, out=keys).view(np.int64)
    first = order[new]
    group = np.cumsum(new, out=index.view(np.int64))
    group -= 1
    codes = np.empty(n, np.int64)
    codes[order] = group
    representatives = rows[first]
    mixed = [np.flatnonzero(rows[i : i + step] != representatives[codes[i : i + step]]) + i for i in range(0, n, step)]
    mixed = np.concatenate(mixed)
    if len(mixed) == 0 and not ordered:
        return codes, first
    live = len(first)
    if len(mixed):
        mixed_groups = np.unique(codes[mixed])
        members = np.flatnonzero(np.isin(codes, mixed_groups))
        _, sub_first, sub_codes = np.unique(rows[members], return_index=True, return_inverse=True)
        codes[members] = len(first) + sub_codes.ravel()
        first = np.concatenate([first, members[sub_first]])
        first[mixed_groups] = n  # emptied groups sort last and are dropped
        live = len(first) - len(mixed_groups)
    by_first = _sort_order(first)[:live]
    renumber = np.full(len(first), -1, np.int64)
    renumber[by_first] = np.arange(live)
    return renumber[codes], first[by_first]


def _sort_order(values: np.ndarray) -> np.ndarray:
    """argsort of non-negative ints below 2**32, as one packed integer sort."""
    bits = max(1, (len(values) - 1).bit_length())
    keys = (values.astype(np.uint64) << np.uint64(bits)) | np.arange(len(values), dtype=np.uint64)
    keys.sort()
    return (keys & np.uint64((1 << bits) - 1)).astype(np.int64)


def _decode(rows: np.ndarray) -> np.ndarray:
    """Distinct ids (bytes rows) -> object array of str, decoded in one call; UnicodeDecodeError if not UTF-8."""
    matrix = rows.view(np.uint8).reshape(len(rows), rows.dtype.itemsize)
    joined = np.zeros((len(rows), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = _NEWLINE
    flat = joined.ravel()
    return np.array(flat[flat != 0].tobytes().decode("utf-8").split("\n")[:-1], dtype=object)


def _not_utf8(path, id_fields) -> str:
    """Error path only: the first line with an id that is not UTF-8, found by a plain scan."""
    with open(path, "rb") as file:
        for number, line in enumerate(file, start=1):
            for name, field in zip(("query", "document"), id_fields):
                token = (line.split()[field:] or [b""])[0]
                try:
                    token.decode("utf-8")
                except UnicodeDecodeError:
                    return f"{path}:{number}: {name} id {token.decode('utf-8', 'replace')!r} is not valid UTF-8"
    return f"{path}: an id is not valid UTF-8"


def _distinct_runs(matrix: np.ndarray):
    """(hashes, rows, repeats) of the runs of equal consecutive ids in a block (a query's lines are one run);
    repeats is None when no id repeats the one before it."""
    hashes, rows = _hash(matrix), _rows(matrix)
    head = np.ones(len(matrix), bool)
    np.not_equal(hashes[1:], hashes[:-1], out=head[1:])
    same = np.flatnonzero(~head[1:]) + 1
    if len(same) == 0:
        return hashes, rows, None
    head[same] = rows[same] != rows[same - 1]  # equal hashes: compare the bytes too
    at = np.flatnonzero(head)
    return hashes[at], rows[at], np.diff(at, append=len(matrix)).astype(np.int32)


class _IdColumn:
    """One id field, gathered block by block."""

    def __init__(self, ordered: bool):
        self.ordered, self.heads, self.hashes, self.repeats = ordered, [], [], []

    def add(self, hashes, rows, repeats) -> None:
        self.hashes.append(hashes)
        self.heads.append(rows)
        self.repeats.append(repeats)

    def encode(self):
        """(code per line, vocabulary)."""
        if sum(len(rows) for rows in self.heads) == 0:
            return np.zeros(0, np.int64), np.zeros(0, object)
        rows = np.concatenate(self.heads)
        codes, first = _group(np.concatenate(self.hashes), rows, self.ordered)
        if any(r is not None for r in self.repeats):  # some lines repeat the id of the line before
            ones = (np.ones(len(rows), np.int32) for rows in self.heads)
            codes = np.repeat(codes, np.concatenate([o if r is None else r for r, o in zip(self.repeats, ones)]))
        return codes, _decode(rows[first])


def _first_byte(words: np.ndarray, byte: int) -> np.ndarray:
    """Index (0-7) of the first `byte` in each little-endian uint64, or 8 when absent."""
    x = words ^ np.uint64(byte * _ONES)
    found = (x - np.uint64(_ONES)) & ~x & np.uint64(0x8080808080808080)  # exact for the lowest match
    lowest = found & (~found + np.uint64(1))
    return np.where(found == 0, 8, np.bitwise_count(lowest - np.uint64(1)) >> 3).astype(np.int64)


def _eight_digits(words: np.ndarray):
    """(value, valid): each uint64 holds eight ASCII digits, most significant first; digit pairs, then pairs of
    pairs, then quads are combined by one multiply-and-shift each."""
    valid = ((words & 0xF0F0F0F0F0F0F0F0) | (((words + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4)) == (
        0x3333333333333333
    )
    words = ((words & 0x0F0F0F0F0F0F0F0F) * 2561) >> 8
    words = ((words & 0x00FF00FF00FF00FF) * 6553601) >> 16
    return ((words & 0x0000FFFF0000FFFF) * 42949672960001) >> 32, valid


def _plain_numbers(buffer, starts, lengths, integers: bool):
    """(values, plain): the common ``[+-]digits[.digits]`` tokens (up to 8 digits each side), read 8 bytes at a time.

    Exact: the digits make an integer m < 2**53 and the value is m / 10**8, one correctly rounded IEEE division,
    the same double a correctly rounded parser gives. Tokens that are not plain go to the general parser.
    """
    words = np.ndarray((len(buffer) - 7,), "<u8", buffer, 0, (1,))  # a word at every byte offset
    first = buffer[starts]
    sign = ((first == ord("-")) | (first == ord("+"))).astype(np.int64)
    point = _first_byte(words[starts], ord("."))
    point = np.minimum(np.where(point < 8, point, 8 + _first_byte(words[starts + 8], ord("."))), lengths)
    whole, fraction = point - sign, np.maximum(lengths - point - 1, 0)
    plain = (whole <= 8) & (fraction <= 8) & (whole + fraction >= 1)
    w, f = np.minimum(whole, 8), np.minimum(fraction, 8)
    left = (words[starts + sign] << (8 * (8 - w)).astype(np.uint64)) | (_DIGIT_ZEROS & _LOW_BYTES[8 - w])
    whole_value, valid = _eight_digits(left)
    plain &= valid
    if integers:
        plain &= point == lengths
        value = whole_value.astype(np.int64)
        return np.where(first == ord("-"), -value, value), plain
    right = (words[starts + point + 1] & _LOW_BYTES[f]) | (_DIGIT_ZEROS & ~_LOW_BYTES[f])
    fraction_value, valid = _eight_digits(right)
    number = whole_value * np.uint64(10**8) + fraction_value
    plain &= valid & (number < 2**53)
    value = number.astype(np.float64) / 1e8
    return np.where(first == ord("-"), -value, value), plain


def _numbers(buffer, starts, ends, dtype, message: str, where):
    """Parse a column of number tokens; the fast path first, NumPy's C parser for the rest; name the first bad one."""
    values, plain = _plain_numbers(buffer, starts, ends - starts, dtype == np.int64)
    rest = np.flatnonzero(~plain)
    if len(rest):
        values[rest] = _general_numbers(_tokens(buffer, starts[rest], ends[rest]), dtype, message, lambda i: where(rest[i]))
    return values


def _general_numbers(matrix: np.ndarray, dtype, message: str, where):
    joined = np.empty((len(matrix), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = _SPACE
    flat = joined.ravel()
    try:
        values = np.fromstring(flat[flat != 0].tobytes(), dtype=dtype, sep=" ")
    except ValueError:
        values = None
    if values is not None and len(values) == len(matrix):
        bad = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), bool)
        if not bad.any():
            return values
        i = int(np.argmax(bad))
    else:
        i = next(i for i, token in enumerate(_rows(matrix).tolist()) if not _parses(token, dtype))
    token = _rows(matrix)[i].decode("utf-8", "replace")
    raise TrecFormatError(f"{where(i)}: {message.format(token=token[:40])}")


def _parses(token: bytes, dtype) -> bool:
    try:
        return len(np.fromstring(token + b" ", dtype=dtype, sep=" ")) == 1
    except ValueError:
        return False


@dataclass(frozen=True)
class _Layout:
    fields: str  # as named in messages
    exact: bool  # exactly that many fields, else at least that many
    number_field: int
    dtype: type
    message: str
    line_numbers: bool  # kept per record (for the duplicate judgement message)
    id_fields: tuple = (0, 2)  # query, document


_QRELS = _Layout("qid 0 docid rel", True, 3, np.int64, "label '{token}' is not an integer", True)
_RUN = _Layout("qid Q0 docid rank score tag", False, 4, np.float64, "score '{token}' is not a number", False)


def _parse_block(path, layout: _Layout, buffer, newlines, line0):
    """One block: (per id field (hashes, rows, repeats), numbers, 1-based line of each record)."""
    n = len(layout.fields.split())
    exact, at_least = (n, None) if layout.exact else (None, n)
    starts, ends, first, lines = _fields(buffer, newlines, exact, at_least, lambda i: f"{path}:{line0 + i}",
                                         layout.fields)
    ids = [_distinct_runs(_tokens(buffer, starts[first + f], ends[first + f])) for f in layout.id_fields]
    at = first + layout.number_field
    numbers = _numbers(buffer, starts[at], ends[at], layout.dtype, layout.message, lambda i: f"{path}:{line0 + lines[i]}")
    return ids, numbers, lines + line0 if layout.line_numbers else None


def _read(path, layout: _Layout):
    """Shared reader: (id codes and vocabularies, numbers, 1-based line of each record)."""
    columns = [_IdColumn(ordered=True), _IdColumn(ordered=False)]  # queries in file order; doc order is free
    numbers, line_numbers = [], []
    for block in _blocks(path):
        ids, values, lines = _parse_block(path, layout, *block)
        for column, parts in zip(columns, ids):
            column.add(*parts)
        numbers.append(values)
        line_numbers.append(lines)
    try:
        encoded = [column.encode() for column in columns]
    except UnicodeDecodeError:
        raise TrecFormatError(_not_utf8(path, layout.id_fields)) from None
    values = np.concatenate(numbers) if numbers else np.zeros(0, layout.dtype)
    lines = np.concatenate(line_numbers) if layout.line_numbers and line_numbers else None
    return encoded, values, lines


def read_qrels(path) -> Qrels:
    """Read ``qid 0 docid label`` lines; a (query, document) pair judged twice is an error."""
    (queries, docs), labels, lines = _read(path, _QRELS)
    (query_codes, query_ids), (doc_codes, doc_ids) = queries, docs
    if len(labels) == 0:
        raise TrecFormatError(f"{path}: no judgements in the file")
    keys = query_codes * len(doc_ids) + doc_codes
    order = np.argsort(keys, kind="stable")
    repeated = keys[order][1:] == keys[order][:-1]
    if repeated.any():
        head = np.maximum.accumulate(np.where(np.concatenate(([True], ~repeated)), np.arange(len(order)), 0))
        i = int(np.argmin(np.where(np.concatenate(([False], repeated)), lines[order], np.iinfo(np.int64).max)))
        record, first = order[i], order[head[i]]
        raise TrecFormatError(
            f"{path}:{lines[record]}: duplicate judgement for query {query_ids[query_codes[record]]}, "
            f"document {doc_ids[doc_codes[record]]} (first on line {lines[first]})"
        )
    order = np.argsort(query_codes, kind="stable")
    indptr = np.concatenate(([0], np.cumsum(np.bincount(query_codes, minlength=len(query_ids)))))
    return Qrels.from_arrays(query_ids, doc_ids, indptr, doc_codes[order], labels[order])


def read_run(path) -> Run:
    """Read ``qid Q0 docid rank score tag`` lines; each query's docs keep file order (the scorer ranks them)."""
    (queries, docs), scores, _ = _read(path, _RUN)
    (query_codes, query_ids), (doc_codes, doc_ids) = queries, docs
    n_queries = len(query_ids)
    if len(query_codes) and np.any(query_codes[1:] < query_codes[:-1]):  # lines of queries interleaved
        order = np.argsort(query_codes, kind="stable")
        query_codes, doc_codes, scores = query_codes[order], doc_codes[order], scores[order]
    counts = np.bincount(query_codes, minlength=n_queries)
    depth = int(counts.max(initial=0))
    if len(counts) and np.all(counts == depth):
        return Run.from_arrays(query_ids, doc_ids, doc_codes.reshape(n_queries, depth), scores.reshape(n_queries, -1))
    position = np.arange(len(query_codes)) - np.repeat(np.cumsum(counts) - counts, counts)
    codes = np.full((n_queries, depth), PAD, np.int64)
    codes[query_codes, position] = doc_codes
    matrix = np.full((n_queries, depth), -np.inf)
    matrix[query_codes, position] = scores
    return Run.from_arrays(query_ids, doc_ids, codes, matrix)


# ---------------------------------------------------------------------------------------------------------- writing
_POW10 = 10 ** np.arange(20, dtype=np.uint64)
_WRITE_ROWS = 1 << 18  # records formatted per step


def _id_matrix(ids, what: str) -> np.ndarray:
    """Ids as a zero-padded uint8 matrix, refusing ids a TREC file cannot hold (empty, or containing whitespace)."""
    texts = [str(i) for i in ids]
    joined = np.frombuffer(("\n".join(texts) + "\n").encode("utf-8"), np.uint8)
    ends = np.flatnonzero(joined == _NEWLINE)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if np.count_nonzero(joined <= _SPACE) != len(texts) or np.any(ends == starts):
        bad = next(t for t in texts if not _writable(t))
        raise ValueError(f"{what} id {bad!r} cannot be written to a TREC file: it is empty or contains whitespace")
    return _tokens(joined, starts, ends)


def _writable(text: str) -> bool:
    """Non-empty and free of the bytes the reader splits fields on (ASCII space and control characters)."""
    return bool(text) and all(ord(c) > _SPACE for c in text)


def _digits(magnitude: np.ndarray, decimals: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Text of (-1)^negative * magnitude / 10^decimals, right-aligned in a zero-padded uint8 matrix."""
    digits = np.maximum(np.searchsorted(_POW10, magnitude, side="right"), decimals + 1)
    point = decimals > 0
    length = digits + point + negative
    width = int(length.max(initial=1))
    out = np.zeros((len(magnitude), width), np.uint8)
    for r in range(width):  # r-th character from the right
        index = r - (point & (r > decimals))
        digit = (magnitude // _POW10[np.minimum(index, 19)]) % np.uint64(10)
        char = np.where(index < digits, digit + 48, np.where(negative & (r == length - 1), ord("-"), 0))
        out[:, width - 1 - r] = np.where(point & (r == decimals), ord("."), char)
    return out


def _format_numbers(values: np.ndarray) -> np.ndarray:
    """Shortest fixed-point text that reads back as the identical float64 (Python's repr when there is none).

    For an integer m < 2**53 and d <= 22, m / 10**d is one correctly rounded IEEE division, exactly what a
    correctly rounded parser makes of the text m·10^-d; so when that division gives back v, the text is exact.
    """
    values = np.asarray(values, dtype=np.float64)
    magnitude = np.zeros(len(values), np.uint64)
    decimals = np.zeros(len(values), np.int64)
    todo = np.flatnonzero(np.isfinite(values))
    with np.errstate(over="ignore", invalid="ignore"):
        for d in range(18):
            absolute = np.abs(values[todo])
            m = np.rint(absolute * 10.0**d)
            exact = (m < 2.0**53) & (m / 10.0**d == absolute)
            magnitude[todo[exact]], decimals[todo[exact]] = m[exact], d
            todo = todo[~exact]
    rest = np.union1d(np.flatnonzero(~np.isfinite(values)), todo)
    out = _digits(magnitude, decimals, np.signbit(values))
    if len(rest):
        text = np.array([repr(float(v)).encode() for v in values[rest]])
        wide = np.zeros((len(values), max(out.shape[1], text.dtype.itemsize)), np.uint8)
        wide[:, : out.shape[1]] = out
        wide[rest] = 0
        wide[rest, : text.dtype.itemsize] = text.view(np.uint8).reshape(len(rest), -1)
        out = wide
    return out


def _write_table(file, columns) -> None:
    """One line per row: the columns (uint8 matrices, zero = nothing) separated by single spaces."""
    widths = [c.shape[1] for c in columns]
    out = np.zeros((len(columns[0]), sum(widths) + len(widths)), np.uint8)
    at = 0
    for column, width in zip(columns, widths):
        out[:, at : at + width] = column
        out[:, at + width] = _SPACE
        at += width + 1
    out[:, -1] = _NEWLINE
    flat = out.ravel()
    file.write(flat[flat != 0].tobytes())


def _constant(text: str, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text.encode(), np.uint8), (n, len(text.encode())))


def write_qrels(qrels: Qrels, path) -> None:
    """Write ``qid 0 docid label`` lines, queries in order, atomically."""
    query_text = _id_matrix(qrels.query_ids, "query")
    doc_text = _id_matrix(qrels.doc_ids, "document")
    rows = np.repeat(np.arange(qrels.n_queries), np.diff(qrels.indptr))
    with atomic_writer(path, binary=True) as file:
        for lo in range(0, len(rows), _WRITE_ROWS):
            part = slice(lo, lo + _WRITE_ROWS)
            labels = qrels.labels[part]
            columns = [query_text[rows[part]], _constant("0", len(labels)), doc_text[qrels.doc_codes[part]]]
            magnitude = np.abs(labels).astype(np.uint64)
            columns.append(_digits(magnitude, np.zeros(len(labels), np.int64), labels < 0))
            _write_table(file, columns)


def write_run(run: Run, path, tag: str = "ragretrieval") -> None:
    """Write ``qid Q0 docid rank score tag`` lines atomically: each row in its order, ranks 1, 2, ...

    Scores are written so they read back identical; a run without scores gets descending integer scores
    (n, n-1, ..., 1 for a ranking of n docs), so ranking by score reproduces the row order.
    """
    if not _writable(tag):
        raise ValueError(f"tag {tag!r} cannot be written to a TREC file: it is empty or contains whitespace")
    query_text = _id_matrix(run.query_ids, "query")
    doc_text = _id_matrix(run.doc_ids, "document")
    rows_per_step = max(1, _WRITE_ROWS // max(run.depth, 1))
    with atomic_writer(path, binary=True) as file:
        for lo in range(0, run.n_queries, rows_per_step):
            codes = run.codes[lo : lo + rows_per_step]
            kept = codes != PAD
            rank = np.cumsum(kept, axis=1)[kept]
            if run.scores is not None:
                scores = run.scores[lo : lo + rows_per_step][kept]
            else:
                scores = (np.repeat(kept.sum(axis=1), kept.sum(axis=1)) - rank + 1).astype(np.float64)
            rows = np.nonzero(kept)[0] + lo
            n = len(rows)
            zeros = np.zeros(n, np.int64)
            columns = [query_text[rows], _constant("Q0", n), doc_text[codes[kept]]]
            columns += [_digits(rank.astype(np.uint64), zeros, zeros.astype(bool)), _format_numbers(scores)]
            _write_table(file, columns + [_constant(tag, n)])
