"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol, for the `openai` client to talk to.

Answers come from a `responder(request) -> Reply` the test supplies (fixtures keyed by the request). The server counts
every request it receives, keeps the Authorization headers it saw, and can be told to fail hard (HTTP 500) after a
number of requests, like an endpoint that goes down mid-run.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

DOCUMENT = re.compile(r"<<<\n(.*)\n>>>", re.S)


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    raw: bytes | None = None  # sent as the body of a 200 instead of a completion (HTML, broken JSON, ...)
    content_type: str = "application/json"


def document_in(request: dict) -> str:
    """The text between <<< and >>> in the first user message (the default prompts frame documents that way)."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    match = DOCUMENT.search(first)
    assert match, "request without a <<< >>> framed text"
    return match.group(1)


class LocalServer:
    """An HTTP server on a free port of 127.0.0.1, serving from a thread while the `with` block lasts; `url` is its
    address with `path` (tests/server's RAG service is one too)."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class ChatServer(LocalServer):
    def __init__(self, responder: Callable[[dict], Reply]):
        self.responder = responder
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self.fail_after: int | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("Authorization", ""))
                    number = len(server.requests)
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if server.fail_after is not None and number > server.fail_after:
                    return self._send(500, {"error": {"message": "server down"}})
                reply = server.responder(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    return self._send(reply.status, {"error": {"message": f"status {reply.status}"}}, reply.headers)
                if reply.raw is not None:
                    return self._send_bytes(200, reply.raw, reply.content_type, reply.headers)
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 2
                self._send(200, {
                    "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.content}}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(reply.content),
                              "total_tokens": prompt_tokens + len(reply.content)},
                }, reply.headers)

            def _send(self, status, payload, headers=None):
                self._send_bytes(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json",
                                 headers)

            def _send_bytes(self, status, data, content_type, headers=None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and went away
                    pass

        super().__init__(Handler, "/v1")

    def count(self, predicate=lambda request: True) -> int:
        with self._lock:
            return sum(1 for r in self.requests if predicate(r))
