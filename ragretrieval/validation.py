"""One wording for pydantic validation errors, so every file we read reports a bad field the same way."""

from __future__ import annotations

from pydantic import ValidationError


def describe(error: ValidationError, whole: str = "record") -> str:
    """``field 'relevant.0.doc_id': Field required`` for the first problem; `whole` names a top-level problem."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return f"field '{field}': {first['msg'].removeprefix('Value error, ')}"
