"""The `VectorStore` protocol and the record keeping every store shares.

A store holds one vector per chunk together with the chunk id, its `parent_id` and its text, searches a batch of
query vectors at once (inner product on unit vectors = cosine), persists to a folder and loads back. Search results
are positions in insertion order, so the caller maps them to chunks without string lookups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ..errors import RagretrievalError
from ..io.atomic import write_text_atomic
from ..io.jsonfiles import describe

META_FILE = "store.json"
DEFAULT_STORE = "faiss"  # the store of a dense retriever when none is named (EvalConfig.store)


class StoreError(RagretrievalError):
    """A store that cannot be built, found, loaded or searched."""


class SearchResult(NamedTuple):
    indices: np.ndarray  # (n_queries, k) int64 positions in insertion order, -1 where fewer than k were found
    scores: np.ndarray  # (n_queries, k) float32, higher is better


@runtime_checkable
class VectorStore(Protocol):
    name: str
    exact: bool

    def add(self, vectors: np.ndarray, ids: Sequence[str], parent_ids: Sequence[str], texts: Sequence[str]) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> SearchResult: ...

    def save(self, folder) -> None: ...

    def __len__(self) -> int: ...


@dataclass
class Records:
    """Chunk ids, parent ids and texts in insertion order, plus the fingerprint of what was indexed."""

    ids: list[str] = field(default_factory=list)
    parent_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    fingerprint: str | None = None

    def extend(self, ids, parent_ids, texts, n_vectors: int) -> None:
        if not len(ids) == len(parent_ids) == len(texts) == n_vectors:
            raise StoreError(
                f"add() needs one id, parent id and text per vector; got {len(ids)}, {len(parent_ids)}, "
                f"{len(texts)} for {n_vectors} vectors"
            )
        # engines key their points by chunk id, so an id may be added once only
        seen = set(self.ids)
        for chunk_id in ids:
            if chunk_id in seen:
                raise StoreError(f"chunk id {chunk_id!r} is added twice; chunk ids must be unique in a store")
            seen.add(chunk_id)
        self.ids.extend(ids)
        self.parent_ids.extend(parent_ids)
        self.texts.extend(texts)

    def save(self, folder, store_name: str, options: dict) -> None:
        meta = StoreMeta(store=store_name, options=options, fingerprint=self.fingerprint, ids=self.ids,
                         parent_ids=self.parent_ids, texts=self.texts)
        write_text_atomic(Path(folder) / META_FILE, meta.model_dump_json())

    @staticmethod
    def load(folder, store_name: str) -> tuple["Records", dict]:
        meta = read_meta(folder)
        if meta.store != store_name:
            raise StoreError(f"{folder}: holds a {meta.store!r} store, not {store_name!r}")
        return Records(meta.ids, meta.parent_ids, meta.texts, meta.fingerprint), meta.options


class StoreMeta(BaseModel):
    """``store.json`` of a saved store (docs/stores.md): which store, its options, the fingerprint, the records."""

    model_config = ConfigDict(extra="forbid")
    format_version: Literal[1] = 1
    store: str
    options: dict
    fingerprint: str | None = None
    ids: list[str]
    parent_ids: list[str]
    texts: list[str]

    @model_validator(mode="after")
    def _one_record_per_chunk(self):
        if not len(self.ids) == len(self.parent_ids) == len(self.texts):
            raise ValueError(f"ids, parent_ids and texts differ in length "
                             f"({len(self.ids)}, {len(self.parent_ids)}, {len(self.texts)})")
        return self


def read_meta(folder) -> StoreMeta:
    path = Path(folder) / META_FILE
    if not path.is_file():
        raise StoreError(f"{folder}: no saved store here ({META_FILE} not found)")
    try:
        return StoreMeta.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        raise StoreError(f"{path}: {describe(error, '(top level)')}") from None


def check_vectors(vectors: np.ndarray, dim: int | None) -> np.ndarray:
    """Vectors to add as a float32 matrix whose width matches what the store already holds."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[1] == 0:
        raise StoreError(f"vectors must be a 2-d array (n_vectors x dim), got shape {vectors.shape}")
    if dim is not None and vectors.shape[1] != dim:
        raise StoreError(f"vectors have {vectors.shape[1]} dimensions, the store holds {dim}")
    return vectors


def check_queries(queries: np.ndarray, dim: int | None, k: int) -> np.ndarray:
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if queries.ndim != 2:
        raise StoreError("queries must be a 2-d array (n_queries x dim)")
    if dim is not None and queries.shape[1] != dim:
        raise StoreError(f"queries have {queries.shape[1]} dimensions, the store holds {dim}")
    if k <= 0:
        raise StoreError(f"k must be positive, got {k}")
    return queries


def check_fingerprint(records: Records, expected: str | None, folder) -> None:
    """Refuse an index built from another corpus, chunking or model."""
    if expected is not None and records.fingerprint != expected:
        raise StoreError(
            f"{folder}: index was built from a different corpus, chunking or model "
            f"({records.fingerprint} != {expected}); rebuild it (--rebuild)"
        )
