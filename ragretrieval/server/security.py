"""Safe by default: one ASGI middleware in front of every route (docs/web.md, "Security").

- **Host check** on a loopback bind: only ``127.0.0.1``, ``localhost`` and ``[::1]`` are served, so a web page
  whose domain is made to resolve to 127.0.0.1 (DNS rebinding) cannot read the pages or their token.
- **Same-origin token** on every request that changes something (POST, PUT, PATCH, DELETE): the ``X-CSRF-Token``
  header must equal the ``rr_csrf`` cookie (double submit). Pages carry the value in ``<meta name="csrf-token">``;
  another site can neither read it nor send the header without a CORS preflight, which the server never allows. A
  request with a valid bearer token needs no CSRF token: a bearer token is never sent by a browser on its own.
- **Token** (``serve --token`` / ``$RAGRETRIEVAL_SERVE_TOKEN``, required off loopback): the API takes
  ``Authorization: Bearer <token>``; pages take the ``rr_session`` cookie the login form sets (an HMAC of the token,
  HttpOnly, SameSite=Strict). Only ``/login``, ``/static/``, the docs' assets and ``/api/v1/health`` are open.
- **Size limit** on request bodies (``--max-body-mb``): a larger ``Content-Length`` is refused before it is read, a
  chunked body when it passes the limit.
- **Headers**: a Content-Security-Policy that runs only the server's own scripts (no inline script at all), no
  framing, no MIME sniffing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from urllib.parse import quote, urlsplit

from starlette.requests import HTTPConnection

from ..work.limits import MIB
from .settings import ServeSettings, is_loopback

CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE = "rr_csrf", "x-csrf-token", "rr_session"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
OPEN_PATHS = ("/login", "/static/", "/docs-assets/", "/api/v1/health")
FORM_POSTS = ("/login", "/logout")  # plain HTML forms: they send the same-origin token as a form field
API_PATHS = ("/api/", "/openapi.json", "/docs")
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
DOCS_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")  # Swagger UI styles elements inline


def session_value(token: str) -> str:
    """What the session cookie holds: derived from the token, so the cookie never carries the token itself."""
    return hmac.new(token.encode("utf-8"), b"ragretrieval-session", hashlib.sha256).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def host_name(host_header: str | None) -> str:
    return (urlsplit(f"//{host_header}").hostname or "") if host_header else ""


class Guard:
    def __init__(self, app, settings: ServeSettings):
        self.app = app
        self.token = settings.token
        self.limit = settings.max_body_bytes
        self.hosts = LOOPBACK_NAMES | {settings.host} if is_loopback(settings.host) else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        conn = HTTPConnection(scope)
        path, method = scope["path"], scope["method"]
        bearer = conn.headers.get("authorization", "")
        by_bearer = bool(self.token) and bearer.startswith("Bearer ") and same(bearer[7:].strip(), self.token)
        refusal = self._refusal(conn, path, method, by_bearer)
        csrf = conn.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        scope.setdefault("state", {})["csrf"] = csrf
        headers = security_headers(path)
        if CSRF_COOKIE not in conn.cookies:
            headers.append((b"set-cookie", f"{CSRF_COOKIE}={csrf}; Path=/; HttpOnly; SameSite=Strict".encode()))
        if refusal is not None:
            return await refusal(send, headers)
        started = refused = False

        async def send_with_headers(message):
            nonlocal started
            if refused:  # the 413 went out already; what the app says after it is dropped
                return
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": list(message.get("headers", [])) + headers}
            await send(message)

        received = 0

        async def limited_receive():
            """Counts a body that comes without Content-Length; past the limit, answers 413 and tells the app the
            client is gone (FastAPI would turn an exception raised here into a 400)."""
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > self.limit:
                    if not started:
                        await too_large(self.limit)(send, headers)
                    refused = True
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, limited_receive, send_with_headers)

    def _refusal(self, conn: HTTPConnection, path: str, method: str, by_bearer: bool):
        if self.hosts is not None and host_name(conn.headers.get("host")) not in self.hosts:
            return reply(400, "this server answers only to 127.0.0.1, localhost and [::1] (Host header refused)")
        length = conn.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            return too_large(self.limit)
        if self.token and not by_bearer and not path.startswith(OPEN_PATHS) and \
                not same(conn.cookies.get(SESSION_COOKIE), session_value(self.token)):
            if path.startswith(API_PATHS):
                return reply(401, "authentication required: send 'Authorization: Bearer <token>'",
                             [(b"www-authenticate", b"Bearer")])
            target = path + (f"?{conn.url.query}" if conn.url.query else "")
            return redirect(f"/login?next={quote(target, safe='')}")
        if method not in SAFE_METHODS and not by_bearer and path not in FORM_POSTS:
            if not same(conn.cookies.get(CSRF_COOKIE), conn.headers.get(CSRF_HEADER)):
                return reply(403, "missing or wrong same-origin token: send the X-CSRF-Token header with the value of "
                                  "the rr_csrf cookie (pages do this themselves), or use a bearer token")
            origin = conn.headers.get("origin")
            if origin and urlsplit(origin).netloc != conn.headers.get("host"):
                return reply(403, f"cross-origin request from {origin} refused")
        return None


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    policy = DOCS_CSP if path == "/docs" else CSP
    return [(b"content-security-policy", policy.encode()), (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin")]


def reply(status: int, detail: str, extra: list | None = None):
    body = json.dumps({"detail": detail}).encode("utf-8")

    async def send_reply(send, headers):
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            *(extra or []), *headers]})
        await send({"type": "http.response.body", "body": body})
    return send_reply


def too_large(limit: int):
    return reply(413, f"request body larger than the server's limit of {limit // MIB} MiB (serve --max-body-mb)")


def redirect(location: str):
    async def send_redirect(send, headers):
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0"), *headers]})
        await send({"type": "http.response.body", "body": b""})
    return send_redirect
