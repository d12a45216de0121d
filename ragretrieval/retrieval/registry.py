"""Retrievers by name: the one registry behind ``eval --retriever``, sweeps, grids, ``answer`` and the web app.

The names are `RETRIEVERS`, this kind's `Registry` (work/plugins.py: the built-in ones, loaded only when used, and those
installed distributions add through the entry-point group ``ragretrieval.retrievers``). A registered class follows
`RetrieverPlugin` (base.py): it says which evaluation settings its spec takes, whether it may be swept, which retrievers
it is made of, and builds a `Retriever` from a spec. Every retriever passes one conformance suite,
`ragretrieval.testing.retriever_conformance`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RagretrievalError
from ..work.named import UnknownPluginError
from ..work.plugins import RETRIEVERS
from ..work.progress import Progress, Silent
from ..work.stop import StopToken
from .base import Retriever, RetrieverPlugin, RetrieverSpec

ENTRY_POINT_GROUP = RETRIEVERS.group
BUILT_IN = {entry.name: entry.target for entry in RETRIEVERS.built_in}  # name -> "module:Class", as in 0.2


class RetrieverError(RagretrievalError, ValueError):
    """An unknown retriever, or options it cannot take."""


def available_retrievers() -> dict[str, str]:
    """Retriever name -> where it comes from ("built in", or the distribution that provides it)."""
    return RETRIEVERS.available()


def retriever_class(name: str) -> RetrieverPlugin:
    try:
        return RETRIEVERS.load(name)
    except UnknownPluginError as error:
        raise RetrieverError(str(error)) from None


def sweepable_retrievers() -> list[str]:
    return [name for name in available_retrievers() if retriever_class(name).sweepable]


def first_stage_retrievers() -> list[str]:
    """The names `--retriever` offers: every retriever but those that only wrap another (``rerank``: ``--rerank``)."""
    return [name for name in available_retrievers() if getattr(retriever_class(name), "first_stage", True)]


def spec_from_config(config) -> RetrieverSpec:
    """The spec an evaluation configuration describes: ``config.retriever`` with the settings its class reads
    (`config_fields`) and ``config.retriever_options``; composite retrievers add their children. With
    ``config.rerank`` the spec is a reranker whose child is that first stage (rerank/reranked.py)."""
    plugin = retriever_class(config.retriever)
    options = {name: getattr(config, name) for name in plugin.config_fields} | dict(config.retriever_options)
    spec = RetrieverSpec(name=config.retriever, options=options, children=plugin.children(options))
    rerank = getattr(config, "rerank", None)
    if rerank:
        embed = getattr(config, "embed", None)
        spec = RetrieverSpec(name="rerank", options={**rerank, "embed": embed} if embed else dict(rerank),
                             children=(spec,))
    return spec


@dataclass
class BuildContext:
    """What retrievers share while they are built and run: one embedding cache, one loaded model per name (so a
    sweep loads each model once), where progress goes, the stop token, the executor and the index folder."""

    cache: Any = None
    progress: Progress = field(default_factory=Silent)
    stop: StopToken | None = None
    executor: Any = None
    index_dir: Path | None = None
    rebuild: bool = False
    embedders: dict = field(default_factory=dict)

    def embedding_cache(self):
        if self.cache is None:
            from ..embedders import EmbeddingCache

            self.cache = EmbeddingCache()
        return self.cache

    def embedder(self, name: str, settings: dict | None = None):
        """The embedder for a model name and its settings (`EmbedSettings` values), made once per context."""
        key = name if not settings else f"{name} {json.dumps(settings, sort_keys=True)}"
        if key not in self.embedders:
            from ..embedders import get_embedder

            self.embedders[key] = get_embedder(name, settings=settings)
        return self.embedders[key]


def build_retriever(spec: RetrieverSpec, context: BuildContext | None = None) -> Retriever:
    """A retriever from its spec; a bad option is a `RetrieverError` naming the retriever."""
    plugin = retriever_class(spec.name)
    try:
        return plugin.build(spec, context or BuildContext())
    except TypeError as error:
        raise RetrieverError(f"retriever {spec.name!r}: bad option ({error})") from None
