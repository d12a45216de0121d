"""The web app's database: the runs history's own (`RunHistory` opens it and brings its schema up to date), so a CLI
run and a web evaluation live side by side, on SQLite by default and PostgreSQL by URL.

Writes go through `write()`: on SQLite the transaction takes the write lock at once (``BEGIN IMMEDIATE``, set up by
the runs history), so writers queue instead of failing halfway; on PostgreSQL row locks (``FOR UPDATE``, with ``SKIP
LOCKED`` where workers claim questions) keep concurrent writers apart.
"""

from __future__ import annotations

import secrets
import time
from contextlib import contextmanager
from datetime import datetime, timezone

from sqlalchemy import text
from sqlalchemy.engine import Connection

from ..runs.history import RunHistory


def utc_now() -> str:
    """Now as the text the tables store (ISO 8601, UTC, microseconds: sorts as text on every back end)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def new_id(prefix: str) -> str:
    """``qs_``, ``q_``, ``eval_``, ``res_`` + 16 hex digits, as the evaluation design spells its ids."""
    return f"{prefix}_{secrets.token_hex(8)}"


class Database:
    def __init__(self, url: str | None = None):
        self.history = RunHistory(url)  # creates or upgrades the store (runs/migrations.py)
        self.engine = self.history.engine
        self.url = self.history.display_url
        self.is_postgres = self.engine.dialect.name == "postgresql"

    @contextmanager
    def read(self):
        """One reading transaction that sees one snapshot of the database: on SQLite its ``BEGIN`` does (WAL), on
        PostgreSQL REPEATABLE READ (under the default READ COMMITTED, an evaluation's row and its results read one
        after the other could come from two moments, and the page would show a count beside another count's
        figures)."""
        conn = self.engine.connect()
        if self.is_postgres:
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn:
            yield conn

    @contextmanager
    def write(self):
        """One writing transaction, committed at the end and rolled back on an error."""
        with self.engine.connect().execution_options(rr_write=True) as conn, conn.begin():
            yield conn

    def clock(self, conn: Connection) -> float:
        """Seconds on the database's clock: heartbeats of workers on several machines are compared on one clock."""
        if self.is_postgres:
            return float(conn.execute(text("SELECT EXTRACT(EPOCH FROM clock_timestamp())")).scalar())
        return time.time()  # SQLite: one machine, one clock

    def close(self) -> None:
        self.history.close()
