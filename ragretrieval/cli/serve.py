"""``ragretrieval serve``: the web app (pages, JSON API, OpenAPI docs at /docs) with a worker inside
(docs/web.md)."""

from __future__ import annotations

import secrets
from pathlib import Path

import click

from ..server.settings import ServeSettings
from ..work.limits import MIB
from ..work.options import help_of
from .bounds import PORT
from .runs import runs_db_option
from .worker import worker_options, worker_settings

TOKEN_HELP = ("Require this token (bearer for the API, a login for pages); needed to bind other than loopback. "
              "`--token` alone makes a random one and prints it. Prefer $RAGRETRIEVAL_SERVE_TOKEN: a value on the "
              "command line is visible to other users of the machine.")


@click.command("serve")
@click.option("--host", default=ServeSettings.host, show_default=True, help=help_of(ServeSettings, "host"))
@click.option("--port", type=PORT, default=ServeSettings.port, show_default=True, help=help_of(ServeSettings, "port"))
@runs_db_option
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=ServeSettings.datasets, show_default=True, help=help_of(ServeSettings, "datasets"))
@click.option("--token", is_flag=False, flag_value="", default=None, help=TOKEN_HELP)
@click.option("--max-body-mb", type=click.FloatRange(min=0.1), default=ServeSettings.max_body_bytes / MIB,
              show_default=True, help="Largest request body accepted (imports are half of it).")
@click.option("--worker/--no-worker", "with_worker", default=ServeSettings.worker, show_default=True,
              help="Run evaluations inside the server (--no-worker: only `ragretrieval worker` processes do).")
@click.option("--allow-model", "allow_models", multiple=True, metavar="NAME",
              help="An embedding model web evaluations may name besides the registry's (m3e-small, e5-small-q4, ...): "
                   "a Hugging Face id, st:ID or a folder on this machine (repeatable).")
@worker_options
def serve_command(host, port, runs_db, datasets, token, max_body_mb, with_worker, allow_models, **worker) -> None:
    """Serve question sets, evaluations and their results on http://HOST:PORT."""
    import uvicorn

    from ..server import create_app
    from ..server.settings import check_bind, check_port

    if token is None:
        from ..work.environment import environment

        token = environment().serve_token
    if token == "":
        token = secrets.token_urlsafe(24)
        click.echo(f"token: {token}")
    settings = ServeSettings(runs_db=runs_db, datasets=datasets, host=host, port=port, token=token or None,
                             max_body_bytes=int(max_body_mb * MIB), worker=with_worker,
                             worker_settings=worker_settings(**worker), engine=worker["engine"],
                             api_key_env=worker["api_key_env"], allow_models=tuple(allow_models))
    check_bind(settings)
    check_port(settings)
    app = create_app(settings)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"ragretrieval serve: http://{shown}:{port}/ (runs history {app.state.db.url}, corpora under "
               f"{datasets.resolve()}, {'a worker inside' if with_worker else 'no worker inside'}); Ctrl-C stops")
    uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)
