"""Byte-level scanning of whitespace-separated text files: blocks of whole lines, field boundaries, tokens, numbers.

Why byte level: a 10M-line run is ~400 MB of text, and one Python string per line (pytrec_eval's parser) costs tens
of seconds. Here a file is read in blocks of bytes, fields are found with vectorized whitespace/newline masks, and
number columns are parsed eight bytes at a time. Used by `trec.py`; ids become integer codes in `vocabulary.py`.
"""

from __future__ import annotations

import gzip
import zlib

import numpy as np

from ..errors import RagretrievalError

BLOCK_BYTES = 1 << 22  # small enough for every per-block temporary to be recycled by malloc instead of re-mapped
SLACK = 256  # spare bytes after a block, so a fixed-width window may start at any token
NEWLINE, SPACE = 10, 32
GZIP_MAGIC = b"\x1f\x8b"


class TrecFormatError(RagretrievalError, ValueError):
    """A malformed TREC file; the message starts with ``path:line:``."""


class LineError(ValueError):
    """A malformed line of a block, `line` counted from the block's first line (0-based); the caller names the file
    and the line in the file."""

    def __init__(self, line: int, detail: str):
        super().__init__(detail)
        self.line, self.detail = line, detail


def is_gzip(path) -> bool:
    """Whether the file starts as a gzip stream does (its name does not matter)."""
    with open(path, "rb") as probe:
        return probe.read(2) == GZIP_MAGIC


def open_binary(path):
    """`path` opened for reading bytes; a gzip file (`is_gzip`) is decompressed as it is read."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def _read_into(file, view, path) -> int:
    """`file.readinto(view)`, a damaged gzip stream told as a `TrecFormatError` naming the file."""
    try:
        return file.readinto(view)
    except EOFError as error:
        raise TrecFormatError(f"{path}: the gzip file is truncated ({error})") from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise TrecFormatError(f"{path}: not a valid gzip file ({error})") from None


def blocks(path, buffers: int = 1, whole_queries: bool = False):
    """Yield (buffer, size): the first `size` bytes of `buffer` are whole lines, with spare bytes after the buffer's
    data. `buffers` buffers are reused in turn: a block's buffer is refilled `buffers` blocks later. With
    `whole_queries`, a block also ends where a query's lines do: its last line's first field (the query id) differs
    from the next line's (`_last_query_start`); a block then holds at least one query, however long.

    For parallel parsing this is safe only if (1) fewer than `buffers` blocks are still being parsed whenever the
    generator resumes, and (2) parsing never writes into a buffer (`tokens` and the number parsers copy or read)."""
    ring = [np.empty(2 * BLOCK_BYTES + SLACK, np.uint8) for _ in range(buffers)]
    buffer, turn, held, first = ring[0], 0, 0, True  # held: bytes not yet yielded, kept at the front
    floor = 0  # with whole_queries: the lines from 0 up to the line starting here are known to be one query
    with open_binary(path) as file:
        while True:
            if held + BLOCK_BYTES + SLACK > len(buffer):  # a line (or a query) longer than a block: grow, doubling
                grown = np.empty(max(2 * len(buffer), held + BLOCK_BYTES + SLACK), np.uint8)
                grown[:held] = buffer[:held]
                buffer = ring[turn] = grown
            got = _read_into(file, buffer.data[held : held + BLOCK_BYTES], path)
            end = held + got
            if end == 0:
                return
            if got == 0 and buffer[end - 1] != NEWLINE:  # no final newline
                buffer[end] = NEWLINE
                end += 1
            if first and bytes(buffer[:3]) == b"\xef\xbb\xbf":
                buffer[:3] = SPACE  # a UTF-8 byte-order mark is not part of the first id
            first = False
            cut = _after_last_newline(buffer, end)
            if whole_queries and got and cut:  # at the end of the file, everything left is whole queries
                start = _last_query_start(buffer, cut, floor)
                floor = 0 if start else _after_last_newline(buffer, cut - 1)
                cut = start
            held = end - cut
            if cut == 0:  # no whole line (or query) yet: keep reading into the same buffer
                continue
            yield buffer, cut
            turn = (turn + 1) % buffers
            # held < BLOCK_BYTES (what follows the last newline of the last read) and every buffer holds at least
            # 2 * BLOCK_BYTES + SLACK bytes: the held bytes, the next read and the slack always fit (with
            # whole_queries, the held query may be longer: the buffer grows above)
            following = ring[turn]
            if held + BLOCK_BYTES + SLACK > len(following):
                following = ring[turn] = np.empty(held + BLOCK_BYTES + SLACK, np.uint8)
            following[:held] = buffer[cut:end]  # a different buffer, or the same one (then the copy is safe)
            buffer = following


def _after_last_newline(buffer, end: int) -> int:
    """Position after the last newline in ``buffer[:end]``, 0 when there is none; the tail is searched first."""
    for start in (max(0, end - 65536), 0):
        found = np.flatnonzero(buffer[start:end] == NEWLINE)
        if len(found):
            return start + int(found[-1]) + 1
    return 0


_QUERY_WINDOW = 1 << 14  # bytes searched first for the start of the last query (a query is usually shorter)


def _last_query_start(buffer, end: int, floor: int) -> int:
    """Where the lines at the end of ``buffer[:end]`` (whole lines) that share the last non-blank line's first field
    begin: just after the last line whose first field differs (blank lines go with either). 0 when no line from
    `floor` (a line start) on differs: the caller knows the lines before `floor` to be of that same query."""
    size = _QUERY_WINDOW
    while True:
        low = max(floor, end - size)
        region = buffer[low:end]
        newlines = np.flatnonzero(region == NEWLINE) + low
        starts = newlines[:-1] + 1  # the lines that start inside the window (a partial first line is left out)
        if low == floor:
            starts = np.concatenate(([floor], starts))
        solid = np.flatnonzero(region > SPACE) + low
        at = np.searchsorted(solid, starts)
        token_starts = solid[np.minimum(at, len(solid) - 1)] if len(solid) else starts
        line_ends = newlines[np.searchsorted(newlines, starts)]
        filled = (at < len(solid)) & (token_starts < line_ends)
        if filled.any():
            token_starts, line_ends = token_starts[filled], line_ends[filled]
            blank = np.flatnonzero(region <= SPACE) + low
            matrix = tokens(buffer, token_starts, blank[np.searchsorted(blank, token_starts)])
            differ = np.flatnonzero((matrix != matrix[-1]).any(axis=1))
            if len(differ):
                return int(line_ends[differ[-1]]) + 1
        if low == floor:
            return 0
        size *= 4


def newlines_in(buffer, size: int) -> np.ndarray:
    return np.flatnonzero(buffer[:size] == NEWLINE)


class Fields:
    """Token boundaries of the first fields of each non-blank line of a block: `starts(f)`, `ends(f)` per field,
    and `lines`, each such line's index in the block."""

    def __init__(self, starts, ends, lines):
        self._starts, self._ends, self.lines = starts, ends, lines

    def starts(self, field: int) -> np.ndarray:
        return self._starts(field) if callable(self._starts) else self._starts[:, field]

    def ends(self, field: int) -> np.ndarray:
        return self._ends(field) if callable(self._ends) else self._ends[:, field]


def fields(buffer, newlines, exact: int | None, at_least: int | None, layout: str) -> Fields:
    """The first `exact` (exactly that many) or `at_least` fields of each non-blank line; `LineError` otherwise."""
    text = buffer[: int(newlines[-1]) + 1]
    count = exact or at_least
    if count is None:
        raise ValueError("fields: give exact or at_least")
    single = _single_spaced(text, newlines, count)
    if single is not None:
        return single
    blank = text <= SPACE
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    edges += 1
    if not blank[0]:
        edges = np.concatenate(([0], edges))
    starts, ends = edges[0::2], edges[1::2]
    before = np.searchsorted(starts, newlines)  # tokens that start before each line's newline
    counts = np.diff(before, prepend=0)
    bad = (counts != exact) if exact is not None else (counts < at_least)
    bad &= counts > 0
    if bad.any():
        i = int(np.argmax(bad))
        expected = f"{exact} fields" if exact is not None else f"at least {at_least} fields"
        raise LineError(i, f"expected {expected} ({layout}), got {counts[i]}")
    lines = np.flatnonzero(counts)
    at = (before - counts)[lines][:, None] + np.arange(count)
    return Fields(starts[at], ends[at], lines)


def _single_spaced(text, newlines, count: int) -> Fields | None:
    """The common layout, found from space positions alone: every line holds exactly `count` tokens separated by
    single spaces, and no other blank bytes (tabs, CR, blank lines) occur. None when the block is laid out otherwise."""
    spaces = np.flatnonzero(text == SPACE)
    if len(spaces) != (count - 1) * len(newlines) or np.count_nonzero(text < SPACE) != len(newlines):
        return None
    grid = spaces.reshape(len(newlines), count - 1)
    line_starts = np.concatenate(([0], newlines[:-1] + 1))
    # sorted positions: a line's first space after its start and its last before its newline means count - 1
    # spaces per line; gaps of at least 2 mean no empty token
    if count > 1 and not (np.all(grid[:, 0] > line_starts) and np.all(newlines - grid[:, -1] > 1)
                          and np.all(np.diff(spaces) > 1)):
        return None
    if count == 1 and not np.all(newlines > line_starts):
        return None
    return Fields(lambda f: line_starts if f == 0 else grid[:, f - 1] + 1,
                  lambda f: newlines if f == count - 1 else grid[:, f], np.arange(len(newlines)))


def tokens(buffer, starts, ends) -> np.ndarray:
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


def token_bytes(matrix: np.ndarray) -> np.ndarray:
    """A zero-padded uint8 matrix as bytes strings (its width stays a multiple of 8: such strings compare fast)."""
    return np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel()


_LOW_BYTES = np.array([(1 << 8 * i) - 1 for i in range(9)], np.uint64)  # the low i bytes of a word
_ONES, _DIGIT_ZEROS = 0x0101010101010101, 0x3030303030303030


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
    the same double a correctly rounded parser gives. Tokens that are not plain go to the general parser. Work
    that no token of the column needs (signs, a point beyond the first eight bytes) is skipped.
    """
    words = np.ndarray((len(buffer) - 7,), "<u8", buffer, 0, (1,))  # a word at every byte offset
    head = words[starts]
    if not integers and len(lengths) and lengths.max() <= 8:
        return _short_decimals(head, lengths)
    first = (head & np.uint64(0xFF)).astype(np.uint8)
    negative = first == ord("-")
    sign = (negative | (first == ord("+"))).astype(np.int64)
    signed = bool(sign.any())
    point = _first_byte(head, ord("."))
    far = point == 8
    if far.any():
        point[far] = 8 + _first_byte(words[starts[far] + 8], ord("."))
    np.minimum(point, lengths, out=point)
    whole = point - sign if signed else point
    w = np.minimum(whole, 8)
    left = (words[starts + sign] if signed else head) << (8 * (8 - w)).astype(np.uint64)
    left |= _DIGIT_ZEROS & _LOW_BYTES[8 - w]
    whole_value, plain = _eight_digits(left)
    plain &= whole <= 8
    if integers:
        plain &= (point == lengths) & (whole >= 1)
        value = whole_value.astype(np.int64)
        return np.where(negative, -value, value) if signed else value, plain
    fraction = np.maximum(lengths - point - 1, 0)
    plain &= (fraction <= 8) & (whole + fraction >= 1)
    f = np.minimum(fraction, 8)
    right = words[starts + point + 1] & _LOW_BYTES[f]
    right |= _DIGIT_ZEROS & ~_LOW_BYTES[f]
    fraction_value, valid = _eight_digits(right)
    whole_value *= np.uint64(10**8)
    whole_value += fraction_value
    plain &= valid & (whole_value < 2**53)
    value = whole_value.astype(np.float64)
    value /= 1e8
    return np.where(negative, -value, value) if signed else value, plain


# NumPy defines uint64 shifts by 64 or more (they give 0); the parsers below rely on it only for tokens that either
# fail validation anyway or gain zero digits.
def _short_decimals(head: np.ndarray, lengths: np.ndarray):
    """(values, plain) for a column of tokens of at most 8 bytes, each in one word: ``digits[.digits]`` with its
    point taken out reads as one integer m of up to 8 digits, and the value is m / 10**f (f digits after the point),
    one correctly rounded division, so the same double as the general path gives. Signs and exponents are not
    plain here (they go to the general parser)."""
    point = np.minimum(_first_byte(head, ord(".")), lengths)
    has_point = point < lengths
    digits = lengths - has_point
    low = head & _LOW_BYTES[point]
    high = (head >> (8 * np.minimum(point + 1, 7)).astype(np.uint64)) & _LOW_BYTES[np.maximum(lengths - point - 1, 0)]
    joined = low | (high << (8 * point).astype(np.uint64))  # the digits, point removed, in the low bytes
    joined <<= (8 * (8 - digits)).astype(np.uint64)
    joined |= _DIGIT_ZEROS & _LOW_BYTES[8 - digits]
    value, plain = _eight_digits(joined)
    plain &= digits >= 1
    return value.astype(np.float64) / _POW10_FLOAT[np.maximum(lengths - point - 1, 0)], plain


_POW10_FLOAT = 10.0 ** np.arange(9)


def numbers(buffer, starts, ends, dtype, message: str, line_of):
    """Parse a column of number tokens; the fast path first, NumPy's C parser for the rest; name the first bad one."""
    values, plain = _plain_numbers(buffer, starts, ends - starts, dtype == np.int64)
    rest = np.flatnonzero(~plain)
    if len(rest):
        matrix = tokens(buffer, starts[rest], ends[rest])
        values[rest] = _general_numbers(matrix, dtype, message, lambda i: line_of(rest[i]))
    return values


def _general_numbers(matrix: np.ndarray, dtype, message: str, line_of):
    joined = np.empty((len(matrix), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = SPACE
    flat = joined.ravel()
    text = flat[flat != 0].tobytes()
    try:
        values, bad = _checked(text, dtype)
    except ValueError:
        values = None
    if values is not None and len(values) == len(matrix):
        if not bad.any():
            return values
        i = int(np.argmax(bad))
    else:
        i = next(i for i, token in enumerate(token_bytes(matrix).tolist()) if not _parses(token, dtype))
    token = token_bytes(matrix)[i].decode("utf-8", "replace")
    raise LineError(line_of(i), message.format(token=token[:40]))


_LARGEST = np.iinfo(np.int64).max


def _checked(text: bytes, dtype):
    """(values, bad) of space-separated number tokens, ValueError when the C parser fails on one. Bad: NaN; an
    integer the float parser reads otherwise (the integer parser reads a lone sign as 0) or beyond int64 (it
    saturates to the largest int64, which floats cannot tell from its neighbours: Python's int tells)."""
    values = np.fromstring(text, dtype=dtype, sep=" ")
    if values.dtype.kind == "f":
        return values, np.isnan(values)
    bad = np.fromstring(text, dtype=np.float64, sep=" ") != values.astype(np.float64)
    top = np.flatnonzero(values == _LARGEST)
    if len(top):
        tokens_ = text.split()
        bad[top] |= np.array([int(tokens_[i]) != _LARGEST for i in top])
    return values, bad


def _parses(token: bytes, dtype) -> bool:
    """`token` alone reads as one good number of `dtype` (as `_checked` judges)."""
    try:
        values, bad = _checked(token + b" ", dtype)
    except ValueError:
        return False
    return len(values) == 1 and not bad[0]
