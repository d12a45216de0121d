"""Read and write TREC qrels and run files at NumPy speed (the scanning is in `scan.py`, id coding in `vocabulary.py`).

Formats: fields are separated by runs of spaces, tabs or other ASCII control characters; CRLF, blank lines and a
missing final newline are fine; ids are UTF-8.
- qrels: ``qid iteration docid label``, exactly 4 fields; the iteration is ignored, the label is an integer.
- run: ``qid Q0 docid rank score tag [anything]``, at least 6 fields; only qid, docid and score are read. Lines may
  come in any order: the scorer ranks by score (the rank column is ignored, as by trec_eval).
Errors are `TrecFormatError` naming the file and the 1-based line: ``run.txt:7: score 'abc' is not a number``.
"""

from __future__ import annotations

import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..errors import RagretrievalError
from ..io.atomic import atomic_writer
from .scan import NEWLINE, SPACE, LineError, TrecFormatError, blocks, fields, newlines_in, numbers, open_binary, tokens
from .types import PAD, THREADS, Qrels, Run, as_id_array
from .vocabulary import IdColumn

_THREADS = THREADS  # block parsers
DOC_PARTS = 1 if _THREADS == 1 else 4  # doc ids are grouped in this many parts, in parallel

__all__ = ["TrecFormatError", "read_qrels", "read_run", "write_qrels", "write_run"]


# ---------------------------------------------------------------------------------------------------------- reading
def _not_utf8(path, id_fields) -> str:
    """Error path only: the first line with an id that is not UTF-8, found by a plain scan."""
    with open_binary(path) as file:
        for number, line in enumerate(file, start=1):
            for name, field in zip(("query", "document"), id_fields):
                token = (re.split(rb"[\x00-\x20]+", line.strip(bytes(range(33))))[field:] or [b""])[0]
                try:
                    token.decode("utf-8")
                except UnicodeDecodeError:
                    return f"{path}:{number}: {name} id {token.decode('utf-8', 'replace')!r} is not valid UTF-8"
    return f"{path}: an id is not valid UTF-8"


@dataclass(frozen=True)
class _Layout:
    fields: str  # as named in messages
    exact: bool  # exactly that many fields, else at least that many
    number_field: int
    dtype: type
    message: str
    line_numbers: bool  # kept per record (for the duplicate judgement message)
    lazy_docs: bool  # doc ids other than known ones stay bytes until asked for (`LazyIds`)
    id_fields: tuple = (0, 2)  # query, document
    tag_field: int | None = None  # kept from a block's last line (trec_eval prints the file's last run tag)


_QRELS = _Layout("qid 0 docid rel", True, 3, np.int64, "label '{token}' is not an integer", True, False)
_RUN = _Layout("qid Q0 docid rank score tag", False, 4, np.float64, "score '{token}' is not a number", False, True,
               tag_field=5)
RUN_LAYOUT = _RUN  # for the readers of runs in batches (stream.py, grouping.py)


class Parsed(NamedTuple):
    """One block of a file, parsed: its first line's number, its lines, per id column what `IdColumn.prepare` made
    of it, the numbers, the 1-based line of each record (qrels only), the tag of its last line (runs only), and its
    size in bytes."""

    first_line: int
    n_lines: int
    ids: list
    values: np.ndarray
    lines: np.ndarray | None
    tag: bytes | None
    size: int


def _parse_block(layout: _Layout, columns, buffer, size):
    """One block: (lines in the block, per id column what it prepared, numbers, block line of each record, tag)."""
    newlines = newlines_in(buffer, size)
    n = len(layout.fields.split())
    exact, at_least = (n, None) if layout.exact else (None, n)
    found = fields(buffer, newlines, exact, at_least, layout.fields)
    ids = [column.prepare(tokens(buffer, found.starts(f), found.ends(f)))
           for column, f in zip(columns, layout.id_fields)]
    at, lines = layout.number_field, found.lines
    values = numbers(buffer, found.starts(at), found.ends(at), layout.dtype, layout.message, lambda i: int(lines[i]))
    tag = None
    if layout.tag_field is not None and len(lines):
        tag = bytes(buffer[found.starts(layout.tag_field)[-1] : found.ends(layout.tag_field)[-1]])
    return len(newlines), ids, values, lines if layout.line_numbers else None, tag, size


def parse_blocks(path, layout: _Layout, columns, pool, whole_queries: bool = False):
    """Yield each block of the file as `Parsed`, in file order. Blocks are parsed by `pool` (NumPy releases the
    GIL), at most 2 x `_THREADS` at a time; with one more buffer than that, a buffer is refilled only once its block
    is parsed. `columns` prepare the id fields (only their `prepare` is called)."""
    first_line = 1

    def gathered(future) -> Parsed:
        nonlocal first_line
        try:
            n_lines, ids, values, lines, tag, size = future.result()
        except LineError as error:
            raise TrecFormatError(f"{path}:{first_line + error.line}: {error.detail}") from None
        parsed = Parsed(first_line, n_lines, ids, values, None if lines is None else lines + first_line, tag, size)
        first_line += n_lines
        return parsed

    pending: deque = deque()
    for block in blocks(path, buffers=2 * _THREADS + 1, whole_queries=whole_queries):
        pending.append(pool.submit(_parse_block, layout, columns, *block))
        if len(pending) == 2 * _THREADS:
            yield gathered(pending.popleft())
    while pending:
        yield gathered(pending.popleft())


def encoded(path, encode, layout: _Layout = _RUN):
    """`encode()` (an `IdColumn`'s encoding); an id that is not UTF-8 is named by its line (`path`: the file to
    search for it)."""
    try:
        return encode()
    except UnicodeDecodeError:
        raise TrecFormatError(_not_utf8(path, layout.id_fields)) from None


def _read(path, layout: _Layout, known_docs=None):
    """Shared reader: (id codes and vocabularies, numbers, 1-based line of each record)."""
    # queries in file order; doc order is free, so docs are split into parts grouped in parallel
    columns = [IdColumn(ordered=True),
               IdColumn(ordered=False, parts=DOC_PARTS, known=known_docs, lazy=layout.lazy_docs)]
    numbers, line_numbers = [], []
    with ThreadPoolExecutor(_THREADS) as pool:
        for parsed in parse_blocks(path, layout, columns, pool):
            for column, prepared in zip(columns, parsed.ids):
                column.add(prepared)
            numbers.append(parsed.values)
            line_numbers.append(parsed.lines)
        codes = encoded(path, lambda: [columns[0].encode(runs=True), columns[1].encode(pool)], layout)
    values = np.concatenate(numbers) if numbers else np.zeros(0, layout.dtype)
    lines = np.concatenate(line_numbers) if layout.line_numbers and line_numbers else None
    return codes, values, lines


def read_qrels(path) -> Qrels:
    """Read ``qid 0 docid label`` lines; a (query, document) pair judged twice is an error. A gzip file is read as
    it is."""
    (queries, docs), labels, lines = _read(path, _QRELS)
    ((heads, lengths), query_ids), (doc_codes, doc_ids) = queries, docs
    query_codes = np.repeat(heads, lengths)
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
    indptr = np.concatenate(([0], np.cumsum(np.bincount(query_codes, minlength=len(query_ids)))))
    # sorted by query, then doc; the vocabularies are unique by construction
    return Qrels.from_arrays(query_ids, doc_ids, indptr, doc_codes[order], labels[order], check_ids=False)


def read_run(path, doc_ids=None) -> Run:
    """Read ``qid Q0 docid rank score tag`` lines; each query's docs keep file order (the scorer ranks them). A gzip
    file is read as it is.

    `doc_ids`, e.g. ``qrels.doc_ids``: the run's vocabulary then starts with these ids (the same objects, in order),
    followed by the run's other doc ids, and scoring against that qrels needs no translation of ids. Doc ids that
    are not among `doc_ids` are checked (UTF-8) but decoded only when `run.doc_ids` is first read: the scorer needs
    them only to break score ties.
    """
    known = None if doc_ids is None else as_id_array(doc_ids)
    (queries, docs), scores, _ = _read(path, _RUN, known)
    return run_from_columns(queries, docs, scores)


def run_from_columns(queries, docs, scores) -> Run:
    """A `Run` from the encoded id columns (the queries' runs, the docs' codes) and the lines' scores: each query's
    lines in file order."""
    ((heads, lengths), query_ids), (doc_codes, doc_ids) = queries, docs
    n_queries = len(query_ids)
    if np.all(heads[1:] >= heads[:-1]):  # each query's lines together (codes follow first appearance)
        counts = np.bincount(heads, weights=lengths, minlength=n_queries).astype(np.int64)
    else:  # lines of queries interleaved
        query_codes = np.repeat(heads, lengths)
        order = np.argsort(query_codes, kind="stable")
        query_codes, doc_codes, scores = query_codes[order], doc_codes[order], scores[order]
        counts = np.bincount(query_codes, minlength=n_queries)
    depth = int(counts.max(initial=0))
    if len(counts) and np.all(counts == depth):
        shaped = doc_codes.reshape(n_queries, depth), scores.reshape(n_queries, -1)
        return Run.from_arrays(query_ids, doc_ids, *shaped, check_ids=False)  # vocabularies unique by construction
    # lines are grouped by query, in query order: query q's lines fill the first counts[q] slots of row q, and a
    # boolean mask assigns in row-major order (no slot index per line)
    filled = np.arange(depth) < counts[:, None]
    codes = np.full((n_queries, depth), PAD, np.int64)
    codes[filled] = doc_codes
    matrix = np.full((n_queries, depth), -np.inf)
    matrix[filled] = scores
    return Run.from_arrays(query_ids, doc_ids, codes, matrix, check_ids=False)


# ---------------------------------------------------------------------------------------------------------- writing
_POW10 = 10 ** np.arange(20, dtype=np.uint64)


class TrecWriteError(RagretrievalError, ValueError):
    """An id or tag a TREC file cannot hold (empty, or with whitespace or control characters)."""


_WRITE_ROWS = 1 << 18  # records formatted per step


def _id_matrix(ids, what: str) -> np.ndarray:
    """Ids as a zero-padded uint8 matrix, refusing ids a TREC file cannot hold (empty, or containing whitespace)."""
    texts = [str(i) for i in ids]
    if not texts:
        return np.zeros((0, 8), np.uint8)
    joined = np.frombuffer(("\n".join(texts) + "\n").encode("utf-8"), np.uint8)
    ends = np.flatnonzero(joined == NEWLINE)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if np.count_nonzero(joined <= SPACE) != len(texts) or np.any(ends == starts):
        bad = next(t for t in texts if not trec_writable(t))
        raise TrecWriteError(f"{what} id {bad!r} cannot be written to a TREC file: it is empty or contains "
                             "whitespace")
    return tokens(joined, starts, ends)


def trec_writable(text: str) -> bool:
    """Non-empty and free of the bytes the reader (and trec_eval) splits fields on: ASCII space and control
    characters. An id that is not cannot be written to a TREC file (build-dataset warns about such ids)."""
    return bool(text) and all(ord(c) > SPACE for c in text)


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
        out[:, at + width] = SPACE
        at += width + 1
    out[:, -1] = NEWLINE
    flat = out.ravel()
    file.write(flat[flat != 0].tobytes())


def _constant(text: str, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text.encode(), np.uint8), (n, len(text.encode())))


def write_qrels(qrels: Qrels, path) -> None:
    """Write ``qid 0 docid label`` lines, queries in order, atomically."""
    query_text = _id_matrix(qrels.query_ids, "query")
    doc_text = _id_matrix(qrels.doc_ids, "document")
    rows = qrels.rows
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
    if not trec_writable(tag):
        raise TrecWriteError(f"tag {tag!r} cannot be written to a TREC file: it is empty or contains whitespace")
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
