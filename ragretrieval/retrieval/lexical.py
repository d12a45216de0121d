"""`bm25`: bm25s over `tokenize`d chunks (ragretrieval/text.py); needs no model and never imports torch."""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

import numpy as np
from pydantic import Field

from ..data.chunking import Chunk
from ..stores.base import SearchResult
from ..text import tokenize
from ..work.options import PluginOptions, plugin_options
from .base import Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever, question_texts


class BM25Options(PluginOptions):
    k1: float = Field(1.5, ge=0, description="term-frequency saturation")
    b: float = Field(0.75, ge=0, le=1, description="document-length normalisation (0: none, 1: full)")


class BM25Retriever(SimpleRetriever):
    """Options (`BM25Options`): ``k1`` and ``b``, as ``--retriever-option k1=1.2``."""

    sweepable: ClassVar[bool] = True
    Options: ClassVar[type[PluginOptions]] = BM25Options

    def __init__(self, k1: float = BM25Options.model_fields["k1"].default,
                 b: float = BM25Options.model_fields["b"].default):
        self.k1, self.b = float(k1), float(b)
        self._model = None
        self._n = 0
        self.timings: dict[str, float] = {}

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "BM25Retriever":
        return cls(**plugin_options(cls.Options, spec.options, "retriever bm25"))

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
