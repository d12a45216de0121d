"""Retrievers: dense (embedder + vector store) and lexical (BM25), and the roll-up depth for document scoring.

A retriever indexes chunks once, then answers a batch of questions with chunk positions (in indexing order) and
scores. For document-level scoring, `search_for_documents` retrieves deep enough that every question sees k distinct
parent documents (or every chunk), so each document is ranked by its best-ranked chunk.
"""

from __future__ import annotations

import re
import time
from typing import Protocol, Sequence

import numpy as np

from .chunking import Chunk
from .stores import SearchResult, make_store, store_class
from .stores.persist import index_fingerprint, load_index, save_index

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"([{_CJK}]+)|((?:(?![{_CJK}])\\w)+)")


class Retriever(Protocol):
    name: str

    def index(self, chunks: Sequence[Chunk]) -> None: ...

    def search(self, questions: Sequence[str], depth: int) -> SearchResult: ...


def tokenize(text: str) -> list[str]:
    """Chinese as character unigrams and bigrams, other text as lower-cased words."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        if run := match.group(1):
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            tokens.append(match.group(2))
    return tokens


class BM25Retriever:
    """bm25s over `tokenize`d chunks; needs no model and never imports torch."""

    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self._model = None
        self._n = 0
        self.timings: dict[str, float] = {}

    def index(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        started = time.perf_counter()
        self._n = len(chunks)
        self._model = bm25s.BM25(k1=self.k1, b=self.b)
        self._model.index([tokenize(c.text) or ["\0"] for c in chunks], show_progress=False)
        self.timings["indexing"] = time.perf_counter() - started

    def search(self, questions: Sequence[str], depth: int) -> SearchResult:
        depth_found = min(depth, self._n)
        queries = [tokenize(q) or ["\0"] for q in questions]
        indices, scores = self._model.retrieve(queries, k=depth_found, show_progress=False, n_threads=1)
        out_i = np.full((len(questions), depth), -1, dtype=np.int64)
        out_s = np.full((len(questions), depth), -np.inf, dtype=np.float32)
        out_i[:, :depth_found], out_s[:, :depth_found] = indices, scores
        return SearchResult(out_i, out_s)


class DenseRetriever:
    """Embeds chunks and questions through the cache and searches a vector store.

    With `index_dir`, the store is saved there and reused by later runs over the same chunks and model (the chunks
    are then not even embedded); a saved index of anything else is refused unless `rebuild`.
    """

    name = "dense"

    def __init__(self, embedder, cache, store: str = "faiss", store_options: dict | None = None,
                 progress: bool = True, batch_size: int = 64, index_dir=None, rebuild: bool = False, executor=None):
        self.embedder, self.cache = embedder, cache
        self.executor = executor  # where corpus embedding runs (ragretrieval/executors); questions embed here
        self.index_dir, self.rebuild = index_dir, rebuild
        self.reloaded = False  # True when the store came from index_dir
        self.store_name, self.store_options = store, dict(store_options or {})
        store_class(store)  # a store that is not installed fails now, not after the corpus is embedded
        self.progress, self.batch_size = progress, batch_size
        self.store = None
        self.embedded = 0  # texts the model actually embedded (not found in the cache)
        self.timings: dict[str, float] = {"embedding": 0.0, "indexing": 0.0}

    def _embed(self, texts: Sequence[str], description: str, executor=None) -> np.ndarray:
        from .embedders import embed_cached

        started = time.perf_counter()
        vectors, made = embed_cached(self.embedder, texts, self.cache, self.batch_size, self.progress, description,
                                     executor)
        self.embedded += made
        self.timings["embedding"] += time.perf_counter() - started
        return vectors

    def index(self, chunks: Sequence[Chunk]) -> None:
        ids, parent_ids, texts = [c.chunk_id for c in chunks], [c.parent_id for c in chunks], [c.text for c in chunks]
        started = time.perf_counter()
        if self.index_dir is not None:
            fingerprint = index_fingerprint(ids, parent_ids, texts, self.embedder.identity)
            saved = None if self.rebuild else load_index(self.index_dir, self.store_name, self.store_options,
                                                         fingerprint)
            if saved is not None:
                self.store, self.reloaded = saved, True
                self.timings["indexing"] = time.perf_counter() - started
                return
        vectors = self._embed(texts, "embedding chunks", self.executor)
        started = time.perf_counter()
        self.store = make_store(self.store_name, **self.store_options)
        self.store.add(vectors, ids, parent_ids, texts)
        if self.index_dir is not None:
            save_index(self.store, self.index_dir, fingerprint)
        self.timings["indexing"] = time.perf_counter() - started

    def search(self, questions: Sequence[str], depth: int) -> SearchResult:
        return self.store.search(self._embed(questions, "embedding questions"), depth)


def distinct_per_row(codes: np.ndarray) -> np.ndarray:
    """Number of distinct non-negative codes in each row."""
    ordered = np.sort(np.where(codes < 0, -1, codes), axis=1)
    new = np.concatenate([ordered[:, :1] >= 0, (ordered[:, 1:] != ordered[:, :-1]) & (ordered[:, 1:] >= 0)], axis=1)
    return new.sum(axis=1)


def search_for_documents(retriever: Retriever, questions: Sequence[str], k: int, parent_codes: np.ndarray,
                         n_chunks: int) -> SearchResult:
    """Search deep enough that every question's chunks cover k distinct parents (or all chunks)."""
    depth = min(n_chunks, max(k, 4 * k))
    while True:
        result = retriever.search(questions, depth)
        parents = np.where(result.indices >= 0, parent_codes[np.maximum(result.indices, 0)], -1)
        if depth >= n_chunks or distinct_per_row(parents).min(initial=k) >= k:
            return result
        depth = min(n_chunks, depth * 2)
