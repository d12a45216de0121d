"""The option tables of docs/, generated from the settings models, so a default is stated where it is declared and
nowhere else by hand.

A page holds a table between two marker comments, ``<!-- options:NAME -->`` and ``<!-- /options:NAME -->``; `TABLES`
says which model (and which of its fields) each NAME shows: one row per field with its name, its default and its
meaning (the field's description: pydantic's ``Field(description=...)``, or a settings dataclass's
``described(...)``, work/options.py), and first the command-line option that sets it where the table names them.
``make docs-tables`` (``python -m ragretrieval.cli.option_tables --write``) rewrites every table; ``--check`` (and
tests/cli/test_option_tables.py) fails where a table is stale.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..io.atomic import write_text_atomic
from ..work.limits import MIB
from ..work.options import DESCRIPTION

REFRESH = "make docs-tables (python -m ragretrieval.cli.option_tables --write)"
DOCS = Path(__file__).resolve().parents[2] / "docs"
# a table keeps its markers' indentation (inside a list item)
_BLOCK = re.compile(r"^(?P<indent>[ \t]*)(?P<open><!-- options:(?P<name>[\w-]+) -->\n)(?P<body>.*?)"
                    r"^(?P=indent)(?P<close><!-- /options:(?P=name) -->)", re.S | re.M)
_OPENING = re.compile(r"^[ \t]*<!-- options:([\w-]+) -->$", re.M)  # a marker is a line of its own, not prose


REQUIRED = object()  # a field without a default


@dataclass(frozen=True)
class Row:
    name: str  # ``worker_settings.threads`` for a field of an expanded one
    default: Any
    description: str


def declared(model) -> list[Row]:
    """Each field of a pydantic model or a settings dataclass, in the model's order."""
    if dataclasses.is_dataclass(model):
        return [Row(f.name, f.default if f.default is not dataclasses.MISSING
                    else REQUIRED if f.default_factory is dataclasses.MISSING else f.default_factory(),
                    f.metadata.get(DESCRIPTION, "")) for f in dataclasses.fields(model)]
    return [Row(name, REQUIRED if info.is_required() else info.get_default(call_default_factory=True),
                info.description or "") for name, info in model.model_fields.items()]


@dataclass(frozen=True)
class Table:
    """`model`'s fields as a table: those in `only` (all when empty) but those in `without`, in the model's order.
    A field in `expand` is shown as its own fields' rows (``worker_settings.threads``); `options` pairs a field with
    the command-line option that sets it, shown in a first column."""

    model: str  # "module:attribute", imported when the table is drawn
    only: tuple[str, ...] = ()
    without: tuple[str, ...] = ()
    expand: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()

    def settings_model(self) -> Any:
        import importlib

        module, _, name = self.model.partition(":")
        return getattr(importlib.import_module(module), name)

    def fields(self) -> list[str]:
        names = [row.name for row in declared(self.settings_model())]
        chosen = [n for n in names if n in self.only] if self.only else names
        unknown = (set(self.only) | set(self.expand)) - set(names)
        if unknown:
            raise ValueError(f"{self.model} has no field {', '.join(sorted(unknown))}")
        return [n for n in chosen if n not in self.without]

    def rows(self) -> list[Row]:
        chosen = set(self.fields())
        rows = []
        for row in declared(self.settings_model()):
            if row.name in self.expand:
                rows += [dataclasses.replace(inner, name=f"{row.name}.{inner.name}")
                         for inner in declared(type(row.default))]
            elif row.name in chosen:
                rows.append(row)
        named = {row.name for row in rows}
        unknown = [name for name, _ in self.options if name not in named]
        if unknown:
            raise ValueError(f"{self.model}: an option names no row of the table: {', '.join(unknown)}")
        return rows


_ANSWER = "ragretrieval.answers.settings:AnswerSettings"
_JUDGE_FIELDS = ("judges", "judge_samples", "judge_temperature", "judge_prompts", "judge_model", "judge_base_url",
                 "judge_api_key_env", "judge_language", "judge_nuggets", "judge_nugget_batch", "judge_price_in",
                 "judge_price_out", "judge_timeout", "judge_max_retries")
TABLES: dict[str, Table] = {
    "llm": Table("ragretrieval.llm.client:LLMSettings"),
    "answer": Table(_ANSWER, without=_JUDGE_FIELDS + ("retrieval",)),
    "judge": Table(_ANSWER, only=_JUDGE_FIELDS),
    "web-options": Table("ragretrieval.server.jobs.options:EvaluationOptions"),
    "compare": Table("ragretrieval.analysis.settings:CompareSettings"),
    "serve": Table("ragretrieval.server.settings:ServeSettings", expand=("worker_settings",), options=(
        ("runs_db", "`--runs-db URL`"), ("datasets", "`--datasets DIR`"), ("host", "`--host ADDR`"),
        ("port", "`--port N`"), ("token", "`--token [VALUE]`"), ("max_body_bytes", "`--max-body-mb N` (in MiB)"),
        ("worker", "`--worker / --no-worker`"), ("worker_settings.threads", "`--concurrency N`"),
        ("worker_settings.poll_interval", "`--poll S`"), ("worker_settings.heartbeat_interval", "`--heartbeat S`"),
        ("worker_settings.stale_after", "`--stale-after S`"), ("engine", "`--engine MODULE:FUNCTION`"),
        ("api_key_env", "`--api-key-env NAME`"), ("allow_models", "`--allow-model NAME` (repeatable)"))),
}


def shown_default(value, name: str = "") -> str:
    """A default as the table shows it: ``5``, ``120.0``, ``"auto"`` as `auto`, none, a list as ``1, 3, 5``; a size
    in whole MiB (a field named ``*_bytes``) says so."""
    if value is REQUIRED:
        return "required"
    if value is None:
        return "none"
    if name.endswith("_bytes") and isinstance(value, int) and value and value % MIB == 0:
        return f"`{value}` ({value // MIB} MiB)"
    if isinstance(value, BaseModel):
        return f"`{type(value).__name__}()`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (list, tuple)):
        return f"`{', '.join(str(v) for v in value)}`" if value else "none"
    if isinstance(value, dict):
        return "`{}`" if not value else f"`{value}`"
    if value == "":
        return '`""`'
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(name: str) -> str:
    """The table `name` as Markdown, ending in a newline."""
    table = TABLES[name]
    options = dict(table.options)
    lines = ["| option | field | default | meaning |", "| --- | --- | --- | --- |"] if options else [
        "| field | default | meaning |", "| --- | --- | --- |"]
    for row in table.rows():
        cells = [options.get(row.name, "—")] if options else []
        cells += [f"`{row.name}`", shown_default(row.default, row.name), row.description]
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def refreshed(text: str, where: str = "") -> str:
    """`text` with every table between markers drawn again. An unknown name or an opening marker without its
    closing one is a `ValueError` naming `where`."""
    opened = _OPENING.findall(text)
    blocks = [m.group("name") for m in _BLOCK.finditer(text)]
    if sorted(opened) != sorted(blocks):
        missing = next(n for n in opened if opened.count(n) != blocks.count(n))
        raise ValueError(f"{where}: <!-- options:{missing} --> has no <!-- /options:{missing} --> after it")
    for name in blocks:
        if name not in TABLES:
            raise ValueError(f"{where}: no option table {name!r} (known: {', '.join(TABLES)})")

    def drawn(m: re.Match) -> str:
        indent = m.group("indent")
        rows = "".join(indent + row + "\n" for row in render(m.group("name")).splitlines())
        return indent + m.group("open") + rows + indent + m.group("close")

    return _BLOCK.sub(drawn, text)


def pages(docs: Path = DOCS) -> list[Path]:
    """The pages of `docs` that hold a table."""
    return [p for p in sorted(docs.rglob("*.md")) if _OPENING.search(p.read_text(encoding="utf-8"))]


def _changed(docs: Path):
    """(page, its text, its text with every table drawn again) for each page whose tables are not what they give."""
    for page in pages(docs):
        text = page.read_text(encoding="utf-8")
        fresh = refreshed(text, str(page))
        if fresh != text:
            yield page, text, fresh


def stale(docs: Path = DOCS) -> list[str]:
    """``page: table NAME`` for each table that differs from what its model gives."""
    found = []
    for page, text, fresh in _changed(docs):
        old = {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}
        new = {m.group("name"): m.group("body") for m in _BLOCK.finditer(fresh)}
        found += [f"{page.relative_to(docs.parent)}: table {n}" for n in new if old.get(n) != new[n]]
    return found


def write(docs: Path = DOCS) -> list[Path]:
    """Draws every table again; returns the pages that changed."""
    changed = [(page, fresh) for page, _, fresh in _changed(docs)]  # all read before any is written
    for page, fresh in changed:
        write_text_atomic(page, fresh)
    return [page for page, _ in changed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragretrieval.cli.option_tables", description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite the stale tables (default: only check)")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder [default: the checkout's]")
    args = parser.parse_args(argv)
    try:
        if args.write:
            for page in write(args.docs):
                print(f"rewrote {page}")
            return 0
        found = stale(args.docs)
    except ValueError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 2
    for line in found:
        print(f"stale: {line}", file=sys.stderr)
    if found:
        print(f"refresh them with: {REFRESH}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
