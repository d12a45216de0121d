"""Fixtures for the answer tests: a real RAG service on 127.0.0.1 (BM25 over a corpus, an extractive answer, its
sources), speaking the request shapes agent-evaluation sets use."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragretrieval.answers.generators.base import GenerationRequest
from ragretrieval.answers.generators.extractive import ExtractiveGenerator
from ragretrieval.answers.report import ContextUsed
from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.dataset import Provenance, QuestionRecord
from ragretrieval.retrieval import BM25Retriever
from ragretrieval.testing.chat_server import send_json
from ragretrieval.testing.demo import DOCUMENTS


class _RagService(BaseHTTPRequestHandler):
    """POST /answer {"query", "history"}; /messages {"messages"}; /text "question"; /wrapped {"request": {...}};
    replies {"answer", "retrieved_context": [{"doc_uri", "content"}]}; /nested replies {"data": {"text", "sources":
    [{"id", "body"}]}}; /broken replies without an answer; /down answers 500."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _reply(self, status: int, payload) -> None:
        send_json(self, status, payload)

    def question(self, request) -> str:
        if self.path == "/wrapped":
            request = request["request"]
        if self.path == "/text":
            assert isinstance(request, str)
            return request
        if self.path == "/messages":
            return request["messages"][-1]["content"]
        return request["query"]

    def do_POST(self):
        server = self.server
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            server.seen.append((self.path, request, self.headers.get("Authorization")))
        if self.path == "/down":
            return self._reply(500, {"error": "down"})
        text = self.question(request)
        with server.lock:
            found = server.bm25.search_texts([text], 2)
        chunks = [server.chunks[i] for i in found.indices[0] if i >= 0]
        contexts = [ContextUsed(doc_id=c.parent_id, text=c.text) for c in chunks]
        question = QuestionRecord(id="q", text=text, ground_truth="-", provenance=Provenance(generator="service"))
        answer = server.generator.generate(GenerationRequest(question, contexts, "No answer found")).answer
        if self.path == "/broken":
            return self._reply(200, {"status": "ok"})
        if self.path == "/nested":
            return self._reply(200, {"data": {"text": answer, "sources": [{"id": c.parent_id, "body": c.text}
                                                                          for c in chunks]}})
        self._reply(200, {"answer": answer, "retrieved_context": [
            {"doc_uri": f"https://git.example.org/blob/main/{c.parent_id}", "content": c.text} for c in chunks]})


@pytest.fixture(scope="session")
def rag_service():
    """A RAG service over the conformance corpus; yields the server (`url`, and the requests it has `seen`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RagService)
    server.daemon_threads = True
    server.chunks = chunk_corpus(DOCUMENTS, ChunkPolicy(80, 10))
    server.bm25 = BM25Retriever()
    server.bm25.index(server.chunks)
    server.generator = ExtractiveGenerator(1)
    server.lock, server.seen = threading.Lock(), []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()
