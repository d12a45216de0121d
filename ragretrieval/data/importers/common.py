"""What every dataset importer returns, and how it reports bad records: one line each (file, record, field,
problem), counted; with ``strict`` the first one stops the import."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...errors import cannot_read
from ...io.jsonlines import JsonLinesError
from ...io.jsonlines import numbered_lines as read_lines
from ..corpus import Document
from ..dataset import DatasetError, QuestionRecord

ExpectCheck = Callable[[dict, str], None]  # validates a question's ``expect``, raising with `where` in the message


class BadRecord(DatasetError):
    """A record an importer cannot use (raised at once with ``strict``)."""


@dataclass
class Imported:
    documents: list[Document]
    questions: list[QuestionRecord]
    problems: list[str] = field(default_factory=list)  # one line per bad record, skipped
    warnings: list[str] = field(default_factory=list)  # kept records with something worth saying (unlocated text)
    builder: dict = field(default_factory=dict)  # the manifest's record of how the dataset was made


class Problems:
    def __init__(self, strict: bool):
        self.strict, self.lines = strict, []

    def add(self, line: str) -> None:
        if self.strict:
            raise BadRecord(f"{line} (--strict stops at the first bad record)")
        self.lines.append(line)


def title_of(text: str, fallback: str) -> str:
    """The first non-empty line without Markdown heading marks, at most 100 characters."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:100]
    return fallback


def read_json_file(path: Path, hint_for_extra_data: str = ""):
    """One JSON document from a file; every problem names the file (and the line of a syntax error)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise cannot_read(path, error, DatasetError) from None
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path}: cannot read ({error})") from None
    except json.JSONDecodeError as error:
        hint = hint_for_extra_data if "Extra data" in error.msg else ""
        raise DatasetError(f"{path}: invalid JSON at line {error.lineno}: {error.msg}{hint}") from None


def numbered_lines(path: Path):
    """(line number, line) for each non-blank line of a UTF-8 text file (a byte-order mark is dropped); a file that
    cannot be read is an error naming it."""
    try:
        return list(read_lines(path))  # io/jsonlines.py: the one BOM rule, lines end at \n only
    except OSError as error:
        raise cannot_read(path, error, DatasetError) from None
    except JsonLinesError as error:
        raise DatasetError(str(error)) from None
