"""Rerankers by name: the one registry behind ``--rerank NAME`` (`RERANKERS`, work/plugins.py). A name is matched by its
prefix: built-in prefixes first (``st-cross:``, ``embed:``, ``http:``), then the entries of the entry-point group
``ragretrieval.rerankers`` (an entry named ``myrank:`` claims every name starting with it). The registered callable
takes ``(name, settings, context)``: the whole name, the `RerankSettings` and the `BuildContext` (embedding cache,
shared embedders, progress, stop token)."""

from __future__ import annotations

from ...work.plugins import RERANKERS
from .base import Reranker, RerankError, RerankSettings

ENTRY_POINT_GROUP = RERANKERS.group
BUILT_IN = {entry.name: entry.target for entry in RERANKERS.built_in}  # prefix -> "module:Class", as in 0.2
SUMMARIES = {entry.name: entry.summary for entry in RERANKERS.built_in}


def available_rerankers() -> dict[str, str]:
    """Name prefix -> where it comes from."""
    return RERANKERS.available()


def _factory(name: str):
    """How to load the registered callable that claims `name` (by prefix); RerankError naming the known prefixes
    otherwise."""
    found = RERANKERS.find(name)
    if found is None:
        raise RerankError(f"unknown reranker {name!r}; a name starts with one of "
                          f"{', '.join(sorted(available_rerankers()))} (`ragretrieval plugins` lists them)")
    return found[0].load


def check_reranker(name: str) -> None:
    """RerankError unless a registered reranker claims `name`; nothing is imported or loaded (a sweep checks every
    cell before the first one runs)."""
    _factory(name)


def make_reranker(settings: RerankSettings, context) -> Reranker:
    return _factory(settings.name)()(settings.name, settings, context)
