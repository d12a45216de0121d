"""Fixtures for the bring-your-own tests: the demo dataset, and a real BM25 retrieval service on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.dataset import load_dataset
from ragretrieval.retrieval import BM25Retriever
from ragretrieval.testing.chat_server import send_bytes, send_json


@pytest.fixture(scope="session")
def demo(demo_dataset):
    """The demo dataset (built by the suite's conftest), loaded."""
    return load_dataset(demo_dataset)


class _Service(BaseHTTPRequestHandler):
    """POST /search {"query", "k"} -> {"results": [{"id", "score", "text", "metadata": {"parent_id"}}]};
    /documents answers with document URIs only; /flaky fails each question's first request with 503; /empty finds
    nothing, /half nothing for questions of even length (an index that lost documents); /html answers a 200 page."""

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _reply(self, status: int, payload) -> None:
        send_json(self, status, payload)

    def _page(self) -> None:
        send_bytes(self, 200, b"<!DOCTYPE html><html><body>Sign in to continue</body></html>", "text/html")

    def do_POST(self):
        server = self.server
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.seen.append((self.path, request, self.headers.get("Authorization")))
        if self.path == "/missing":
            return self._reply(404, {"error": "no such index"})
        if self.path == "/html":
            return self._page()
        if self.path == "/empty" or (self.path == "/half" and len(request["query"]) % 2 == 0):
            return self._reply(200, {"results": []})
        if self.path == "/flaky":
            with server.lock:
                first = request["query"] not in server.failed
                server.failed.add(request["query"])
            if first:
                return self._reply(503, {"error": "warming up"})
        with server.lock:
            found = server.bm25.search_texts([request["query"]], int(request["k"]))
        hits = [(server.chunks[i], float(s)) for i, s in zip(found.indices[0], found.scores[0]) if i >= 0]
        if self.path == "/documents":
            seen = list(dict.fromkeys(c.parent_id for c, _ in hits))
            return self._reply(200, {"documents": [{"uri": d} for d in seen]})
        self._reply(200, {"results": [{"id": c.chunk_id, "score": s, "text": c.text,
                                       "metadata": {"parent_id": c.parent_id}} for c, s in hits]})


@pytest.fixture(scope="session")
def bm25_service(demo):
    """A real HTTP retrieval service (BM25 over the demo chunks at the default chunking); yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    server.chunks = chunk_corpus(demo.documents, ChunkPolicy())
    server.bm25 = BM25Retriever()
    server.bm25.index(server.chunks)
    server.lock, server.failed, server.seen = threading.Lock(), set(), []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def dask_cluster():
    """One real Dask cluster on 127.0.0.1 for the session: two worker processes, no dashboard."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(host="127.0.0.1", dashboard_address=None, n_workers=2, threads_per_worker=1,
                                       processes=True)
    yield cluster
    cluster.close()
