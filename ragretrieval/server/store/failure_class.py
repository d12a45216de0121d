"""A result's failure class (answers/failures.py) read inside the database from its stored ``answer_record``, on
SQLite and PostgreSQL alike, so a filter or a page of cards reads one field, not the kilobytes of the record."""

from __future__ import annotations

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import String


class failure_class_of(FunctionElement):  # noqa: N801 (an SQL function's name)
    type = String()
    inherit_cache = True


@compiles(failure_class_of)
def _sqlite(element, compiler, **kw):
    return f"json_extract({compiler.process(element.clauses, **kw)}, '$.failure_class')"


@compiles(failure_class_of, "postgresql")
def _postgresql(element, compiler, **kw):
    return f"(CAST({compiler.process(element.clauses, **kw)} AS JSONB) ->> 'failure_class')"
