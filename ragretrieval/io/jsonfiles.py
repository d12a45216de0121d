"""One wording for the problems of the JSON files we read and write: bad fields, unsupported versions, unreadable
files; and one way to write them (atomically)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import cannot_read
from .atomic import write_text_atomic
from .redact import redact_urls

Model = TypeVar("Model", bound=BaseModel)


def describe(error: ValidationError, whole: str = "record") -> str:
    """``field 'relevant.0.doc_id': Field required`` for the first problem; `whole` names a top-level problem."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return f"field '{field}': {first['msg'].removeprefix('Value error, ')}"


def json_damage(text: str) -> str | None:
    """Why `text` is not one JSON document, in a reader's words (empty, truncated, or not JSON at all), or None when
    it is one. A file cut off mid-write ends where the parser still expected more: that is "truncated"."""
    if not text.strip():
        return "empty (no JSON in it)"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        cut = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
        if cut:
            return (f"truncated: its JSON stops before it is complete (line {error.lineno}, column {error.colno}: "
                    "the file was cut off)")
        return f"not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    return None


def supported_version(field: str, version: int, supported: int) -> int:
    """The check behind every file format's version field."""
    if version != supported:
        raise ValueError(f"{field} {version} is not supported (this ragretrieval reads {supported})")
    return version


def save_json(model: BaseModel, path) -> None:
    """Write `model` as indented UTF-8 JSON, atomically, with every URL in it written without credentials
    (io/redact.py: a report records the URLs it was given, never their tokens)."""
    write_text_atomic(path, redact_urls(json.dumps(model.model_dump(), ensure_ascii=False, indent=1)) + "\n")


def load_json(model: type[Model], path, error: type[Exception], kind: str, whole: str,
              context: dict | None = None) -> Model:
    """Read a file written by `save_json`; any problem raises `error` naming the file (and the field):
    ``path: <kind>: field 'x': ...``, ``path: <kind>: not UTF-8 text``, ``path: cannot read (...)``. `context` is
    the models' validation context (a stored report's configuration is kept as recorded)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        return model.model_validate_json(text, context=context)
    except OSError as problem:
        raise cannot_read(path, problem, error) from None
    except UnicodeDecodeError:
        raise error(f"{path}: {kind}: not UTF-8 text") from None
    except ValidationError as problem:
        damage = json_damage(text) if problem.errors()[0]["type"] == "json_invalid" else None
        if damage:  # `kind` says what the file is not ("not an eval report (...)"): here, what was expected
            raise error(f"{path}: {damage}; expected {kind.removeprefix('not ')}") from None
        raise error(f"{path}: {kind}: {describe(problem, whole)}") from None
