"""The ``chroma`` store: chromadb in embedded persistent mode by default, a Chroma server given ``host``.

Options: ``path`` (embedded data folder, default temporary), ``host`` and ``port`` (a ``chroma run`` server),
``collection`` (3-512 characters), ``search_ef`` (default 1000), ``construction_ef`` (default 200), ``m`` (16).

Chroma searches with HNSW only, so it is approximate (``exact`` is False). At the default search ef of 1000 its
rankings of the demo dataset equal exact search (the conformance suite checks it); on random vectors it found 0.85
of the true top 5 at Chroma's own default ef and about 0.996 at ef 500 for 20k vectors. Raise ``search_ef`` for
larger corpora, and read the recall that ``benchmarks/bench_stores.py`` prints.
Vectors always come from ragretrieval (``embedding_function=None``), so Chroma never tries to download a model.
"""

from __future__ import annotations

from ragretrieval.stores import StoreError
from ragretrieval.stores.engine import EngineStore


class ChromaStore(EngineStore):
    name = "chroma"
    exact = False
    server_option = "host"
    search_modes = "ANN only (HNSW; search_ef=1000 ranks the demo exactly)"
    server_mode = "host=HOST port=8000 (chroma run)"

    def __init__(self, path: str | None = None, host: str | None = None, port: int = 8000,
                 collection: str | None = None, search_ef: int = 1000, construction_ef: int = 200, m: int = 16,
                 dim: int | None = None):
        super().__init__({"path": path, "host": host, "port": int(port), "collection": collection,
                          "search_ef": int(search_ef), "construction_ef": int(construction_ef), "m": int(m),
                          "dim": dim})
        if not 3 <= len(self.collection) <= 512:
            raise StoreError(f"chroma collection names need 3-512 characters; got {self.collection!r}")

    def _engine_connect(self):
        import chromadb

        if self.server:
            return chromadb.HttpClient(host=self.server, port=self.options["port"])
        self.data_path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(self.data_path))

    def _collection(self):
        return self.client.get_collection(self.collection, embedding_function=None)

    def _engine_create(self, dim: int) -> None:
        if self.collection in {c.name if hasattr(c, "name") else c for c in self.client.list_collections()}:
            self.client.delete_collection(self.collection)
        o = self.options
        self.client.create_collection(self.collection, embedding_function=None, metadata={
            "hnsw:space": "ip", "hnsw:search_ef": o["search_ef"], "hnsw:construction_ef": o["construction_ef"],
            "hnsw:M": o["m"]})
        self.insert_batch = min(type(self).insert_batch, self.client.get_max_batch_size())

    def _engine_insert(self, positions, vectors, ids, parent_ids, texts) -> None:
        self._collection().add(ids=ids, embeddings=vectors, documents=texts,
                               metadatas=[{"pos": int(p), "parent_id": d} for p, d in zip(positions, parent_ids)])

    def _engine_query(self, queries, k):
        answer = self._collection().query(query_embeddings=queries, n_results=k, include=["metadatas", "distances"])
        return [([m["pos"] for m in metas], [1.0 - d for d in distances])  # "ip" distance is 1 - inner product
                for metas, distances in zip(answer["metadatas"], answer["distances"])]

    def _engine_count(self) -> int:
        try:
            return self._collection().count()
        except Exception as error:  # chromadb raises NotFoundError (or ValueError in older versions)
            raise StoreError(f"chroma collection {self.collection!r} not found in "
                             f"{self.server or self.data_path}: {error}") from None

    def _engine_disconnect(self) -> None:
        self._client.close()
