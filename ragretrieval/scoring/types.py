"""Immutable, integer-coded relevance labels (`Qrels`) and rankings (`Run`).

Both carry a vocabulary of document ids (`doc_ids`) and refer to documents by their position in it, so the pipeline
never turns ids into strings and back. Build them from dicts (`from_dict`) or from arrays (`from_arrays`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from ..errors import InputError, RagretrievalError
from .ids import LazyIds, as_id_array

PAD = -1  # code of an empty slot in a ranking shorter than the run's depth
THREADS = max(1, min(4, os.cpu_count() or 1))  # for block work (reading TREC files, ranking); more would wait on memory


class ScoringError(RagretrievalError, ValueError):
    """Inputs or options the scorer cannot accept."""


class ScoringOptionError(ScoringError, InputError):
    """An option of the scorer that cannot work (a depth of 0, an unknown tie rule): the command must change (exit
    2)."""


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _add(seen: set, value) -> bool:
    """Add `value` to `seen`; False, so a generator's condition can record what it has passed."""
    seen.add(value)
    return False


def _check_unique(ids: np.ndarray, what: str) -> None:
    values = ids.tolist()
    if len(set(values)) != len(values):
        seen: set = set()
        repeated = next(i for i in values if i in seen or _add(seen, i))
        raise ValueError(f"{what} ids must be unique: {repeated!r} appears more than once")


def _rows_of(indptr: np.ndarray) -> np.ndarray:
    """The query index of each judgement of a CSR structure."""
    return np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance labels in CSR form: query i judges ``doc_codes[indptr[i]:indptr[i+1]]`` with ``labels[...]``.

    Within a query, doc codes are sorted and unique. Labels are integers; labels below zero are non-relevant.
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    indptr: np.ndarray
    doc_codes: np.ndarray
    labels: np.ndarray

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, indptr, doc_codes, labels, *, check_ids: bool = True) -> "Qrels":
        """`check_ids=False` skips the check that query and doc ids are unique (for callers that built them so)."""
        query_ids, doc_ids = as_id_array(query_ids), as_id_array(doc_ids)
        indptr = np.asarray(indptr, dtype=np.int64)
        doc_codes = np.asarray(doc_codes, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        if indptr.shape != (len(query_ids) + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            raise ValueError("indptr must start at 0, rise monotonically and have one entry per query plus one")
        if doc_codes.shape != labels.shape or indptr[-1] != len(doc_codes):
            raise ValueError("doc_codes and labels must both have indptr[-1] entries")
        if len(doc_codes) and (doc_codes.min() < 0 or doc_codes.max() >= len(doc_ids)):
            raise ValueError("doc_codes must index into doc_ids")
        if check_ids:
            _check_unique(query_ids, "query")
            _check_unique(doc_ids, "document")
        rows = _rows_of(indptr)
        keys = rows * max(len(doc_ids), 1) + doc_codes
        if not np.all(keys[1:] > keys[:-1]):  # not yet sorted by doc within each query, or a label repeats
            order = np.argsort(keys, kind="stable")
            doc_codes, labels, keys = doc_codes[order], labels[order], keys[order]
            same = keys[1:] == keys[:-1]
            if np.any(same):
                i = int(np.flatnonzero(same)[0])
                raise ValueError(
                    f"duplicate label for query {query_ids[rows[i]]!r}, document {doc_ids[doc_codes[i]]!r}")
        return cls(*(_frozen(a) for a in (query_ids, doc_ids, indptr, doc_codes, labels)))

    @classmethod
    def from_dict(cls, labels: Mapping[str, Mapping[str, int]]) -> "Qrels":
        """``{query_id: {doc_id: label}}``."""
        vocabulary: dict[str, int] = {}
        indptr, codes, values = [0], [], []
        for per_query in labels.values():
            for doc_id, label in per_query.items():
                codes.append(vocabulary.setdefault(doc_id, len(vocabulary)))
                values.append(int(label))
            indptr.append(len(codes))
        return cls.from_arrays(list(labels), list(vocabulary), indptr, codes, values, check_ids=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def rows(self) -> np.ndarray:
        """The query index of each judgement, aligned with `doc_codes` and `labels`."""
        return _rows_of(self.indptr)

    def to_dict(self) -> dict[str, dict[str, int]]:
        out = {}
        for i, query_id in enumerate(self.query_ids):
            lo, hi = self.indptr[i], self.indptr[i + 1]
            out[query_id] = {self.doc_ids[c]: int(v) for c, v in zip(self.doc_codes[lo:hi], self.labels[lo:hi])}
        return out


@dataclass(frozen=True, eq=False, init=False)
class Run:
    """Rankings as a (n_queries x depth) matrix of doc codes, padded with `PAD`; `scores` is optional.

    With ``ties="score"`` the scorer orders each row by score (descending, then doc id descending, as trec_eval);
    with ``ties="rank"`` it keeps the order of the row as given. `doc_ids` is the vocabulary of doc codes; a run read
    from a file may hold it as `LazyIds` (`vocabulary`), decoded into `doc_ids` on first access.
    """

    query_ids: np.ndarray
    codes: np.ndarray
    scores: np.ndarray | None
    vocabulary: np.ndarray | LazyIds = field(repr=False)

    def __init__(self, query_ids, doc_ids, codes, scores=None):
        for name, value in (("query_ids", query_ids), ("vocabulary", doc_ids), ("codes", codes), ("scores", scores)):
            object.__setattr__(self, name, value)

    @property
    def doc_ids(self) -> np.ndarray:
        """The doc id of each code, an object array of str."""
        if isinstance(self.vocabulary, LazyIds):
            object.__setattr__(self, "vocabulary", _frozen(self.vocabulary.materialise()))
        assert isinstance(self.vocabulary, np.ndarray)
        return self.vocabulary

    @property
    def n_docs(self) -> int:
        """Number of doc codes (the length of `doc_ids`, without decoding it)."""
        return len(self.vocabulary)

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, codes, scores=None, *, check_ids: bool = True) -> "Run":
        """`check_ids=False` skips the check that query and doc ids are unique (for callers that built them so).
        `doc_ids` may be `LazyIds` (then unchecked)."""
        query_ids = as_id_array(query_ids)
        lazy = isinstance(doc_ids, LazyIds)
        doc_ids = doc_ids if lazy else as_id_array(doc_ids)
        codes = np.asarray(codes, dtype=np.int64)
        if codes.ndim != 2 or codes.shape[0] != len(query_ids):
            raise ValueError("codes must be a 2-d array with one row per query")
        if codes.size and (codes.min() < PAD or codes.max() >= len(doc_ids)):
            raise ValueError("codes must index into doc_ids, with -1 for empty slots")
        if scores is not None:
            scores = np.asarray(scores, dtype=np.float64)
            if scores.shape != codes.shape:
                raise ValueError("scores must have the same shape as codes")
            nan = np.isnan(scores)
            if nan.any() and (nan & (codes != PAD)).any():  # an empty slot's score is never read
                raise ValueError("scores must not be NaN")
            scores = _frozen(scores)
        if check_ids:
            _check_unique(query_ids, "query")
            if not lazy:
                _check_unique(doc_ids, "document")
        return cls(_frozen(query_ids), doc_ids if lazy else _frozen(doc_ids), _frozen(codes), scores)

    @classmethod
    def from_dict(cls, rankings: Mapping[str, Mapping[str, float] | list[str]]) -> "Run":
        """``{query_id: {doc_id: score}}`` (scored) or ``{query_id: [doc_id, ...]}`` (in rank order)."""
        vocabulary: dict[str, int] = {}
        depth = max((len(r) for r in rankings.values()), default=0)
        codes = np.full((len(rankings), depth), PAD, dtype=np.int64)
        scored = any(isinstance(r, Mapping) for r in rankings.values())
        scores = np.full(codes.shape, -np.inf) if scored else None
        for i, ranking in enumerate(rankings.values()):
            for j, doc_id in enumerate(ranking):
                codes[i, j] = vocabulary.setdefault(doc_id, len(vocabulary))
                if scored:
                    if not isinstance(ranking, Mapping):
                        raise ValueError("mix of scored and unscored rankings")
                    assert scores is not None  # made above when any ranking is scored
                    scores[i, j] = float(ranking[doc_id])
        return cls.from_arrays(list(rankings), list(vocabulary), codes, scores, check_ids=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def depth(self) -> int:
        return self.codes.shape[1]
