"""`ServeSettings`: how ``ragretrieval serve`` runs (the CLI's options, one field each), with `WorkerSettings` (the
worker's, shared with ``ragretrieval worker``), and the bind rule: an address other than loopback needs a token.
Light on purpose (no FastAPI, no SQLAlchemy): the command line reads its defaults when it declares its options."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from ..errors import RagretrievalError
from ..work.limits import MIB, check_bounds
from ..work.options import described
from ..work.pool import WORKER_THREADS

TOKEN_VARIABLE = "RAGRETRIEVAL_SERVE_TOKEN"


class ServeError(RagretrievalError):
    """Settings the server refuses to start with."""

    exit_code = 2


@dataclass(frozen=True)
class WorkerSettings:
    """A worker's threads and timing: the defaults of ``serve``'s and ``worker``'s options, declared here once
    (docs/web.md's table of them is generated from these fields)."""

    threads: int = described("Questions answered at once", default=WORKER_THREADS)
    poll_interval: float = described("Seconds between looks for work when there is none", default=1.0)
    heartbeat_interval: float = described("Seconds between heartbeats of the questions in hand", default=5.0)
    stale_after: float = described("Seconds after which a question whose heartbeat is older is taken over (its "
                                   "worker is gone); longer than the heartbeat", default=30.0)
    keep_runners: int = described("Prepared evaluations kept per worker", default=4)
    stop_grace: float = described("Seconds the questions in hand get to finish when the worker stops", default=10.0)


@dataclass(frozen=True)
class ServeSettings:
    """How ``ragretrieval serve`` runs: the defaults of its options, declared here once (docs/web.md's table of them
    is generated from these fields)."""

    runs_db: str | None = described("The runs history's database: a SQLite file or a PostgreSQL URL, as for `eval`; "
                                    "none: `$RAGRETRIEVAL_RUNS_URL`, else `./.ragretrieval/runs.sqlite`",
                                    default=None)
    datasets: Path = described("The folder whose dataset folders are the corpora (named by their path in it)",
                               default=Path("."))
    host: str = described("Address to bind; anything but loopback needs a token", default="127.0.0.1")
    port: int = described("Port to bind (1 to 65535)", default=8000)
    token: str | None = described("Required unless `host` is loopback (16 characters at least): the API's bearer "
                                  "token and the pages' login", default=None)
    max_body_bytes: int = described("Largest request body, in bytes; a file imported in the browser may be half of "
                                    "it", default=16 * MIB)
    worker: bool = described("Run evaluations inside the server; off: only `ragretrieval worker` processes run them",
                             default=True)
    worker_settings: WorkerSettings = described("The worker's threads and timing", default_factory=WorkerSettings)
    engine: str | None = described("The engine that answers and judges questions, `module:function`; none: "
                                   "`$RAGRETRIEVAL_SERVE_ENGINE`, else the built-in one", default=None)
    api_key_env: str = described("The environment variable holding the API key for models: `openai:` generators, "
                                 "the engine's generator, judges, question generation", default="OPENAI_API_KEY")
    allow_models: tuple[str, ...] = described(
        "Embedding models an evaluation may name in `options.model` besides the registry's fixed names "
        "(`m3e-small`, `e5-small-q4`, `hashing`, their `@int8` variants, installed plug-ins' names): a Hugging "
        "Face id, `st:ID`, `openai:MODEL` or a folder on this machine", default=())

    def __post_init__(self) -> None:
        check_bounds(self)  # port 1 to 65535 (work/limits.py)


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: ServeSettings) -> None:
    if not is_loopback(settings.host) and not settings.token:
        raise ServeError(f"binding to {settings.host} lets other machines in: give a token with --token or "
                         f"${TOKEN_VARIABLE} (the API then needs 'Authorization: Bearer <token>', pages a login)")
    if settings.token is not None and len(settings.token) < 16:
        raise ServeError("the token must be at least 16 characters (leave the value out, `--token`, to have one made)")


def check_port(settings: ServeSettings) -> None:
    """Bind the address as the server will (SO_REUSEADDR, as uvicorn does) and let it go: a port in use or an
    address this machine does not have is refused here in one line, before the server starts."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((settings.host.strip("[]"), settings.port))
        except OSError as error:
            raise ServeError(f"cannot listen on {settings.host} port {settings.port}: {error.strerror or error}; "
                             "choose another --port (or stop what holds it)") from None
