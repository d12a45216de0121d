"""`EngineStore`: what every store backed by a vector engine (adapters/*) shares, written once.

An adapter only talks to its engine (connect, create a collection, insert, query, count, disconnect); this class keeps
the records (chunk ids, parent ids, texts, fingerprint), checks shapes, pads results to k, and persists.

Where the engine keeps its data:
- embedded mode (no server address): in ``path``, by default a fresh temporary folder removed with the store.
  ``save(folder)`` copies the engine's files to ``folder/engine`` unless they already live there, so a saved index is
  one self-contained folder; ``load(folder)`` opens the engine on ``folder/engine``.
- server mode (``uri``/``url``/``host`` given): the data lives on the server, in ``collection``; ``save(folder)``
  writes only ``store.json`` (records and options, the address included), and ``load`` reconnects.

A new store owns its collection: the first ``add`` drops a collection of the same name and creates it afresh.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import Records, SearchResult, StoreError, check_queries, check_vectors

ENGINE_FOLDER = "engine"
DEFAULT_COLLECTION = "ragretrieval_chunks"


def replace_tree(source: Path, target: Path) -> None:
    """Copy folder `source` to `target`, replacing what was there only once the copy is complete."""
    staging = target.with_name(f".{target.name}.copying")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(source, staging)
    old = target.with_name(f".{target.name}.old")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


class EngineStore:
    """Base class of engine adapters; subclasses set `name`, `server_option` and implement the `_engine_*` hooks."""

    name: str
    exact = True
    server_option = "uri"  # the option that names a server; without it the engine runs embedded in `path`
    search_modes = "exact"
    server_mode: str | None = None
    insert_batch = 5000  # rows per insert call: engines cap the size of one request

    def __init__(self, options: dict):
        self.options = dict(options)  # JSON-able; everything `load` needs to reopen the store
        self.records = Records()
        self.dim: int | None = options.get("dim")
        self._client = None
        self._temporary: str | None = None
        self._has_collection = False

    # ---- the engine hooks ----------------------------------------------------------------------------------------
    def _engine_connect(self):
        """Open a client (embedded on `self.data_path` or on the server)."""
        raise NotImplementedError

    def _engine_create(self, dim: int) -> None:
        """Create the collection afresh (dropping one of the same name)."""
        raise NotImplementedError

    def _engine_insert(self, positions: np.ndarray, vectors: np.ndarray, ids: Sequence[str],
                       parent_ids: Sequence[str], texts: Sequence[str]) -> None:
        raise NotImplementedError

    def _engine_query(self, queries: np.ndarray, k: int) -> list[tuple[list[int], list[float]]]:
        """Per query: positions and inner-product scores of (at most) the k best points, best first."""
        raise NotImplementedError

    def _engine_count(self) -> int:
        raise NotImplementedError

    def _engine_opened(self) -> None:
        """Called once after `load` reopened an existing collection (e.g. to load it into memory)."""

    def _engine_disconnect(self) -> None:
        """Close the client so another one may open the same files."""

    # ---- the VectorStore protocol ----------------------------------------------------------------------------------
    @property
    def server(self):
        return self.options.get(self.server_option)

    @property
    def collection(self) -> str:
        return self.options.get("collection") or DEFAULT_COLLECTION

    @property
    def data_path(self) -> Path:
        if self.options.get("path"):
            return Path(self.options["path"])
        if self._temporary is None:
            self._temporary = tempfile.mkdtemp(prefix=f"ragretrieval-{self.name}-")
            weakref.finalize(self, shutil.rmtree, self._temporary, True)
        return Path(self._temporary)

    @property
    def client(self):
        if self._client is None:
            self._client = self._engine_connect()
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._engine_disconnect()
            self._client = None

    def add(self, vectors, ids, parent_ids, texts) -> None:
        vectors = check_vectors(vectors, self.dim)
        start = len(self.records.ids)
        self.records.extend(ids, parent_ids, texts, len(vectors))
        try:
            if not self._has_collection:
                self._engine_create(vectors.shape[1])
                self._has_collection = True
            self.dim = vectors.shape[1]
            for lo in range(0, len(vectors), self.insert_batch):
                hi = min(lo + self.insert_batch, len(vectors))
                self._engine_insert(np.arange(start + lo, start + hi), vectors[lo:hi], list(ids[lo:hi]),
                                    list(parent_ids[lo:hi]), list(texts[lo:hi]))
        except BaseException:
            for column in (self.records.ids, self.records.parent_ids, self.records.texts):
                del column[start:]
            raise

    def search(self, queries, k: int) -> SearchResult:
        queries = check_queries(queries, self.dim, k)
        indices = np.full((len(queries), k), -1, dtype=np.int64)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        if len(self) and len(queries):
            for row, (positions, found) in enumerate(self._engine_query(queries, min(k, len(self)))):
                indices[row, : len(positions)] = positions
                scores[row, : len(found)] = found
        return SearchResult(indices, scores)

    def save(self, folder) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        options = dict(self.options, dim=self.dim)
        if self.server is None:
            target = folder / ENGINE_FOLDER
            if self.data_path.resolve() != target.resolve():
                self.close()  # embedded engines lock their files and flush on close
                self.data_path.mkdir(parents=True, exist_ok=True)  # an empty store may not have touched it yet
                replace_tree(self.data_path, target)
            options["path"] = None  # a saved store's engine files are always in folder/engine
        self.records.save(folder, self.name, options)

    @classmethod
    def load(cls, folder) -> "EngineStore":
        records, options = Records.load(folder, cls.name)
        if not options.get(cls.server_option):
            options["path"] = str(Path(folder) / ENGINE_FOLDER)
        store = cls(**options)
        store.records = records
        if records.ids:
            store._has_collection = True
            store._engine_opened()
            found = store._engine_count()
            if found != len(records.ids):
                where = store.server or store.data_path
                store.close()
                raise StoreError(f"{folder}: store.json lists {len(records.ids)} chunks but collection "
                                 f"{store.collection!r} in {where} holds {found}; rebuild the index (--rebuild)")
        return store

    def index_sizes(self) -> tuple[int | None, int | None]:
        """(None, bytes of the engine's data folder): engines do not tell their memory; a server's disk is its own."""
        if self.server is not None or self._temporary is None and not self.options.get("path"):
            return None, None
        folder = self.data_path
        return None, sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else None

    def __len__(self) -> int:
        return len(self.records.ids)
