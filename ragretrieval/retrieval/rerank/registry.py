"""Rerankers by name: the one registry behind ``--rerank NAME``. A name is matched by its prefix: built-in prefixes
first (``st-cross:``, ``embed:``, ``http:``), then the entries of the entry-point group ``ragretrieval.rerankers``
(an entry named ``myrank:`` claims every name starting with it). The registered callable takes
``(name, settings, context)``: the whole name, the `RerankSettings` and the `BuildContext` (embedding cache, shared
embedders, progress, stop token)."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from .base import Reranker, RerankError, RerankSettings

ENTRY_POINT_GROUP = "ragretrieval.rerankers"
BUILT_IN = {
    "st-cross:": "ragretrieval.retrieval.rerank.cross_encoder:CrossEncoderReranker",
    "embed:": "ragretrieval.retrieval.rerank.embed:EmbedReranker",
    "http:": "ragretrieval.retrieval.rerank.http:HttpReranker",
}
SUMMARIES = {
    "st-cross:": "a sentence-transformers CrossEncoder (hub id in the local cache, or a folder)",
    "embed:": "cosine with another embedder (any --model name), e.g. embed:e5-small-q4",
    "http:": "a rerank API: Cohere/Jina /v1/rerank or TEI /rerank (--rerank-format)",
}


def available_rerankers() -> dict[str, str]:
    """Name prefix -> where it comes from."""
    found = {prefix: "built in" for prefix in BUILT_IN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.dist.name if ep.dist else ep.value)
    return found


def _factory(name: str):
    """The registered callable that claims `name` (by prefix); RerankError naming the known prefixes otherwise."""
    for prefix, target in BUILT_IN.items():
        if name.startswith(prefix):
            module, _, attribute = target.partition(":")
            return lambda: getattr(importlib.import_module(module), attribute)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if name.startswith(ep.name):
            return ep.load
    raise RerankError(f"unknown reranker {name!r}; a name starts with one of "
                      f"{', '.join(sorted(available_rerankers()))} (`ragretrieval plugins` lists them)")


def check_reranker(name: str) -> None:
    """RerankError unless a registered reranker claims `name`; nothing is imported or loaded (a sweep checks every
    cell before the first one runs)."""
    _factory(name)


def make_reranker(settings: RerankSettings, context) -> Reranker:
    return _factory(settings.name)()(settings.name, settings, context)
