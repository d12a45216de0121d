"""Retrievers by name: the one registry behind ``eval --retriever``, sweeps, grids, ``answer`` and the web app.

Built-in retrievers are listed in `BUILT_IN` (name -> ``module:Class``), loaded only when used; installed
distributions add more through the entry-point group ``ragretrieval.retrievers``, the way stores come from
``ragretrieval.stores``. A registered class follows `RetrieverPlugin` (base.py): it says which evaluation settings
its spec takes, whether it may be swept, which retrievers it is made of, and builds a `Retriever` from a spec.
Every retriever passes one conformance suite, `ragretrieval.testing.retriever_conformance`.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ..errors import RagretrievalError
from ..work.progress import Progress, Silent
from ..work.stop import StopToken
from .base import Retriever, RetrieverPlugin, RetrieverSpec

ENTRY_POINT_GROUP = "ragretrieval.retrievers"
BUILT_IN = {
    "dense": "ragretrieval.retrieval.dense:DenseRetriever",
    "bm25": "ragretrieval.retrieval.lexical:BM25Retriever",
    "http": "ragretrieval.retrieval.external.http:HttpRetriever",
    "run-file": "ragretrieval.retrieval.external.run_file:RunFileRetriever",
    "hybrid": "ragretrieval.retrieval.hybrid:HybridRetriever",
    "rerank": "ragretrieval.retrieval.rerank.reranked:RerankedRetriever",
}


class RetrieverError(RagretrievalError, ValueError):
    """An unknown retriever, or options it cannot take."""


def _load(target: str):
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def available_retrievers() -> dict[str, str]:
    """Retriever name -> where it comes from ("built in", or the distribution that provides it)."""
    found = {name: "built in" for name in BUILT_IN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.dist.name if ep.dist else ep.value)
    return found


def retriever_class(name: str) -> RetrieverPlugin:
    if name in BUILT_IN:
        return _load(BUILT_IN[name])
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    raise RetrieverError(f"unknown retriever {name!r}; known: {', '.join(sorted(available_retrievers()))} "
                         "(`ragretrieval plugins` lists them; more come as packages with a "
                         f"{ENTRY_POINT_GROUP!r} entry point)")


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
