"""The runs store's schema versions and how an older store is upgraded in place.

`prepare` runs when a store is opened: in one transaction that no other process can enter at the same time (SQLite:
``BEGIN IMMEDIATE``; PostgreSQL: a transaction-level advisory lock), it creates a new store at the current version,
or applies each step from the store's version up to `SCHEMA_VERSION`, or refuses a store written by a newer
ragretrieval. So six evaluations started at once on a store that does not exist yet all succeed, and a store made by
ragretrieval 0.1 opens (and is upgraded) without losing a run.

To change the schema: change the tables in schema.py, raise `SCHEMA_VERSION`, and add the step that brings a store of
the version before up to it (new tables need no step: they are created after the steps run).
"""

from __future__ import annotations

import json
from typing import Callable

from sqlalchemy import insert, inspect, select, text, update
from sqlalchemy.engine import Connection

from .schema import SCHEMA_VERSION, meta, metadata

ADVISORY_LOCK = 0x72725F6D6967  # "rr_mig": serialises schema work on PostgreSQL


def _v2_kind_and_labels(conn: Connection) -> None:
    """Schema 2: answer runs beside retrieval runs (``kind``), and the labels fingerprint of each run."""
    columns = {c["name"] for c in inspect(conn).get_columns("rr_runs")}
    if "labels_fingerprint" not in columns:
        conn.execute(text("ALTER TABLE rr_runs ADD COLUMN labels_fingerprint VARCHAR(128)"))
    if "kind" not in columns:
        conn.execute(text("ALTER TABLE rr_runs ADD COLUMN kind VARCHAR(20) NOT NULL DEFAULT 'retrieval'"))


def _v3_web_app(conn: Connection) -> None:
    """Schema 3: the web app's question sets, evaluations and results. New tables only: `prepare` creates them after
    the steps; the step exists so that the version says what a store holds."""


def _v4_answered(conn: Connection) -> None:
    """Schema 4: how many questions of an answer run got an answer (``runs list`` shows "10 of 30 answered"), read
    from each stored answer run's report."""
    if "n_answered" not in {c["name"] for c in inspect(conn).get_columns("rr_runs")}:
        conn.execute(text("ALTER TABLE rr_runs ADD COLUMN n_answered INTEGER"))
    stored = conn.execute(text("SELECT r.id, p.report FROM rr_runs r JOIN rr_run_reports p ON p.run_id = r.id "
                               "WHERE r.kind = 'answer' AND r.n_answered IS NULL")).all()
    for run_id, report in stored:
        answered = sum(1 for q in json.loads(report).get("questions", []) if q.get("error") is None)
        conn.execute(text("UPDATE rr_runs SET n_answered = :n WHERE id = :id"), {"n": answered, "id": run_id})


def _v5_kinds_and_annotations(conn: Connection) -> None:
    """Schema 5: an evaluation's ``kind`` (answer, or retrieval), every existing one an answer evaluation; the
    reviewers' annotations are a new table. (A store of schema 2 has no evaluations yet: `prepare` creates the table
    with the column.)"""
    found = inspect(conn)
    if found.has_table("rr_evaluations") and "kind" not in {c["name"] for c in found.get_columns("rr_evaluations")}:
        conn.execute(text("ALTER TABLE rr_evaluations ADD COLUMN kind VARCHAR(20) NOT NULL DEFAULT 'answer'"))


def _v6_reviewers(conn: Connection) -> None:
    """Schema 6: who gave each verdict (``rr_annotations.reviewer``, "" for the verdicts given before) and each
    reviewer's own verdicts (a new table)."""
    found = inspect(conn)
    if found.has_table("rr_annotations") and "reviewer" not in {
            c["name"] for c in found.get_columns("rr_annotations")}:
        conn.execute(text("ALTER TABLE rr_annotations ADD COLUMN reviewer VARCHAR(100) NOT NULL DEFAULT ''"))


STEPS: dict[int, Callable[[Connection], None]] = {2: _v2_kind_and_labels, 3: _v3_web_app, 4: _v4_answered,
                                                  5: _v5_kinds_and_annotations, 6: _v6_reviewers}


class SchemaError(Exception):
    """A store this version of ragretrieval cannot read."""


def _lock(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK})


def stored_version(conn: Connection) -> int | None:
    """The schema version a store says it is at (None: no store, or one that says nothing)."""
    if not inspect(conn).has_table(meta.name):
        return None
    found = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    return int(found) if found is not None else None


def prepare(conn: Connection) -> tuple[int, int]:
    """Bring the store behind `conn` (inside an exclusive transaction) to `SCHEMA_VERSION`; (found, now)."""
    _lock(conn)
    if not inspect(conn).has_table(meta.name):
        metadata.create_all(conn)
        conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        return SCHEMA_VERSION, SCHEMA_VERSION
    found = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    version = int(found) if found is not None else SCHEMA_VERSION
    if version > SCHEMA_VERSION:
        raise SchemaError(f"schema version {version} was written by a newer ragretrieval (this one reads up to "
                          f"{SCHEMA_VERSION}); upgrade ragretrieval")
    for step in range(version + 1, SCHEMA_VERSION + 1):
        STEPS[step](conn)
    metadata.create_all(conn)  # tables added since `version`
    if found is None:
        conn.execute(insert(meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
    elif version != SCHEMA_VERSION:
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
    return version, SCHEMA_VERSION
