"""`bm25`: bm25s over `tokenize`d chunks (ragretrieval/text.py); needs no model and never imports torch."""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

import numpy as np

from ..data.chunking import Chunk
from ..stores.base import SearchResult
from ..text import tokenize
from .base import Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever, question_texts


class BM25Retriever(SimpleRetriever):
    """Options ``k1`` (default 1.5) and ``b`` (0.75), as ``--retriever-option k1=1.2``."""

    sweepable: ClassVar[bool] = True

    def __init__(self, k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = float(k1), float(b)
        self._model = None
        self._n = 0
        self.timings: dict[str, float] = {}

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "BM25Retriever":
        return cls(**spec.options)

    def index(self, chunks: Sequence[Chunk]) -> None:
        import bm25s

        started = time.perf_counter()
        self._n = len(chunks)
        self._model = bm25s.BM25(k1=self.k1, b=self.b)
        self._model.index([tokenize(c.text) or ["\0"] for c in chunks], show_progress=False)
        self.timings["indexing"] = time.perf_counter() - started

    def search_texts(self, texts: Sequence[str], depth: int) -> SearchResult:
        depth_found = min(depth, self._n)
        queries = [tokenize(text) or ["\0"] for text in texts]
        out_i = np.full((len(texts), depth), -1, dtype=np.int64)
        out_s = np.full((len(texts), depth), -np.inf, dtype=np.float32)
        if depth_found and texts:
            indices, scores = self._model.retrieve(queries, k=depth_found, show_progress=False, n_threads=1)
            out_i[:, :depth_found], out_s[:, :depth_found] = indices, scores
        return SearchResult(out_i, out_s)

    def search(self, questions, depth: int) -> Ranking:
        return Ranking.from_search(self.search_texts(question_texts(questions), depth))

    def info(self) -> RetrieverInfo:
        return RetrieverInfo(details={"k1": self.k1, "b": self.b})
