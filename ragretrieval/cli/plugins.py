"""``ragretrieval plugins [--kind K] [-v]``: every kind of plug-in this installation knows (retrievers, embedders,
rerankers, stores, generators, judges, answer checks), where each comes from and what it does; one loop over the
registries of work/plugins.py. ``-v`` adds each plug-in's typed options and what to install for the missing ones."""

from __future__ import annotations

import click

from ..embedders.settings import EmbedSettings
from ..retrieval.rerank.base import RerankSettings
from ..work.named import Entry, Registry
from ..work.options import option_lines
from ..work.plugins import REGISTRIES

WIDTH = 20  # the names' column
# settings every plug-in of a kind takes (beside its own options)
KIND_SETTINGS = {"embedders": ("--embed-*, --query-prefix, --passage-prefix", EmbedSettings),
                 "rerankers": ("--rerank-*", RerankSettings)}


def notes(kind: str, plugin, verbose: bool) -> str:
    """What a kind's listing adds after the source: a retriever may be swept, or runs after a first stage; with
    `verbose`, a store's search modes and server mode (what `ragretrieval stores` showed)."""
    if kind == "retrievers":
        shown = " sweepable" if plugin.sweepable else ""
        return shown + ("" if getattr(plugin, "first_stage", True) else " (after a first stage: --rerank NAME)")
    if kind == "stores" and verbose:
        modes = getattr(plugin, "search_modes", None) or ("exact" if getattr(plugin, "exact", False) else "?")
        return f" search: {modes}; {getattr(plugin, 'server_mode', None) or 'embedded only'}"
    return ""


def entry_lines(kind: str, entry: Entry, verbose: bool) -> list[str]:
    """One plug-in: its name, where it comes from, notes and summary; with `verbose`, its options."""
    try:
        plugin = entry.load()  # a class: its module is imported, nothing is built or loaded
        own = verbose and kind not in KIND_SETTINGS  # those take their kind's settings, listed once below
        extra, options = notes(kind, plugin, verbose), option_lines(getattr(plugin, "Options", None)) if own else []
    except Exception as error:  # a broken plugin must not hide the others
        plugin, extra, options = None, f" cannot load: {error}", []
    summary = f"  {entry.summary}" if entry.summary and entry.source == "built in" else ""
    return [f"  {entry.shown:<{WIDTH}} {entry.source}{extra}{summary}", *options]


def registry_lines(kind: str, registry: Registry, verbose: bool = False) -> list[str]:
    lines = [f"{kind} ({registry.use}):"]
    for entry in registry.entries():
        lines += entry_lines(kind, entry, verbose)
    for name, how in registry.missing().items():
        lines.append(f"  {name:<{WIDTH}} not installed: {how}")
    if verbose and kind in KIND_SETTINGS:
        flags, model = KIND_SETTINGS[kind]
        lines.append(f"  settings of every {registry.kind} ({flags}):")
        lines += option_lines(model)
    return lines


def plugin_lines(verbose: bool = False, kinds=()) -> list[str]:
    lines = []
    for kind, registry in REGISTRIES.items():
        if not kinds or kind in kinds:
            lines += registry_lines(kind, registry, verbose)
    return lines


def kind_names(ctx, param, values) -> tuple[str, ...]:
    """``--kind stores,judges`` or ``--kind stores --kind judges``; a singular (``store``) is accepted."""
    found = []
    for value in values:
        for name in filter(None, (v.strip().lower() for v in value.split(","))):
            plural = name if name in REGISTRIES else name + "s"
            if plural not in REGISTRIES:
                raise click.BadParameter(f"{name!r} is not a kind of plug-in; kinds: {', '.join(REGISTRIES)}")
            found.append(plural)
    return tuple(dict.fromkeys(found))


@click.command("plugins")
@click.option("--kind", "kinds", multiple=True, callback=kind_names, metavar="KIND",
              help=f"Only these kinds (comma list or repeated): {', '.join(REGISTRIES)}.")
@click.option("-v", "--verbose", is_flag=True, help="Also list each plug-in's options: name, type, default, help.")
def plugins_command(kinds, verbose) -> None:
    """List the retrievers, embedders, rerankers, vector stores, answer generators, judges and answer checks that
    are installed, where each comes from and what it does."""
    click.echo("\n".join(plugin_lines(verbose, kinds)))
