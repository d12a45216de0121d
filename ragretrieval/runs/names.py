"""A run name means one run: the rule every save (and rename) of the runs history follows.

A name given to a new run moves to it. A run that had the name keeps its id, its tags and its report, and gets a
dated name: the name, ``@`` and the minute it was created (UTC, as ``runs list`` shows it), ``bm25@2026-11-28T01:02``;
if another run holds that too, its second (``bm25@2026-11-28T01:02:07``), then a counter (``...:07-2``). Nothing is
refused and no run is overwritten: running the same command twice keeps both runs, and the name names the newer one,
so ``runs show bm25`` and ``runs compare bm25 dense`` keep working. What moved is said in one note (`moved_note`).

Why dated, not numbered: ``bm25@2026-11-28T01:02`` says which of the runs it was without opening it, and it sorts.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from typing import Callable

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from .schema import runs

Note = Callable[[str], None]


class RunNameMoved(UserWarning):
    """A run name moved to a new run and the run that had it got a dated name (the Python callers' note)."""


def dated_name(name: str, created: datetime, taken: Callable[[str], bool]) -> str:
    """`name` with the minute `created` (its second, then a counter, when that is `taken` too)."""
    minute, second = f"{name}@{created:%Y-%m-%dT%H:%M}", f"{name}@{created:%Y-%m-%dT%H:%M:%S}"
    for candidate in (minute, second):
        if not taken(candidate):
            return candidate
    count = 2
    while taken(f"{second}-{count}"):
        count += 1
    return f"{second}-{count}"


def free_name(conn: Connection, name: str | None, keep: str | None = None) -> list[tuple[str, str]]:
    """Give every run called `name` (but run `keep`) its dated name, in `conn`'s transaction; the (id, new name)
    of each, oldest first."""
    if not name:
        return []
    holders = conn.execute(select(runs.c.id, runs.c.created_at).where(runs.c.name == name, runs.c.id != keep)
                           .order_by(runs.c.id)).all()

    def taken(candidate: str) -> bool:
        return conn.execute(select(runs.c.id).where(runs.c.name == candidate)).first() is not None

    moved = []
    for run_id, created in holders:
        dated = dated_name(name, datetime.fromisoformat(created), taken)
        conn.execute(update(runs).where(runs.c.id == run_id).values(name=dated))
        moved.append((run_id, dated))
    return moved


def moved_note(name: str, run_id: str, moved: list[tuple[str, str]]) -> str:
    """One line: where the name went, and what the runs that had it are called now."""
    earlier = "; ".join(f"{old} keeps its id and is now named {dated!r}" for old, dated in moved)
    return f"the name {name!r} now names run {run_id}; the earlier run {earlier}"


def tell(note: str, on_note: Note | None) -> None:
    """Hand the note to `on_note` (the command line prints it), or warn the Python caller (`RunNameMoved`)."""
    if on_note is not None:
        on_note(note)
    else:
        warnings.warn(note, RunNameMoved, stacklevel=3)
