"""How the runs history talks to a SQLite file: WAL mode, writers that queue instead of failing halfway, and a
read-only way in for a store whose file or folder cannot be written (a shared volume mounted read-only, a colleague's
folder): it can still be listed, shown, compared and exported.

Why a read-only store is opened as ``mode=ro`` first and ``immutable=1`` only if that fails: a WAL-mode database
needs its ``-shm`` file to be read consistently; where the folder cannot be written and no ``-shm`` file exists,
SQLite can only read the file as immutable, which is right when nothing writes it (a read-only mount) and the only
way in otherwise.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine


def sqlite_pragmas(connection, _record) -> None:
    connection.isolation_level = None  # transactions are begun by `sqlite_begin`, DDL included (pysqlite would not)
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def sqlite_begin(conn) -> None:
    """A writing transaction takes the write lock at once (so two writers queue instead of one failing halfway);
    a reading one does not, so readers never wait for a writer (WAL)."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("rr_write") else "BEGIN")


def cannot_write(database: str) -> bool:
    """The store's file exists, and it or its folder cannot be written by this process (permissions, or a
    read-only file system: the check asks the kernel, so it holds for root too)."""
    path = Path(database)
    return path.is_file() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def _open_read_only(database: str):
    quoted = urllib.parse.quote(str(Path(database).resolve()))
    try:
        connection = sqlite3.connect(f"file:{quoted}?mode=ro", uri=True, check_same_thread=False)
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError:  # no -shm file, and none can be made beside it
        return sqlite3.connect(f"file:{quoted}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def read_only_engine(database: str) -> Engine:
    """An engine that reads `database` and cannot change it."""
    engine = create_engine("sqlite://", creator=lambda: _open_read_only(database))

    def pragmas(connection, _record) -> None:
        connection.isolation_level = None
        connection.execute("PRAGMA busy_timeout=30000")

    event.listen(engine, "connect", pragmas)
    event.listen(engine, "begin", sqlite_begin)
    return engine
