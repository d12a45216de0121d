"""Question sets in the ApeRAG formats (docs/dataset-format.md, "ApeRAG question sets"): rows of
``question_type`` (``FACTUAL``, ``INFERENTIAL``, ``USER_DEFINED``), ``question_text`` and ``ground_truth``, as a CSV
file (``aperag-csv``) or a JSON array of objects (``aperag-json``; an object ``{"questions": [...]}`` is read too).

The formats are not ours and carry no version field; what ragretrieval needs to write a file back as it was travels
in each question's ``metadata["aperag"]``: the row's other columns (``extra``) and, for CSV, the file's dialect
(`CsvDialect`: column order, BOM, line ending, quoting, final line ending). So a CSV saved by a spreadsheet (UTF-8
with a BOM, CRLF rows, quoted cells holding commas, doubled quotes, line breaks and Chinese text) comes back byte for
byte through import and export. Questions that were not imported from CSV (an LLM-built set, say) are written in the
spreadsheet dialect: UTF-8 with a BOM, CRLF, quotes only where needed, the three columns.

Spreadsheets run a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula
(``=HYPERLINK(...)``, ``@cmd``), so a CSV we write neutralises such cells as OWASP advises: a leading ``'``, which
import takes off again. A cell that itself starts with quotes before one of those characters (``'=x``) gets one
more on export (``''=x``), so that import, which takes off exactly one, gives back every cell as it was: writing
is one-to-one and import undoes it. A file written elsewhere with a live formula cell imports as it is, and
export writes that cell neutralised (a warning says the file will not come back byte for byte).

A question's id is an ``id`` column when there is one, else derived from its text (the same text gives the same id
on every import). ApeRAG questions name no source document: they are judged on their answers and left out of
retrieval scoring (with a count).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...errors import cannot_read
from ...io.jsonfiles import describe
from ..dataset import DatasetError, Provenance, QuestionRecord, QuestionText
from ..filename_questions import question_id
from .common import read_json_file

COLUMNS = ("question_type", "question_text", "ground_truth")
QUESTION_TYPES = ("FACTUAL", "INFERENTIAL", "USER_DEFINED")
OWN = (*COLUMNS, "id")  # columns that are fields of the question; any other is kept in metadata
BOM = "\ufeff"
# a cell starting with = + - @ tab or CR is run as a formula by spreadsheets (OWASP, "CSV Injection"); with quotes
# before that character, it looks like a cell we neutralised
_LIVE = re.compile(r"'*[=+\-@\t\r]")
_NEUTRALISED = re.compile(r"'+[=+\-@\t\r]")


def neutralise(cell: str) -> str:
    """The cell as a CSV we write holds it: with one more leading ``'`` when it starts with a formula character,
    possibly after quotes of its own (so `restore` can take exactly one off)."""
    return "'" + cell if _LIVE.match(cell) else cell


def restore(cell: str) -> str:
    """The cell `neutralise` wrote: its first ``'`` taken off when a formula character follows its quotes."""
    return cell[1:] if _NEUTRALISED.match(cell) else cell


class CsvDialect(BaseModel):
    """How a CSV file was written, so it can be written again the same way."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    columns: list[str] = Field(default_factory=lambda: list(COLUMNS))
    bom: bool = True
    newline: Literal["\r\n", "\n"] = "\r\n"
    quoting: Literal["minimal", "all"] = "minimal"
    final_newline: bool = True


SPREADSHEET = CsvDialect()


class ApeRAGQuestion(BaseModel):
    """One row or object. ``question_type`` is checked case-insensitively and kept as written."""

    model_config = ConfigDict(extra="allow")
    id: str | None = None
    question_type: str = ""
    question_text: QuestionText
    ground_truth: str

    @field_validator("question_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value.strip() and value.strip().upper() not in QUESTION_TYPES:
            raise ValueError(f"{value!r} is not one of {', '.join(QUESTION_TYPES)}")
        return value

    @field_validator("ground_truth")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("empty: a question of the set is judged against its reference answer")
        return value


def _record(row: ApeRAGQuestion, where: str, fmt: str, source: str, taken: set[str], dialect=None) -> QuestionRecord:
    kept: dict = {"extra": dict(row.model_extra or {})}
    if dialect is not None:
        kept["csv"] = dialect.model_dump()
    elif row.id:
        kept["with_id"] = True  # JSON: write the id back
    qid = row.id or question_id(row.question_text)
    if qid in taken and not row.id:
        qid = question_id(row.question_text, namespace=where)  # the same text twice: the second gets its own id
    if qid in taken:
        raise DatasetError(f"{where}: question id {qid!r} is used twice")
    taken.add(qid)
    try:
        return QuestionRecord(id=qid, text=row.question_text, ground_truth=row.ground_truth or None,
                              question_type=row.question_type or None, provenance=Provenance(generator=fmt,
                                                                                             source=source),
                              metadata={"aperag": kept})
    except ValueError as error:
        raise DatasetError(f"{where}: {describe(error) if isinstance(error, ValidationError) else error}") from None


# ------------------------------------------------------------------------------------------------------------- CSV
_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _quoted(cell: str, quote_all: bool) -> str:
    """The cell as written: quoted (quotes inside doubled) when it holds a comma, a quote, a CR or a LF. Done here,
    not by the csv module: with a "\n" line terminator, Python before 3.13 leaves a lone CR unquoted, and the file
    then reads back with a row cut in two."""
    return '"' + cell.replace('"', '""') + '"' if quote_all or _NEEDS_QUOTES.search(cell) else cell


def render_csv(rows: list[list[str]], dialect: CsvDialect) -> str:
    quote_all = dialect.quoting == "all"
    # a row of one empty cell is written "" (as the csv module does), so that it is not read as a blank line
    lines = ['""' if row == [""] else ",".join(_quoted(cell, quote_all) for cell in row) for row in rows]
    text = "".join(line + dialect.newline for line in lines)
    return text if dialect.final_newline else text[: -len(dialect.newline)]


def _dialect(text: str, bom: bool, rows: list[list[str]]) -> tuple[CsvDialect, bool]:
    """The dialect that writes `rows` back as `text` exactly, and whether one does."""
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else ("\n" if first >= 0 else "\r\n")
    final = text.endswith("\n")
    for quoting in ("minimal", "all"):
        dialect = CsvDialect(columns=rows[0], bom=bom, newline=newline, quoting=quoting, final_newline=final)
        if render_csv(rows, dialect) == text:
            return dialect, True
    return CsvDialect(columns=rows[0], bom=bom, newline=newline, final_newline=final), False


def read_aperag_csv(path) -> tuple[list[QuestionRecord], list[str]]:
    """Questions from an ApeRAG CSV file, and warnings (skipped blank rows, a file that will not round-trip)."""
    path = Path(path)
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as error:
        raise cannot_read(path, error, DatasetError) from None
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path}: not UTF-8 (bad byte at offset {error.start}); save it as \"CSV UTF-8\"") from None
    bom = text.startswith(BOM)
    text = text.removeprefix(BOM)
    # Python 3.10's csv reader refuses a NUL ("line contains NUL"): it travels as a character the text lacks
    stand_in = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text) if "\0" in text else None
    reader = csv.reader(io.StringIO(text.replace("\0", stand_in) if stand_in else text, newline=""), strict=True)
    rows, starts, start = [], [], 1
    try:
        for row in reader:
            rows.append([cell.replace(stand_in, "\0") for cell in row] if stand_in else row)
            starts.append(start)
            start = reader.line_num + 1
    except csv.Error as error:
        raise DatasetError(f"{path}:{reader.line_num}: not valid CSV ({error})") from None
    if not rows:
        raise DatasetError(f"{path}: empty; expected a header row with {', '.join(COLUMNS)}")
    live = sum(neutralise(restore(cell)) != cell for row in rows for cell in row)
    dialect, exact = _dialect(text, bom, rows)
    rows = [[restore(cell) for cell in row] for row in rows]
    dialect = dialect.model_copy(update={"columns": rows[0]})
    header = rows[0]
    if "question_text" not in header:
        raise DatasetError(f"{path}:1: the header has no 'question_text' column (it has: {', '.join(header)})")
    repeated = next((c for c in header if header.count(c) > 1), None)
    if repeated is not None:
        raise DatasetError(f"{path}:1: column {repeated!r} appears twice in the header")
    questions, warnings, taken = [], [], set()
    for row, line in zip(rows[1:], starts[1:]):
        if not any(cell.strip() for cell in row):
            warnings.append(f"{path}:{line}: blank row skipped")
            continue
        if len(row) != len(header):
            raise DatasetError(f"{path}:{line}: {len(row)} cells, but the header has {len(header)} columns")
        try:
            parsed = ApeRAGQuestion.model_validate(dict(zip(header, row)))
        except ValidationError as error:
            raise DatasetError(f"{path}:{line}: {describe(error)}") from None
        questions.append(_record(parsed, f"{path}:{line}", "aperag-csv", path.name, taken, dialect))
    if not exact or len(questions) < len(rows) - 1:
        warnings.append(f"{path}: written in a dialect export cannot reproduce exactly (quoting neither minimal nor "
                        "all, mixed line endings or blank rows): questions export writes it with minimal quoting")
    if live:
        warnings.append(f"{path}: {live} cells start with =, +, -, @, a tab or a carriage return, which spreadsheets "
                        "run as formulas: questions export writes them with a leading ' (so the file will not come "
                        "back byte for byte)")
    return questions, warnings


def _cell(question: QuestionRecord, column: str, imported: bool) -> str:
    if column == "id":
        return question.id
    if column == "question_text":
        return question.text
    if column == "ground_truth":
        return question.ground_truth or ""
    if column == "question_type":
        return question.question_type or ("" if imported else "USER_DEFINED")
    return str(question.metadata.get("aperag", {}).get("extra", {}).get(column, ""))


def write_aperag_csv(questions) -> bytes:
    """The CSV file of `questions`: in the dialect and columns they were imported with, else the spreadsheet one."""
    kept = [q.metadata.get("aperag", {}) for q in questions]
    dialects = [CsvDialect.model_validate(k["csv"]) for k in kept if "csv" in k]
    dialect = dialects[0] if dialects else SPREADSHEET
    columns = list(dict.fromkeys(c for d in [dialect, *dialects[1:]] for c in d.columns))
    columns += [c for c in dict.fromkeys(c for k in kept for c in k.get("extra", {})) if c not in columns]
    rows = [columns] + [[_cell(q, c, "aperag" in q.metadata) for c in columns] for q in questions]
    rows = [[neutralise(cell) for cell in row] for row in rows]
    return ((BOM if dialect.bom else "") + render_csv(rows, dialect)).encode("utf-8")


# ------------------------------------------------------------------------------------------------------------ JSON
def read_aperag_json(path) -> list[QuestionRecord]:
    """Questions from a JSON array of ``{question_type, question_text, ground_truth}`` (or ``{"questions": [...]}``)."""
    path = Path(path)
    data = read_json_file(path)
    items = data.get("questions") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise DatasetError(f"{path}: expected a JSON array of questions, or an object with a 'questions' array")
    questions, taken = [], set()
    for number, item in enumerate(items, start=1):
        where = f"{path}: question {number}"
        try:
            parsed = ApeRAGQuestion.model_validate(item)
        except ValidationError as error:
            raise DatasetError(f"{where}: {describe(error)}") from None
        questions.append(_record(parsed, where, "aperag-json", path.name, taken))
    return questions


def write_aperag_json(questions) -> str:
    """A JSON array, one object per question: its id when it was imported with one, the three fields, then the
    other keys it was imported with."""
    items = []
    for q in questions:
        kept = q.metadata.get("aperag", {})
        had_id = "id" in kept.get("csv", {}).get("columns", []) or kept.get("with_id")
        item = {"id": q.id} if had_id else {}
        item.update(question_type=q.question_type or ("" if kept else "USER_DEFINED"), question_text=q.text,
                    ground_truth=q.ground_truth or "")
        items.append({**item, **kept.get("extra", {})})
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def read_questions(path, fmt: str) -> tuple[list[QuestionRecord], list[str]]:
    """(questions, warnings) from a file in `fmt` (``aperag-csv`` or ``aperag-json``); a file without a question
    (a header row alone, blank rows, ``[]``) is an error: a question set of nothing would evaluate nothing."""
    questions, warnings = read_aperag_csv(path) if fmt == "aperag-csv" else (read_aperag_json(path), [])
    if not questions:
        what = "no question row under its header" if fmt == "aperag-csv" else "no question (an empty array)"
        raise DatasetError(f"{path}: {what}; nothing to import")
    return questions, warnings


def dump_questions(questions, fmt: str) -> bytes:
    return write_aperag_csv(questions) if fmt == "aperag-csv" else write_aperag_json(questions).encode("utf-8")
