"""``ragretrieval worker``: runs evaluations stored in the runs history, beside ``serve`` or on other machines
(docs/web.md, "Workers")."""

from __future__ import annotations

import signal
from pathlib import Path

import click

from ..server.settings import ServeSettings, WorkerSettings
from ..work.options import help_of
from .aliases import renamed_option
from .runs import runs_db_option

_OPTIONS = [
    renamed_option("--concurrency", "--threads", "threads", type=click.IntRange(min=1),
                   default=WorkerSettings.threads, show_default=True, help=help_of(WorkerSettings, "threads")),
    click.option("--heartbeat", type=click.FloatRange(min=0.05), default=WorkerSettings.heartbeat_interval,
                 show_default=True, help=help_of(WorkerSettings, "heartbeat_interval")),
    click.option("--stale-after", type=click.FloatRange(min=0.1), default=WorkerSettings.stale_after,
                 show_default=True, help=help_of(WorkerSettings, "stale_after")),
    click.option("--poll", type=click.FloatRange(min=0.05), default=WorkerSettings.poll_interval,
                 show_default=True, help=help_of(WorkerSettings, "poll_interval")),
    click.option("--engine", default=None, metavar="MODULE:FUNCTION",  # else the variable, read by load_engine
                 help="The engine that answers and judges questions [default: the built-in one].  [env var: "
                      "RAGRETRIEVAL_SERVE_ENGINE]"),
    click.option("--api-key-env", default=ServeSettings.api_key_env, show_default=True,
                 help="Environment variable with the API key for models (openai: generators, judges, question "
                      "generation)."),
]


def worker_options(command):
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def worker_settings(threads, heartbeat, stale_after, poll, engine=None, api_key_env=None):
    if stale_after <= heartbeat:
        raise click.BadParameter(f"must be longer than --heartbeat ({heartbeat} s), or live questions are taken over",
                                 param_hint="--stale-after")
    return WorkerSettings(threads=threads, poll_interval=poll, heartbeat_interval=heartbeat, stale_after=stale_after)


@click.command("worker")
@runs_db_option
@click.option("--datasets", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=ServeSettings.datasets, show_default=True,
              help="Folder whose dataset folders are the corpora, as for `serve`.")
@worker_options
def worker_command(runs_db, datasets, **options) -> None:
    """Answer the questions of pending and running evaluations until stopped (Ctrl-C or SIGTERM: the questions in
    hand are finished, the rest given back)."""
    import logging

    from ..server.corpora import find_corpus
    from ..server.db import Database
    from ..server.jobs.engine import load_engine
    from ..server.jobs.worker import Worker
    from ..server.store import Invalid

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    settings = worker_settings(**options)
    engine = load_engine(options["engine"], options["api_key_env"])
    db = Database(runs_db)

    def locate(name: str):
        try:
            return str(find_corpus(datasets, name).path)
        except Invalid:
            return None

    worker = Worker(db, engine, settings, locate)
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: worker.stop_token.request("stopping on a signal"))
    click.echo(f"worker {worker.id} on {db.url} ({settings.threads} threads); Ctrl-C stops after the questions in "
               "hand")
    try:
        worker.run_forever()
    finally:
        db.close()
