"""Trace files as their exporters write them: JSON Lines (one document per line), one JSON document over several
lines (``to_json(pretty=True)``), or a folder of such files (``*.json``, ``*.jsonl``, in name order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ....io.jsonlines import BOM, JsonLinesError, numbered_lines
from ...dataset import DatasetError

SUFFIXES = (".json", ".jsonl")


def json_documents(path) -> Iterator[tuple[str, object]]:
    """(where, document) for each JSON document: ``file:line`` for a line of JSON Lines, ``file`` for a whole-file
    document. A line that is not JSON is an error naming it, unless the file is one JSON document."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise DatasetError(f"{path}: no .json or .jsonl files in the folder")
        for file in files:
            yield from json_documents(file)
        return
    first = True
    try:
        for number, line in numbered_lines(path):  # io/jsonlines.py: the one BOM rule
            try:
                document = json.loads(line)
            except json.JSONDecodeError as error:
                whole = _whole_document(path) if first else None
                if whole is not None:
                    yield str(path), whole
                    return
                raise DatasetError(f"{path}:{number}: invalid JSON: {error.msg} (column {error.colno})") from None
            first = False
            yield f"{path}:{number}", document
    except JsonLinesError as error:
        raise DatasetError(str(error)) from None


def _whole_document(path: Path):
    try:
        return json.loads(path.read_bytes().removeprefix(BOM))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def decoded(value):
    """An attribute value as written by a tracer that JSON-encodes them (MLflow): the decoded value, else as is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
