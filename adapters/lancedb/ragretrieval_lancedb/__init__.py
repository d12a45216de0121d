"""The ``lancedb`` store: LanceDB embedded, on disk.

Options: ``path`` (database folder, default temporary), ``collection`` (the table name), ``index`` (``none``: a
brute-force scan, exact, the default; ``ivf_hnsw_sq``: approximate, built after each add once the table holds at
least 256 rows), ``nprobes`` (IVF cells searched, 20), ``ef`` (HNSW, 128).

Searches select ``_distance`` explicitly (LanceDB warns on every search otherwise); with the ``dot`` metric,
``_distance`` is 1 - inner product.
"""

from __future__ import annotations

import sys

import numpy as np

from ragretrieval.stores import StoreError
from ragretrieval.stores.engine import EngineStore

INDEXES = ("none", "ivf_hnsw_sq")
MIN_INDEX_ROWS = 256  # LanceDB trains IVF partitions and needs enough rows
QUERY_BATCH = 1000


def _lancedb():
    """``import lancedb``, shielded from a namespace package named ``datasets``.

    A folder named ``datasets`` on sys.path (this repository has one; ``python -m pytest`` puts the working directory
    on the path) imports as an empty namespace package; LanceDB takes it for Hugging Face ``datasets`` and fails, on
    import and on every add, importing ``Dataset`` from it. LanceDB is told it has seen that module already."""
    shadow = sys.modules.get("datasets")
    shadowed = shadow is not None and not hasattr(shadow, "Dataset")
    if shadowed:
        del sys.modules["datasets"]
    try:
        import lancedb
        from lancedb import scannable
    finally:
        if shadowed:
            sys.modules["datasets"] = shadow
    if shadowed:
        getattr(scannable, "_registered_modules", set()).add("datasets")
    return lancedb


class LanceStore(EngineStore):
    name = "lancedb"
    server_option = "uri"  # LanceDB Cloud / object storage URIs are not supported here; see docs/stores.md
    search_modes = "exact (index=none), ANN (index=ivf_hnsw_sq)"
    server_mode = None
    insert_batch = 100_000

    def __init__(self, path: str | None = None, collection: str | None = None, index: str = "none",
                 nprobes: int = 20, ef: int = 128, dim: int | None = None):
        if index not in INDEXES:
            raise StoreError(f"lancedb index must be one of {', '.join(INDEXES)}; got {index!r}")
        super().__init__({"path": path, "collection": collection, "index": index, "nprobes": int(nprobes),
                          "ef": int(ef), "dim": dim})
        self.exact = index == "none"

    def _engine_connect(self):
        lancedb = _lancedb()
        self.data_path.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(str(self.data_path))

    def _table(self):
        return self.client.open_table(self.collection)

    def _engine_create(self, dim: int) -> None:
        import pyarrow as pa

        _lancedb()
        schema = pa.schema([("pos", pa.int64()), ("vector", pa.list_(pa.float32(), dim)), ("chunk_id", pa.string()),
                            ("parent_id", pa.string()), ("text", pa.string())])
        self.client.create_table(self.collection, schema=schema, mode="overwrite")

    def _engine_insert(self, positions, vectors, ids, parent_ids, texts) -> None:
        import pyarrow as pa

        _lancedb()
        dim = vectors.shape[1]
        table = self._table()
        table.add(pa.table({
            "pos": pa.array(positions, pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), pa.float32()), dim),
            "chunk_id": pa.array(ids, pa.string()), "parent_id": pa.array(parent_ids, pa.string()),
            "text": pa.array(texts, pa.string())}))
        if self.options["index"] != "none" and table.count_rows() >= MIN_INDEX_ROWS:
            IvfHnswSq = _lancedb().index.IvfHnswSq

            table.create_index("vector", config=IvfHnswSq(distance_type="dot"), replace=True)

    def _engine_query(self, queries, k):
        found = []
        for lo in range(0, len(queries), QUERY_BATCH):
            found.extend(self._query_batch(queries[lo : lo + QUERY_BATCH], k))
        return found

    def _query_batch(self, queries, k):
        query = self._table().search(list(queries), vector_column_name="vector").metric("dot")
        if self.options["index"] != "none":
            query = query.nprobes(self.options["nprobes"]).ef(max(self.options["ef"], k))
        answer = query.select(["pos", "_distance"]).limit(k).to_arrow()
        rows = answer.column("query_index").to_numpy() if "query_index" in answer.column_names \
            else np.zeros(answer.num_rows, dtype=np.int64)
        distances = answer.column("_distance").to_numpy()
        order = np.lexsort((distances, rows))  # by query, then best first
        positions, scores = answer.column("pos").to_numpy()[order], 1.0 - distances[order]
        bounds = np.cumsum(np.bincount(rows, minlength=len(queries)))[:-1]
        return [(p.tolist(), s.tolist()) for p, s in zip(np.split(positions, bounds), np.split(scores, bounds))]

    def _engine_count(self) -> int:
        try:
            return self._table().count_rows()
        except ValueError as error:  # "Table ... was not found"
            raise StoreError(f"lancedb: {error} in {self.data_path}") from None
