"""``ragretrieval stores``: which vector stores are installed, where they come from, and what they can do."""

from __future__ import annotations

import click

from ..stores import ADAPTER_PACKAGES, available_stores, store_class

HEADER = ("store", "package", "search", "server mode")


def store_rows() -> list[tuple[str, str, str, str]]:
    """One row per installed store; a plugin that fails to import shows its error instead of its modes."""
    rows = []
    for name, package in sorted(available_stores().items()):
        try:
            cls = store_class(name)
        except Exception as error:  # a broken plugin must not hide the others
            rows.append((name, package, f"cannot load: {error}", "-"))
            continue
        modes = getattr(cls, "search_modes", None) or ("exact" if getattr(cls, "exact", False) else "?")
        rows.append((name, package, modes, getattr(cls, "server_mode", None) or "embedded only"))
    return rows


@click.command("stores")
def stores_command() -> None:
    """List the installed vector stores (use one with `eval --store NAME`). Deprecated: `plugins --kind stores`
    (the one deprecation line is cli/aliases.py's, as for every 0.2 name)."""
    rows = [HEADER, *store_rows()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    missing = [f"{name} ({package})" for name, package in ADAPTER_PACKAGES.items() if name not in available_stores()]
    if missing:
        click.echo(f"\nnot installed: {', '.join(missing)}; pip install the package to add one")
