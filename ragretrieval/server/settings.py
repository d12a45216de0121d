"""`ServeSettings`: how ``ragretrieval serve`` runs (the CLI's options, one field each), and the bind rule: an
address other than loopback needs a token."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import RagretrievalError
from ..work.limits import check_bounds
from .jobs.worker import WorkerSettings

TOKEN_VARIABLE = "RAGRETRIEVAL_SERVE_TOKEN"


class ServeError(RagretrievalError):
    """Settings the server refuses to start with."""

    exit_code = 2


@dataclass(frozen=True)
class ServeSettings:
    runs_db: str | None = None  # None: $RAGRETRIEVAL_RUNS_URL, else ./.ragretrieval/runs.sqlite
    datasets: Path = Path(".")
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None  # required unless host is loopback
    max_body_bytes: int = 16 * 2**20
    worker: bool = True  # run a worker inside the server
    worker_settings: WorkerSettings = field(default_factory=WorkerSettings)
    engine: str | None = None  # module:function; None is the built-in engine
    api_key_env: str = "OPENAI_API_KEY"  # where models' API keys are read (generation, the engine's generator, judges)
    allow_models: tuple[str, ...] = ()  # models a client may name besides the registry's (`serve --allow-model`)

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
