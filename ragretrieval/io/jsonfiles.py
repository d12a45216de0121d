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
        return model.model_validate_json(path.read_text(encoding="utf-8"), context=context)
    except OSError as problem:
        raise cannot_read(path, problem, error) from None
    except UnicodeDecodeError:
        raise error(f"{path}: {kind}: not UTF-8 text") from None
    except ValidationError as problem:
        raise error(f"{path}: {kind}: {describe(problem, whole)}") from None
