"""Vocabularies of ids: arrays of str, and `LazyIds`, whose ids read from a file stay bytes until someone asks.

Why lazy: a run file can name millions of documents that no qrels judges. The scorer needs such a document's id only
to break a score tie (or to name it in an error), so making every id a Python string (about 60 bytes each; for 4
million ids, over half a second and 250 MB) would be spent for nothing. `Run.doc_ids` decodes them on first access.
"""

from __future__ import annotations

import numpy as np

from .scan import NEWLINE, tokens


def as_id_array(ids) -> np.ndarray:
    """A 1-d array of str ids (object dtype keeps long ids cheap to hold)."""
    array = np.asarray(ids, dtype=object)
    if array.ndim != 1:
        raise ValueError("ids must be a 1-d sequence")
    return array


def decode_rows(rows: np.ndarray) -> np.ndarray:
    """Ids as zero-padded bytes (an ``S<n>`` array, no NUL inside an id) -> object array of str, decoded in one call;
    UnicodeDecodeError if one is not UTF-8."""
    if len(rows) == 0:
        return np.zeros(0, object)
    matrix = rows.view(np.uint8).reshape(len(rows), rows.dtype.itemsize)
    joined = np.zeros((len(rows), matrix.shape[1] + 1), np.uint8)
    joined[:, :-1] = matrix
    joined[:, -1] = NEWLINE
    flat = joined.ravel()
    return np.array(flat[flat != 0].tobytes().decode("utf-8").split("\n")[:-1], dtype=object)


def check_utf8(rows: np.ndarray) -> None:
    """UnicodeDecodeError unless every id of `rows` (as for `decode_rows`) is UTF-8; no string is kept."""
    if len(rows) == 0 or rows.view(np.uint8).max() < 0x80:  # all ASCII (the usual case) is UTF-8
        return
    joined = np.zeros((len(rows), rows.dtype.itemsize + 1), np.uint8)  # a NUL after each id: no sequence spans two
    joined[:, :-1] = rows.view(np.uint8).reshape(len(rows), -1)
    joined.tobytes().decode("utf-8")


class LazyIds:
    """A vocabulary whose first ids are str objects (`head`) and whose other ids (`tail`) are UTF-8 ids kept as
    zero-padded bytes (an ``S<n>`` array, checked to be UTF-8), decoded only when asked for. The tail is distinct for
    a run read whole; a batch of a streamed run keeps one entry per line (`line_codes.py`).

    Code c names ``head[c]`` when ``c < len(head)``, else the id in ``tail[c - len(head)]``.
    """

    def __init__(self, head: np.ndarray, tail: np.ndarray):
        self.head, self.tail = head, tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    def take(self, codes) -> np.ndarray:
        """The ids of `codes` (a 1-d int array) as an object array of str."""
        codes = np.asarray(codes, dtype=np.int64)
        out = np.empty(len(codes), dtype=object)
        in_head = codes < len(self.head)
        out[in_head] = self.head[codes[in_head]]
        out[~in_head] = decode_rows(self.tail[codes[~in_head] - len(self.head)])
        return out

    def materialise(self) -> np.ndarray:
        """Every id, as an object array of str (head ids are the same objects)."""
        return np.concatenate([self.head, decode_rows(self.tail)])


def utf8_rows(texts: list) -> np.ndarray | None:
    """str ids as UTF-8 in a zero-padded uint8 matrix, its width a multiple of 8 (`scan.tokens`): equal rows, equal
    ids. Lone surrogates, which only an id built in Python can hold, are encoded as their code points are
    (`surrogatepass`), so byte order stays code point order. None when an id is not a str or holds a NUL (the
    padding would hide it)."""
    if not texts:
        return np.zeros((0, 8), np.uint8)
    try:
        joined = np.frombuffer(("\x00".join(texts) + "\x00").encode("utf-8", "surrogatepass"), np.uint8)
    except TypeError:
        return None
    ends = np.flatnonzero(joined == 0)
    if len(ends) != len(texts):
        return None
    return tokens(joined, np.concatenate(([0], ends[:-1] + 1)), ends)


def _utf8_matrix(ids: np.ndarray) -> np.ndarray:
    """`utf8_rows` of any ids: one that is not a str (from_dict accepts any key) is compared as its str, and ids
    holding a NUL are encoded one by one."""
    texts = ids.tolist()
    rows = utf8_rows(texts)
    if rows is not None:
        return rows
    texts = [t if isinstance(t, str) else str(t) for t in texts]
    rows = utf8_rows(texts)
    if rows is not None:
        return rows
    padded = _padded(np.array([t.encode("utf-8", "surrogatepass") for t in texts], dtype=bytes))
    return padded.view(np.uint8).reshape(len(padded), -1)


def _padded(rows: np.ndarray) -> np.ndarray:
    """A bytes array widened (with zeros) to a multiple of 8 bytes."""
    return rows.astype(f"S{max(8, -(-rows.dtype.itemsize // 8) * 8)}")


def id_bytes(vocabulary, codes) -> np.ndarray:
    """The ids of `codes` as UTF-8 in a zero-padded uint8 matrix whose width is a multiple of 8: rows compare (as
    big-endian words) in the ids' byte order. Ids held as bytes (`LazyIds`) are not decoded."""
    codes = np.asarray(codes, dtype=np.int64)
    if not isinstance(vocabulary, LazyIds):
        return _utf8_matrix(vocabulary[codes])
    in_head = codes < len(vocabulary.head)
    head = _utf8_matrix(vocabulary.head[codes[in_head]])
    rows = _padded(vocabulary.tail[codes[~in_head] - len(vocabulary.head)])
    tail = rows.view(np.uint8).reshape(len(rows), rows.dtype.itemsize)
    out = np.zeros((len(codes), max(head.shape[1], tail.shape[1])), np.uint8)
    out[in_head, : head.shape[1]] = head
    out[~in_head, : tail.shape[1]] = tail
    return out


def ids_of(vocabulary, codes) -> np.ndarray:
    """The ids of `codes` in a vocabulary held as an array or as `LazyIds`."""
    return vocabulary.take(codes) if isinstance(vocabulary, LazyIds) else vocabulary[np.asarray(codes, np.int64)]


def head_of(vocabulary) -> np.ndarray:
    """The ids of a vocabulary that are already str objects (all of an array)."""
    return vocabulary.head if isinstance(vocabulary, LazyIds) else vocabulary
