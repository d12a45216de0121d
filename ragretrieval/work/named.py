"""Plug-ins found by name: a kind's built-in table (name -> ``"module:attribute"``, imported only when used) and its
entry-point group, which installed distributions add to (docs/plugins.md). Each kind's registry keeps its own
rules (exact names, name prefixes) on top of these three calls."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points


def load_target(target: str):
    """The object a ``"module:attribute"`` string names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def available(group: str, built_in) -> dict[str, str]:
    """Name -> where it comes from: "built in", or the distribution that provides it."""
    found = {name: "built in" for name in built_in}
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep.dist.name if ep.dist else ep.value)
    return found


def find(group: str, built_in: dict[str, str], name: str):
    """The class registered under exactly `name` (built in first), or None."""
    if name in built_in:
        return load_target(built_in[name])
    return next((ep.load() for ep in entry_points(group=group) if ep.name == name), None)
