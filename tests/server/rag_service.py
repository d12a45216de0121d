"""A small RAG-and-judge service on 127.0.0.1 that the test engine (http_engine.py) asks, one request per question.

``POST /answer`` with ``{"question_id", "question", "ground_truth"}`` answers ``{"answer", "sources", "score",
"reasoning"}`` from `respond(request)`. The service counts the questions it was asked, can be slow (``delay``), and
can crash mid-request (``crash``: the connection is closed without an answer), so the worker meets real network
failures and real slowness.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

from ragretrieval.testing.chat_server import LocalServer, send_json


def default_respond(request: dict) -> dict:
    """A deterministic answer: the score is 1-5 by the question's length, the reasoning says why."""
    score = len(request["question"]) % 5 + 1
    return {"answer": f"answer to: {request['question']}", "score": score,
            "reasoning": f"scored {score} because the question has {len(request['question'])} characters",
            "sources": [{"doc_id": "meat_dish/红烧肉.md", "title": "红烧肉", "content": "先炒糖色"}]}


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
                    service.asked[request["question_id"]] += 1
                if service.delay:
                    time.sleep(service.delay)
                if service.crash:  # like a process that died mid-request: no status line, connection closed
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                send_json(self, 200, service.respond(request))

        super().__init__(Handler, "/answer")

    def count(self) -> int:
        with self._lock:
            return sum(self.asked.values())
