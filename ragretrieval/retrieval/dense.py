"""`dense`: chunks and questions embedded through the cache (each on its side), searched in a vector store.

With an index folder (``--index-dir``) the store is saved there and reused by later runs over the same chunks and
model (the chunks are then not even embedded); a saved index of anything else is refused unless ``--rebuild``.
"""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

import numpy as np
from pydantic import Field

from ..data.chunking import Chunk
from ..embedders.sentence_transformer import DEFAULT_MODEL
from ..stores import DEFAULT_STORE, SearchResult, make_store
from ..stores.persist import index_fingerprint, load_index, save_index
from ..work.limits import Integer
from ..work.options import PluginOptions, plugin_options
from ..work.progress import as_progress
from .base import Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever, question_texts


class DenseOptions(PluginOptions):
    batch_size: Integer | None = Field(None, ge=1, le=100_000,
                                   description="texts per embedding batch [default: the embedder's preferred, 64]")


class DenseRetriever(SimpleRetriever):
    """Its spec takes ``model`` (an embedder name, embedders/registry.py), ``embed`` (its `EmbedSettings` values: API
    endpoint, prefixes, ...), ``store`` and ``store_options`` from the configuration; its own option (`DenseOptions`)
    is ``batch_size``."""

    sweepable: ClassVar[bool] = True
    config_fields: ClassVar[tuple[str, ...]] = ("model", "embed", "store", "store_options")
    keeps_index: ClassVar[bool] = True
    Options: ClassVar[type[PluginOptions]] = DenseOptions

    def __init__(self, embedder, cache, store: str = DEFAULT_STORE, store_options: dict | None = None,
                 progress=None, batch_size: int | None = None, index_dir=None, rebuild: bool = False, executor=None,
                 stop=None):
        self.embedder, self.cache = embedder, cache
        self.passage_embedder, self.query_embedder = embedder.for_side("passage"), embedder.for_side("query")
        self.executor = executor  # where corpus embedding runs (embedders/executors); questions embed here
        self.index_dir, self.rebuild = index_dir, rebuild
        self.reloaded = False  # True when the store came from index_dir
        self.store_name, self.store_options = store, dict(store_options or {})
        make_store(store, **self.store_options)  # a missing store or a bad option fails now, before any embedding
        # an API embedder wants batches big enough for its concurrent requests
        self.batch_size = batch_size or getattr(embedder, "preferred_batch", 64)
        self.progress, self.stop = as_progress(progress), stop
        self.store = None
        self.chunk_vectors = None  # kept for an ANN store: the exact reference searches them (retrieval/exact.py)
        self.query_vectors = None  # the last batch searched: the search-timing pass searches them again
        self.embedded = 0  # texts the model actually embedded (not found in the cache)
        self.timings: dict[str, float] = {"embedding": 0.0, "indexing": 0.0}

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "DenseRetriever":
        options = dict(spec.options)
        embedder = context.embedder(options.pop("model", None) or DEFAULT_MODEL, options.pop("embed", None))
        store, store_options = options.pop("store", DEFAULT_STORE), options.pop("store_options", None)
        return cls(embedder, context.embedding_cache(), store, store_options, progress=context.progress,
                   index_dir=context.index_dir, rebuild=context.rebuild, executor=context.executor,
                   stop=context.stop, **plugin_options(cls.Options, options, "retriever dense"))

    def _embed(self, embedder, texts: Sequence[str], description: str, executor=None) -> np.ndarray:
        from ..embedders import embed_cached

        started = time.perf_counter()
        vectors, made = embed_cached(embedder, texts, self.cache, self.batch_size, self.progress, description,
                                     executor, stop=self.stop)
        self.embedded += made
        self.timings["embedding"] += time.perf_counter() - started
        return vectors

    def index(self, chunks: Sequence[Chunk]) -> None:
        ids, parent_ids, texts = [c.chunk_id for c in chunks], [c.parent_id for c in chunks], [c.text for c in chunks]
        started = time.perf_counter()
        if self.index_dir is not None:
            fingerprint = index_fingerprint(ids, parent_ids, texts, self.passage_embedder.identity)
            saved = None if self.rebuild else load_index(self.index_dir, self.store_name, self.store_options,
                                                         fingerprint)
            if saved is not None:
                self.store, self.reloaded = saved, True
                self.timings["indexing"] = time.perf_counter() - started
                self.progress.note(f"index loaded from {self.index_dir}")
                return
        vectors = self._embed(self.passage_embedder, texts, "embedding chunks", self.executor)
        started = time.perf_counter()
        self.store = make_store(self.store_name, **self.store_options)
        self.store.add(vectors, ids, parent_ids, texts)
        self.chunk_vectors = None if self.store.exact else vectors
        if self.index_dir is not None:
            save_index(self.store, self.index_dir, fingerprint)
        self.timings["indexing"] = time.perf_counter() - started

    def search_texts(self, texts: Sequence[str], depth: int):
        if not texts:
            return SearchResult(np.zeros((0, depth), np.int64), np.zeros((0, depth), np.float32))
        self.query_vectors = self._embed(self.query_embedder, texts, "embedding questions")
        return self.store.search(self.query_vectors, depth)

    def search(self, questions, depth: int) -> Ranking:
        return Ranking.from_search(self.search_texts(question_texts(questions), depth))

    def info(self) -> RetrieverInfo:
        embedders = {"dense": self.passage_embedder.identity}
        if self.query_embedder.identity != self.passage_embedder.identity:
            embedders["dense.query"] = self.query_embedder.identity
        details, notes = {"store": self.store_name, "index_reloaded": self.reloaded}, []
        ran = getattr(self.embedder, "ran", None)
        if ran is not None and ran() is not None:  # a local model: the device, dtype and batch size it ran with
            details["embedding"] = ran()
        usage = getattr(self.embedder, "usage", None)
        if usage is not None:  # an embeddings API: what it cost, and what it had to say
            details["embedding_api"] = usage.as_dict()
            notes += usage.warnings
            if usage.cut_inputs:
                notes.append(f"{usage.cut_inputs} texts were over the model's input limit and were cut to fit")
        return RetrieverInfo(embedders=embedders, embedded_texts=self.embedded, details=details, notes=notes)
