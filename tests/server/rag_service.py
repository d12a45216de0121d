"""A team's RAG service on 127.0.0.1, as the built-in engine's ``http:<url>`` generator asks it (answers/generators/
http_service.py): ``POST`` with ``{"query", "history"}``, answered with ``{"answer", "retrieved_context": [{"doc_uri",
"content"}]}`` from `respond(request)`.

The service counts the questions it was asked (by their text), can be slow (``delay``), can answer HTTP 500 to some
questions (a `respond` that returns None) or any other status (a `respond` that returns it), and can crash mid-request (``crash``: the connection is closed without an
answer), so the worker meets real network failures and real slowness.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

from ragretrieval.testing.chat_server import LocalServer, send_json

SOURCE = "aquatic/清蒸鲈鱼.md"  # a demo corpus document: the engine resolves the service's URI to it
SOURCE_TEXT = "蒸锅水烧到大开后放入鱼盘，大火蒸 8 分钟。"


def default_respond(request: dict) -> dict:
    """An answer that cites its one source."""
    return {"answer": f"answer to: {request['query']} [0]",
            "retrieved_context": [{"doc_uri": f"https://git.example.org/blob/main/{SOURCE}", "content": SOURCE_TEXT}]}


class RagService(LocalServer):
    def __init__(self, respond=default_respond, delay: float = 0.0):
        self.respond, self.delay, self.crash = respond, delay, False
        self.asked: Counter = Counter()
        self._lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with service._lock:
                    service.asked[request["query"]] += 1
                if service.delay:
                    time.sleep(service.delay)
                if service.crash:  # like a process that died mid-request: no status line, connection closed
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                answer = service.respond(request)
                if answer is None or isinstance(answer, int):
                    return send_json(self, answer or 500, {"error": "the model refused"})
                send_json(self, 200, answer)

        super().__init__(Handler, "/answer")

    def count(self) -> int:
        with self._lock:
            return sum(self.asked.values())
