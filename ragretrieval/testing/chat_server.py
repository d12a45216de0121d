"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol (``/chat/completions``, and
``/completions`` for text completion), for the `openai` client to talk to: the test suite, the benchmarks and the web
app's browser tests start it instead of reaching a real model.

Answers come from a `responder(request) -> Reply` the caller supplies (fixtures keyed by the request). The server
counts every request it receives, keeps the Authorization headers it saw, and can be told to fail hard (HTTP 500)
after a number of requests, like an endpoint that goes down mid-run. Usage is reported as the API does (prompt tokens
= characters of the prompt / 2, completion tokens = characters of the answer).

In a process of its own (so that a benchmark measures only its client's CPU time)::

    python -m ragretrieval.testing.chat_server --reply "An answer [0]."   # prints its URL, serves until killed

Other routes (an embeddings or a rerank API) are served by `routes`: path suffix -> responder whose `Reply.payload`
is sent as JSON.

Requests for the model ``--judge-model`` (default ``judge``) get ``--judge-reply`` instead, a verdict every built-in
judge accepts, so one server plays generator and judge.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

DOCUMENT = re.compile(r"<<<\n(.*)\n>>>", re.S)
TEST_API_KEY = "sk-test-NEVER-WRITE-ME-7f3a9c"  # what tests put in OPENAI_API_KEY, to check it is written nowhere
# a verdict every built-in judge accepts: the yes/no judges read rating and rationale, score5 score and reasoning
JUDGE_REPLY = '{"rating": "yes", "rationale": "Supported.", "score": 4, "reasoning": "Right, one detail missing."}'
JUDGE_NO = '{"rating": "no", "rationale": "Not supported.", "score": 2, "reasoning": "Mostly wrong."}'


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict = field(default_factory=dict)
    raw: bytes | None = None  # sent as the body of a 200 instead of a completion (HTML, broken JSON, ...)
    content_type: str = "application/json"
    payload: object = None  # the JSON answer of a route other than completions
    message: str | None = None  # the error message of a reply whose status is not 200


class FlippingJudge:
    """A judge that flips a share `rate` of its verdicts at random places: the stub behind the judge-noise tests. Of
    every `deck` verdicts it gives (in the order requests arrive), exactly round(rate x deck) are flipped, at places a
    seeded shuffle picks, so 500 verdicts at rate 0.2 hold exactly 100 flips. Its usual verdict on a request is
    `verdict(request)` (yes by default); requests for other models go to `others`."""

    def __init__(self, rate: float, seed: int = 0, verdict: Callable[[dict], bool] | None = None,
                 others: Callable[[dict], Reply] | None = None, model: str = "judge", deck: int = 100):
        self.rate, self.seed, self.verdict, self.others = rate, seed, verdict, others
        self.model, self.deck = model, deck
        self.given = self.flipped = 0
        self._cards: list[bool] = []
        self._lock = threading.Lock()

    def _flip(self) -> bool:
        with self._lock:
            if self.given % self.deck == 0:
                flips = round(self.rate * self.deck)
                self._cards = [True] * flips + [False] * (self.deck - flips)
                random.Random(f"{self.seed}:{self.given // self.deck}").shuffle(self._cards)
            flip = self._cards[self.given % self.deck]
            self.given += 1
            self.flipped += flip
            return flip

    def __call__(self, request: dict) -> Reply:
        if request.get("model") != self.model and self.others is not None:
            return self.others(request)
        usual = self.verdict(request) if self.verdict else True
        return Reply(JUDGE_REPLY if usual != self._flip() else JUDGE_NO)


def document_in(request: dict) -> str:
    """The text between <<< and >>> in the first user message (the default prompts frame documents that way)."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    match = DOCUMENT.search(first)
    assert match, "request without a <<< >>> framed text"
    return match.group(1)


def send_bytes(handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str,
               headers: dict | None = None) -> None:
    """One HTTP answer with a Content-Length (so connections stay alive); a client that went away is ignored."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):  # the client timed out and went away
        pass


def send_json(handler: BaseHTTPRequestHandler, status: int, payload, headers: dict | None = None) -> None:
    """`payload` as a UTF-8 JSON answer: what every test server here replies with."""
    send_bytes(handler, status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), "application/json", headers)


class LocalServer:
    """An HTTP server on 127.0.0.1 (a free port unless given), serving from a thread while the `with` block lasts;
    `url` is its address with `path`. The chat server is one; so are the tests' RAG services."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], path: str, port: int = 0):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class ChatServer(LocalServer):
    def __init__(self, responder: Callable[[dict], Reply] | None = None,
                 routes: dict[str, Callable[[dict], Reply]] | None = None, port: int = 0):
        self.responder = responder
        self.routes = dict(routes or {})
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self.fail_after: int | None = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do: clients reuse their connections
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.authorizations.append(self.headers.get("Authorization", ""))
                    number = len(server.requests)
                route = next((r for r in server.routes if self.path.endswith(r)), None)
                chat = self.path.endswith("/chat/completions")
                completion = server.responder is not None and (chat or self.path.endswith("/completions"))
                if route is None and not completion:
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if server.fail_after is not None and number > server.fail_after:
                    return self._send(500, {"error": {"message": "server down"}})
                reply = server.routes[route](body) if route else server.responder(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    message = reply.message or f"status {reply.status}"
                    return self._send(reply.status, {"error": {"message": message}}, reply.headers)
                if reply.raw is not None:
                    return self._send_bytes(200, reply.raw, reply.content_type, reply.headers)
                if route:
                    return self._send(200, reply.payload, reply.headers)
                prompt = "".join(m["content"] for m in body["messages"]) if chat else body.get("prompt", "")
                prompt_tokens = len(prompt) // 2
                choice = ({"message": {"role": "assistant", "content": reply.content}} if chat else
                          {"text": reply.content})
                self._send(200, {
                    "id": f"chatcmpl-{number}", "object": "chat.completion" if chat else "text_completion",
                    "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop", **choice}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(reply.content),
                              "total_tokens": prompt_tokens + len(reply.content)},
                }, reply.headers)

            def _send(self, status, payload, headers=None):
                send_json(self, status, payload, headers)

            def _send_bytes(self, status, data, content_type, headers=None):
                send_bytes(self, status, data, content_type, headers)

        super().__init__(Handler, "/v1", port)

    def count(self, predicate=lambda request: True) -> int:
        with self._lock:
            return sum(1 for r in self.requests if predicate(r))


def main(argv=None) -> None:
    """Serve one fixed reply to every request until killed (another to the judge's model); print the base URL."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply", default="An answer [0].", help="the content of every answer")
    parser.add_argument("--judge-model", default="judge", help="requests for this model get --judge-reply")
    parser.add_argument("--judge-reply", default=JUDGE_REPLY, help="the content of every judge's answer")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 [default: a free one]")
    parser.add_argument("--judge-flip", type=float, default=0.0,
                        help="flip this share of the judge's verdicts at random (yes <-> no, 4 <-> 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --judge-flip")
    args = parser.parse_args(argv)
    respond = (lambda request: Reply(args.judge_reply if request.get("model") == args.judge_model
                                     else args.reply))
    if args.judge_flip:
        respond = FlippingJudge(args.judge_flip, args.seed, others=respond, model=args.judge_model)
    server = ChatServer(respond, port=args.port)
    print(server.url, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
