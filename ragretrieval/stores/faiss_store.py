"""FAISS: exact inner product (``flat``, the default), or approximate ``hnsw`` and ``ivf``.

Options: ``hnsw``: ``m`` (links per node, 32), ``ef_construction`` (200), ``ef_search`` (128);
``ivf``: ``nlist`` (cells, default about 4 sqrt(n)), ``nprobe`` (cells searched, 16).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from ..work.limits import Integer
from ..work.options import PluginOptions
from .base import DEFAULT_STORE, Records, SearchResult, StoreError, check_queries, check_vectors

INDEX_FILE = "index.faiss"
KINDS = ("flat", "hnsw", "ivf")


class FaissOptions(PluginOptions):
    kind: Literal["flat", "hnsw", "ivf"] = Field("flat", description="exact inner product, or approximate HNSW/IVF")
    m: Integer = Field(32, ge=2, le=512, description="hnsw: links per node")
    ef_construction: Integer = Field(200, ge=1, description="hnsw: candidates while building")
    ef_search: Integer = Field(128, ge=1, description="hnsw: candidates while searching")
    nlist: Integer | None = Field(None, ge=1, description="ivf: cells [default: about 4 sqrt(n)]")
    nprobe: Integer = Field(16, ge=1, description="ivf: cells searched")


class FaissStore:
    name = DEFAULT_STORE
    Options = FaissOptions
    search_modes = "exact (kind=flat), ANN (kind=hnsw, kind=ivf)"
    server_mode = None

    def __init__(self, kind: str = "flat", m: int = 32, ef_construction: int = 200, ef_search: int = 128,
                 nlist: int | None = None, nprobe: int = 16):
        if kind not in KINDS:
            raise StoreError(f"faiss kind must be one of {', '.join(KINDS)}; got {kind!r}")
        self.options = {"kind": kind, "m": int(m), "ef_construction": int(ef_construction),
                        "ef_search": int(ef_search), "nlist": None if nlist is None else int(nlist),
                        "nprobe": int(nprobe)}
        self.exact = kind == "flat"
        self.records = Records()
        self._index = None

    def _new_index(self, vectors: np.ndarray):
        import faiss

        dim, kind, o = vectors.shape[1], self.options["kind"], self.options
        if kind == "flat":
            return faiss.IndexFlatIP(dim)
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, o["m"], faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = o["ef_construction"]
            index.hnsw.efSearch = o["ef_search"]
            return index
        nlist = o["nlist"] or max(1, min(len(vectors), int(4 * np.sqrt(len(vectors)))))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = min(o["nprobe"], nlist)
        return index

    def add(self, vectors, ids, parent_ids, texts) -> None:
        vectors = check_vectors(vectors, self._index.d if self._index is not None else None)
        self.records.extend(ids, parent_ids, texts, len(vectors))
        if self._index is None:
            self._index = self._new_index(vectors)
        self._index.add(vectors)

    def search(self, queries, k: int) -> SearchResult:
        queries = check_queries(queries, self._index.d if self._index is not None else None, k)
        if self._index is None:
            empty = (len(queries), k)
            return SearchResult(np.full(empty, -1, np.int64), np.full(empty, -np.inf, np.float32))
        scores, indices = self._index.search(queries, k)
        return SearchResult(indices.astype(np.int64), np.where(indices >= 0, scores, -np.inf).astype(np.float32))

    def save(self, folder) -> None:
        import faiss

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self._index is not None:
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            os.close(fd)
            faiss.write_index(self._index, tmp)
            os.replace(tmp, folder / INDEX_FILE)
        self.records.save(folder, self.name, self.options)

    @classmethod
    def load(cls, folder) -> "FaissStore":
        import faiss

        records, options = Records.load(folder, cls.name)
        store = cls(**options)
        store.records = records
        if (Path(folder) / INDEX_FILE).exists():
            store._index = faiss.read_index(str(Path(folder) / INDEX_FILE))
            if options["kind"] == "hnsw":
                store._index.hnsw.efSearch = options["ef_search"]
        return store

    def index_sizes(self) -> tuple[int | None, int | None]:
        """(bytes in memory, None): the index as FAISS serialises it, which is what it holds in memory."""
        if self._index is None:
            return 0, None
        import faiss

        return int(faiss.serialize_index(self._index).nbytes), None

    def __len__(self) -> int:
        return len(self.records.ids)
