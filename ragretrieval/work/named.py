"""Plug-ins found by name: one `Registry` per kind (retrievers, embedders, rerankers, stores, generators, judges,
answer checks), declared in `work/plugins.py` and read by every command, the web app and ``ragretrieval plugins``.

A registry holds its kind's built-in `Entry`s (a name and a ``"module:attribute"`` target, imported only when used,
a one-line summary and what to install when it is missing) and adds the entries that installed distributions publish
in the kind's entry-point group (docs/plugins.md). An entry claims names in one of three ways:

- ``exact``: that name only (``bm25``, ``faiss``, ``score5``);
- ``prefix``: every name that starts with it and goes on (``openai:`` claims ``openai:gpt-4o-mini``; what follows
  is the argument);
- ``pattern``: a regular expression over the whole name (the embedders' families: ``hashing(-.*)?``).

An entry-point name ending in ``:`` is a prefix, any other an exact name, for every kind.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Literal

from ..errors import InputError

Match = Literal["exact", "prefix", "pattern"]


class UnknownPluginError(InputError, ValueError):
    """No entry of a registry claims the name (each kind turns it into its own error, with the same text); the
    command must name another (exit 2)."""


def load_target(target: str):
    """The object a ``"module:attribute"`` string names (``attribute`` may be dotted: ``Class.from_name``)."""
    module, _, attribute = target.partition(":")
    found = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


@dataclass(frozen=True)
class Entry:
    """One plug-in of a kind: how it claims names, where its code is, what it does and how to install it."""

    name: str  # the exact name, the prefix (ends with ":") or the regular expression
    target: str  # "module:attribute"; for an installed plug-in, its entry point's value
    summary: str = ""
    install: str = ""  # what makes it available when it is missing (an extra, a package)
    source: str = "built in"  # or the distribution that provides it
    match: Match = "exact"
    shown_as: str = ""  # how `ragretrieval plugins` shows it; default: the name (a prefix followed by NAME)
    traits: dict = field(default_factory=dict, compare=False)  # what a kind's own code reads (embedders' flags)

    def __post_init__(self):
        if self.match not in ("exact", "prefix", "pattern"):
            raise ValueError(f"entry {self.name!r}: match must be exact, prefix or pattern, not {self.match!r}")

    @property
    def shown(self) -> str:
        return self.shown_as or (self.name + "NAME" if self.match == "prefix" else self.name)

    def claims(self, spec: str) -> str | None:
        """The argument `spec` gives this entry ("" for an exact name or a pattern), or None when it does not claim
        `spec`. A prefix claims a name only when something follows it."""
        if self.match == "exact":
            return "" if spec == self.name else None
        if self.match == "prefix":
            return spec[len(self.name):] if spec.startswith(self.name) and len(spec) > len(self.name) else None
        return "" if re.fullmatch(self.name, spec) is not None else None

    def load(self):
        return load_target(self.target)

    def options_model(self):
        """The plug-in's typed options (`work.options.PluginOptions`: its ``Options`` attribute), or None."""
        return getattr(self.load(), "Options", None)


_published: dict[tuple, tuple] = {}


def published(group: str) -> tuple:
    """The entry points of `group` that installed distributions publish. Reading them scans every distribution's
    metadata (about 20 ms with this project's dependencies, and a page such as the new-evaluation form asks a dozen
    registries), so they are read once per import path: a distribution added to `sys.path` is seen at once, one
    pip-installed into a running process after its first look only after a restart."""
    key = (group, tuple(sys.path))
    if key not in _published:
        _published[key] = tuple(entry_points(group=group))
    return _published[key]


class Registry:
    """The plug-ins of one kind: built-in entries first, in order, then the installed ones (entry-point group)."""

    def __init__(self, kind: str, group: str, built_in: tuple[Entry, ...], use: str = "",
                 elsewhere: dict[str, str] | None = None, argument: str = "NAME"):
        self.kind = kind  # singular: "retriever", "judge", "check"
        self.group = group
        self.built_in = tuple(built_in)
        self.use = use  # where a user names one: "eval --retriever NAME"
        # names that packages of ours publish -> the distribution to install (the mapping itself, not a copy)
        self.elsewhere = elsewhere if elsewhere is not None else {}
        self.argument = argument  # how a listing shows what follows an installed prefix: toy:NAME, shout:...

    def missing(self) -> dict[str, str]:
        """The names of `elsewhere` that no installed entry claims yet -> what to install for each."""
        return {name: f"pip install {package}" for name, package in self.elsewhere.items() if self.find(name) is None}

    def installed(self) -> list[Entry]:
        """The entries installed distributions publish, but those that repeat a built-in name (ragretrieval's own
        distribution publishes its checks, so the group exists in every installation)."""
        found = []
        built_in = {entry.name for entry in self.built_in}
        for ep in published(self.group):
            if ep.name in built_in:
                continue
            source = ep.dist.name if ep.dist else ep.value
            prefix = ep.name.endswith(":")
            shown = ep.name + self.argument if prefix else ""
            found.append(Entry(ep.name, ep.value, f"from {source}", source=source,
                               match="prefix" if prefix else "exact", shown_as=shown))
        return found

    def entries(self) -> list[Entry]:
        """Every entry in claiming order: built in first (a plug-in cannot take a built-in name), then installed."""
        return [*self.built_in, *self.installed()]

    def available(self) -> dict[str, str]:
        """Name (or prefix, or pattern) -> where it comes from: "built in", or the distribution that provides it."""
        found: dict[str, str] = {}
        for entry in self.entries():
            found.setdefault(entry.name, entry.source)
        return found

    def find(self, spec: str) -> tuple[Entry, str] | None:
        """The first entry that claims `spec`, and the argument it gets; None when no entry does."""
        for entry in self.entries():
            if (argument := entry.claims(spec)) is not None:
                return entry, argument
        return None

    def entry(self, spec: str) -> tuple[Entry, str]:
        found = self.find(spec)
        if found is None:
            raise UnknownPluginError(self.unknown(spec))
        return found

    def load(self, spec: str):
        """The object registered for `spec` (its class or callable); `UnknownPluginError` when none claims it."""
        return self.entry(spec)[0].load()

    def known(self) -> str:
        return ", ".join(sorted(entry.shown for entry in self.entries()))

    def unknown(self, spec: str) -> str:
        return (f"unknown {self.kind} {spec!r}; known: {self.known()} (`ragretrieval plugins` lists them; more come "
                f"as packages with a {self.group!r} entry point)")

    def names(self, spec) -> list[str]:
        """``"a,b"`` (or several such texts) -> the names, in order, each once; each must be claimed. A name left
        empty (``","``, ``"a,"``) is refused: it would run fewer plug-ins than were asked for. A blank text alone
        names none."""
        if spec is None or isinstance(spec, str) and not spec.strip():
            return []
        parts = [spec] if isinstance(spec, str) else list(spec)
        pieces = [n.strip() for part in parts for n in str(part).split(",")]
        if not all(pieces):
            raise UnknownPluginError(f"an empty {self.kind} name in {','.join(map(str, parts))!r}; name each "
                                     f"{self.kind}: {self.known()}")
        names = list(dict.fromkeys(pieces))
        for name in names:
            self.entry(name)
        return names

