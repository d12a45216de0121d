"""The ``milvus`` store: Milvus Lite (embedded, a local database folder) by default, a Milvus server given ``uri``.

Options: ``path`` (embedded data folder, default temporary), ``uri`` (``http://HOST:19530``; the token, if any, is
read from the environment variable named by ``token_env``, default ``MILVUS_TOKEN``, and never saved),
``collection``, ``index`` (``FLAT``: exact, the default; ``HNSW`` or ``IVF_FLAT``: approximate), ``m``,
``ef_construction``, ``ef`` (HNSW), ``nlist``, ``nprobe`` (IVF_FLAT).

Milvus Lite 3.x keeps a database in a folder, locks it for one process, and needs ``load_collection`` after a
reopen; it serves each path from an in-process gRPC server that outlives the client, so `close` stops it too.
Every collection is created with Strong consistency, so a search sees every insert before it.
"""

from __future__ import annotations

import os

from ragretrieval.stores import StoreError
from ragretrieval.stores.engine import EngineStore

INDEXES = ("FLAT", "HNSW", "IVF_FLAT")
MAX_TEXT_BYTES = 65535  # the longest VARCHAR Milvus stores
QUERY_BATCH = 1000  # queries per search request


class MilvusStore(EngineStore):
    name = "milvus"
    server_option = "uri"
    search_modes = "exact (index=FLAT), ANN (index=HNSW, IVF_FLAT)"
    server_mode = "uri=http://HOST:19530 (server or cluster)"

    def __init__(self, path: str | None = None, uri: str | None = None, collection: str | None = None,
                 index: str = "FLAT", m: int = 16, ef_construction: int = 200, ef: int = 128, nlist: int = 1024,
                 nprobe: int = 16, token_env: str = "MILVUS_TOKEN", dim: int | None = None):
        index = str(index).upper()
        if index not in INDEXES:
            raise StoreError(f"milvus index must be one of {', '.join(INDEXES)}; got {index!r}")
        super().__init__({"path": path, "uri": uri, "collection": collection, "index": index, "m": int(m),
                          "ef_construction": int(ef_construction), "ef": int(ef), "nlist": int(nlist),
                          "nprobe": int(nprobe), "token_env": token_env, "dim": dim})
        self.exact = index == "FLAT"

    def _engine_connect(self):
        from pymilvus import MilvusClient

        if self.server:
            client = MilvusClient(uri=self.server, token=os.environ.get(self.options["token_env"], ""))
        else:
            self.data_path.mkdir(parents=True, exist_ok=True)
            client = MilvusClient(str(self.data_path / "milvus.db"))
        if self._has_collection and client.has_collection(self.collection):  # a reopened collection starts released
            client.load_collection(self.collection)
        return client

    def _engine_create(self, dim: int) -> None:
        from pymilvus import DataType

        client, o = self.client, self.options
        if client.has_collection(self.collection):
            client.drop_collection(self.collection)
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pos", DataType.INT64, is_primary=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("chunk_id", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
        schema.add_field("parent_id", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
        params = {"HNSW": {"M": o["m"], "efConstruction": o["ef_construction"]}, "IVF_FLAT": {"nlist": o["nlist"]},
                  "FLAT": {}}[o["index"]]
        index_params = client.prepare_index_params()
        index_params.add_index(field_name="vector", index_type=o["index"], metric_type="IP", params=params)
        client.create_collection(self.collection, schema=schema, index_params=index_params,
                                 consistency_level="Strong")

    def _engine_insert(self, positions, vectors, ids, parent_ids, texts) -> None:
        for value in (*ids, *parent_ids, *texts):
            if len(value.encode("utf-8")) > MAX_TEXT_BYTES:
                raise StoreError(f"milvus keeps at most {MAX_TEXT_BYTES} bytes per id or text; "
                                 f"one of {ids[0]!r}..{ids[-1]!r} is longer (use smaller chunks)")
        rows = [{"pos": int(p), "vector": v, "chunk_id": i, "parent_id": d, "text": t}
                for p, v, i, d, t in zip(positions, vectors.tolist(), ids, parent_ids, texts)]
        self.client.insert(self.collection, rows)

    def _engine_query(self, queries, k):
        o = self.options
        params = {"HNSW": {"ef": max(o["ef"], k)}, "IVF_FLAT": {"nprobe": o["nprobe"]}, "FLAT": {}}[o["index"]]
        found = []
        for lo in range(0, len(queries), QUERY_BATCH):
            rows = self.client.search(self.collection, data=queries[lo : lo + QUERY_BATCH].tolist(), limit=k,
                                      output_fields=[], search_params={"metric_type": "IP", "params": params})
            found.extend(([hit.id for hit in row], [hit.distance for hit in row]) for row in rows)
        return found

    def _engine_count(self) -> int:
        return int(self.client.query(self.collection, filter="", output_fields=["count(*)"])[0]["count(*)"])

    def _engine_opened(self) -> None:
        if not self.client.has_collection(self.collection):
            raise StoreError(f"milvus collection {self.collection!r} not found in {self.server or self.data_path}")

    def _engine_disconnect(self) -> None:
        self._client.close()
        if not self.server:  # Milvus Lite keeps serving a path after its client closes: stop it, release the files
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(str(self.data_path / "milvus.db"))
