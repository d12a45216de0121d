"""The ``qdrant`` store: qdrant-client in local on-disk mode by default, a Qdrant server or cluster given ``url``.

Options: ``path`` (local data folder, default temporary), ``url`` (``http://HOST:6333``; an API key, if any, is read
from the environment variable named by ``api_key_env``, default ``QDRANT_API_KEY``, and never saved),
``collection``, ``exact`` (server mode: 1 = brute force, the default; 0 = HNSW with ``hnsw_ef``).

Local mode always searches by brute force (it is exact, and meant for small collections), and one client may open
a folder at a time. Point ids must be integers or UUIDs, so a point's id is a uuid5 of the chunk id; the chunk id,
parent id, text and insertion position live in the payload.
"""

from __future__ import annotations

import os
import uuid

from ragretrieval.stores import StoreError
from ragretrieval.stores.engine import EngineStore

POINT_NAMESPACE = uuid.UUID("5b1c7a52-3f0e-4d8e-9a51-6c2f2f1b9e07")  # ours: uuid5(POINT_NAMESPACE, chunk id)
QUERY_BATCH = 256  # queries per batch request


def point_id(chunk_id: str) -> str:
    return str(uuid.uuid5(POINT_NAMESPACE, chunk_id))


class QdrantStore(EngineStore):
    name = "qdrant"
    server_option = "url"
    search_modes = "exact (local mode; server: exact=1), ANN (server: exact=0, HNSW)"
    server_mode = "url=http://HOST:6333 (server or cluster)"
    insert_batch = 1000

    def __init__(self, path: str | None = None, url: str | None = None, collection: str | None = None,
                 exact: int | bool = True, hnsw_ef: int = 128, api_key_env: str = "QDRANT_API_KEY",
                 dim: int | None = None):
        super().__init__({"path": path, "url": url, "collection": collection, "exact": bool(int(exact)),
                          "hnsw_ef": int(hnsw_ef), "api_key_env": api_key_env, "dim": dim})
        self.exact = self.server is None or self.options["exact"]

    def _engine_connect(self):
        from qdrant_client import QdrantClient

        if self.server:
            return QdrantClient(url=self.server, api_key=os.environ.get(self.options["api_key_env"]) or None)
        self.data_path.mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(self.data_path))

    def _engine_create(self, dim: int) -> None:
        from qdrant_client import models

        if self.client.collection_exists(self.collection):
            self.client.delete_collection(self.collection)
        self.client.create_collection(self.collection,
                                      vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT))

    def _engine_insert(self, positions, vectors, ids, parent_ids, texts) -> None:
        from qdrant_client import models

        payloads = [{"pos": int(p), "chunk_id": i, "parent_id": d, "text": t}
                    for p, i, d, t in zip(positions, ids, parent_ids, texts)]
        self.client.upsert(self.collection, wait=True, points=models.Batch(
            ids=[point_id(i) for i in ids], vectors=vectors.tolist(), payloads=payloads))

    def _engine_query(self, queries, k):
        from qdrant_client import models

        # local mode is brute force already and warns about search params, so they go to a server only
        params = models.SearchParams(exact=self.options["exact"], hnsw_ef=max(self.options["hnsw_ef"], k)) \
            if self.server else None
        found = []
        for lo in range(0, len(queries), QUERY_BATCH):
            requests = [models.QueryRequest(query=q.tolist(), limit=k, with_payload=["pos"], params=params)
                        for q in queries[lo : lo + QUERY_BATCH]]
            for answer in self.client.query_batch_points(self.collection, requests=requests):
                found.append(([p.payload["pos"] for p in answer.points], [p.score for p in answer.points]))
        return found

    def _engine_count(self) -> int:
        if not self.client.collection_exists(self.collection):
            raise StoreError(f"qdrant collection {self.collection!r} not found in {self.server or self.data_path}")
        return self.client.count(self.collection, exact=True).count

    def _engine_disconnect(self) -> None:
        self._client.close()
