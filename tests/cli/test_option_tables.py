"""The option tables of docs/ are generated from the settings models (ragretrieval/cli/option_tables.py): this test
fails when one is stale, and its message says the command that refreshes it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from pydantic import BaseModel, Field

from ragretrieval.cli import option_tables
from ragretrieval.cli.option_tables import DOCS, MIB, REFRESH, TABLES, Table, main, pages, render, stale
from ragretrieval.cli.serve import serve_command
from ragretrieval.work.options import described


class Toy(BaseModel):
    """A model the tests own, so that changing a default does not touch the product's."""

    timeout: float = Field(30.0, description="Seconds | per request")
    names: list[str] = Field(default_factory=lambda: ["a", "b"], description="Names")
    key: str | None = Field(None, description="A key")


class LaterToy(Toy):
    """`Toy` after its timeout's default changed."""

    timeout: float = Field(45.0, description="Seconds | per request")


@dataclass(frozen=True)
class Inner:
    """A settings dataclass's part, shown as rows of its own (`Table.expand`)."""

    threads: int = described("Threads", default=2)
    wait: float = described("Seconds | between looks", default=1.0)


@dataclass(frozen=True)
class ToyDataclass:
    """A settings dataclass: its fields' help is `described`'s metadata."""

    name: str
    body_bytes: int = described("Largest body", default=16 * 2**20)
    inner: Inner = described("The inner part", default_factory=Inner)
    names: tuple[str, ...] = field(default=())  # no help: an empty cell


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.setitem(TABLES, "toy", Table(f"{__name__}:Toy"))
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    page = docs / "sub" / "page.md"
    page.write_text("# Page\n\nBefore.\n\n<!-- options:toy -->\n| old |\n<!-- /options:toy -->\n\nAfter.\n",
                    encoding="utf-8")
    return docs, page


def test_every_table_in_docs_is_what_its_model_gives():
    found = stale()
    assert not found, "stale option tables:\n" + "\n".join(found) + f"\nrefresh them with: {REFRESH}"


def test_every_table_is_on_a_page_once():
    shown = [name for page in pages() for name in option_tables._OPENING.findall(page.read_text(encoding="utf-8"))]
    assert sorted(shown) == sorted(TABLES)
    assert {p.relative_to(DOCS).as_posix() for p in pages()} >= {"llm.md", "web.md", "answers/generate.md",
                                                                  "answers/judge.md"}


def test_a_row_is_the_field_its_default_and_its_description():
    assert render("compare").startswith("| field | default | meaning |\n| --- | --- | --- |\n| `test` |")
    rows = render("compare").splitlines()
    assert "| `alpha` | `0.05` | Significance level for the corrected p-values (between 0 and 1) |" in rows
    llm = render("llm")
    assert "| `timeout` | `120.0` | Seconds per request |" in llm and "| `base_url` | none |" in llm


def test_a_settings_dataclass_is_a_table_with_its_parts_expanded_and_its_options(monkeypatch):
    monkeypatch.setitem(TABLES, "toy", Table(f"{__name__}:ToyDataclass", expand=("inner",),
                                             options=(("name", "`--name N`"), ("inner.wait", "`--wait S`"))))
    assert render("toy").splitlines() == [
        "| option | field | default | meaning |", "| --- | --- | --- | --- |",
        "| `--name N` | `name` | required |  |",
        "| — | `body_bytes` | `16777216` (16 MiB) | Largest body |",
        "| — | `inner.threads` | `2` | Threads |",
        "| `--wait S` | `inner.wait` | `1.0` | Seconds \\| between looks |",
        "| — | `names` | none |  |"]
    monkeypatch.setitem(TABLES, "toy", Table(f"{__name__}:ToyDataclass", options=(("inner.wait", "`--wait S`"),)))
    with pytest.raises(ValueError, match="an option names no row of the table: inner.wait"):
        render("toy")


def test_the_serve_table_is_generated_from_serve_settings_and_the_worker_settings():
    rows = render("serve").splitlines()
    assert rows[0] == "| option | field | default | meaning |"
    assert "| `--port N` | `port` | `8000` | Port to bind (1 to 65535) |" in rows
    assert "| `--concurrency N` | `worker_settings.threads` | `2` | Questions answered at once |" in rows
    assert any(row.startswith("| `--max-body-mb N` (in MiB) | `max_body_bytes` | `16777216` (16 MiB) |")
               for row in rows)
    assert "| — | `worker_settings.stop_grace` | `10.0` | Seconds the questions in hand get to finish when the " \
           "worker stops |" in rows


def test_the_serve_table_names_every_option_of_serve_and_the_command_keeps_the_fields_defaults():
    """Each option the table names is one of `serve`'s, every one of them is named, and with none given the command
    holds the fields' defaults (cli/serve.py and cli/worker.py read them from the settings), so the table is true of
    `ragretrieval serve`."""
    given = serve_command.make_context("serve", []).params
    fields = {row.name: row.default for row in TABLES["serve"].rows()}
    named = set()
    for name, shown in TABLES["serve"].options:
        flag = re.match(r"`(--[\w-]+)", shown).group(1)
        [param] = [p for p in serve_command.params if flag in p.opts]
        named.add(param.name)
        value = given[param.name] * MIB if name.endswith("_bytes") else given[param.name]
        assert value == fields[name], (flag, name)
    assert named == {p.name for p in serve_command.params}


def test_a_stale_table_is_found_named_and_rewritten(toy, capsys):
    docs, page = toy
    assert stale(docs) == ["docs/sub/page.md: table toy"]
    assert main(["--docs", str(docs)]) == 1
    err = capsys.readouterr().err
    assert "stale: docs/sub/page.md: table toy" in err and REFRESH in err
    assert main(["--docs", str(docs), "--write"]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Page\n\nBefore.\n\n<!-- options:toy -->\n| field | default | meaning |\n")
    assert "| `timeout` | `30.0` | Seconds \\| per request |\n" in text  # a | in a description stays in its cell
    assert "| `names` | `a, b` | Names |\n| `key` | none | A key |\n<!-- /options:toy -->\n\nAfter.\n" in text
    assert stale(docs) == [] and main(["--docs", str(docs)]) == 0


def test_a_changed_default_makes_the_table_stale(toy, monkeypatch):
    docs, _ = toy
    main(["--docs", str(docs), "--write"])
    monkeypatch.setitem(TABLES, "toy", Table(f"{__name__}:LaterToy"))
    assert stale(docs) == ["docs/sub/page.md: table toy"]


def test_a_marker_quoted_in_prose_is_no_table(toy):
    docs, page = toy
    page.write_text("Tables sit between `<!-- options:NAME -->` and `<!-- /options:NAME -->`.\n", encoding="utf-8")
    assert pages(docs) == [] and main(["--docs", str(docs)]) == 0


def test_a_table_inside_a_list_item_keeps_its_indentation(toy):
    docs, page = toy
    page.write_text("- item:\n\n  <!-- options:toy -->\n  <!-- /options:toy -->\n", encoding="utf-8")
    main(["--docs", str(docs), "--write"])
    lines = page.read_text(encoding="utf-8").splitlines()
    assert all(line.startswith("  ") for line in lines[2:]) and lines[3] == "  | field | default | meaning |"


@pytest.mark.parametrize("text, words", [
    ("<!-- options:nothing -->\n<!-- /options:nothing -->\n", "no option table 'nothing' (known: "),
    ("<!-- options:toy -->\n| x |\n", "<!-- options:toy --> has no <!-- /options:toy --> after it"),
])
def test_a_bad_marker_is_a_usage_error_naming_the_page(toy, capsys, text, words):
    docs, page = toy
    page.write_text(text, encoding="utf-8")
    assert main(["--docs", str(docs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {page}: ") and words in err


def test_serve_and_worker_say_their_settings_descriptions_as_help():
    from click.testing import CliRunner

    from ragretrieval.cli import main
    from ragretrieval.server.settings import ServeSettings, WorkerSettings
    from ragretrieval.work.options import help_of

    assert help_of(WorkerSettings, "threads") == "Questions answered at once."
    worker = " ".join(CliRunner().invoke(main, ["worker", "--help"]).output.split())
    assert "--stale-after FLOAT RANGE Seconds after which a question whose heartbeat is older is taken over" in worker
    serve = " ".join(CliRunner().invoke(main, ["serve", "--help"]).output.split())
    assert help_of(ServeSettings, "host") in serve and "Address to bind; anything but loopback needs a token." in serve
