"""`RerankedRetriever`: any first stage, then a reranker over its top `depth` hits (``--rerank NAME``).

Its spec is ``rerank`` with `RerankSettings` as options and the first stage as its only child, so a run records both.
A search asks the first stage for ``max(depth asked, rerank depth)`` hits, re-scores the first `depth` and puts them
first, best first; hits below the rerank depth follow in first-stage order with a NaN score (they were not
re-scored), which the document roll-up needs when a question has fewer than k documents in the top `depth`.
Rerank time is its own line in the timings (``rerank``), embedding done by an ``embed:`` reranker included.
"""

from __future__ import annotations

import time
from typing import ClassVar, Sequence

import numpy as np

from ...data.chunking import Chunk
from ..base import Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever, question_texts
from ..registry import RetrieverError, build_retriever
from .base import RerankError, RerankSettings
from .registry import make_reranker


class RerankedRetriever(SimpleRetriever):
    first_stage: ClassVar[bool] = False  # chosen with --rerank after a --retriever, not as one
    Options: ClassVar[type] = RerankSettings  # its options are the reranking stage's settings

    def __init__(self, first, reranker, depth: int):
        self.first, self.reranker, self.depth = first, reranker, depth
        self._texts: list[str] = []
        self._seconds = 0.0
        self._scored: dict[tuple, np.ndarray] = {}  # (question, candidates) -> scores, kept across searches

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "RerankedRetriever":
        if len(spec.children) != 1:
            raise RetrieverError(f"rerank: takes exactly one first stage (its spec has {len(spec.children)}); "
                                 "choose it as retriever and add rerank.name")
        settings = RerankSettings.parse(spec.options)
        first = build_retriever(spec.children[0], context)
        return cls(first, make_reranker(settings, context), settings.depth)

    @property
    def timings(self) -> dict[str, float]:
        return {**self.first.timings, "rerank": self._seconds}

    def index(self, chunks: Sequence[Chunk]) -> None:
        self._texts, self._scored = [c.text for c in chunks], {}
        self.first.index(chunks)

    def _text(self, ranking: Ranking, position: int) -> str:
        if position < len(self._texts):
            return self._texts[position]
        hit = ranking.foreign[position - len(self._texts)]
        if hit.text is None:
            raise RerankError(f"cannot rerank: the first stage found {hit.chunk_id or hit.parent_id!r} without its "
                              "text (map a text field in the retriever's mapping)")
        return hit.text

    def search(self, questions, depth: int) -> Ranking:
        ranking = self.first.search(questions, max(depth, self.depth))
        top = ranking.positions[:, :self.depth]
        keys = [(text, tuple(row[row >= 0].tolist())) for text, row in zip(question_texts(questions), top)]
        wanted = [i for i, key in enumerate(keys) if key not in self._scored]  # the roll-up may search again deeper
        started = time.perf_counter()
        if wanted:
            candidates = [[self._text(ranking, p) for p in keys[i][1]] for i in wanted]
            found = self.reranker.rerank([questions[i] for i in wanted], candidates)
            self._scored.update((keys[i], np.asarray(s, dtype=np.float32)) for i, s in zip(wanted, found))
        scores = [self._scored[key] for key in keys]
        self._seconds += time.perf_counter() - started
        width = min(depth, ranking.depth)
        positions = np.full((len(top), width), -1, dtype=np.int64)
        values = np.full((len(top), width), np.nan, dtype=np.float32)
        for i, row_scores in enumerate(scores):
            found = ranking.positions[i][ranking.positions[i] >= 0]
            order = np.argsort(-np.asarray(row_scores), kind="stable")  # ties keep first-stage order
            row = np.concatenate([found[:len(order)][order], found[len(order):]])[:width]
            positions[i, :len(row)] = row
            top_scores = np.asarray(row_scores, dtype=np.float32)[order][:width]
            values[i, :len(top_scores)] = top_scores
        return Ranking(positions, values, ranking.foreign)

    def info(self) -> RetrieverInfo:
        info = RetrieverInfo()
        info.merge(self.first.info(), part="first_stage")
        embedder = getattr(self.reranker, "embedder", None)
        if embedder is not None:
            info.embedders["rerank"] = embedder.for_side("passage").identity
        info.details.update(reranker=self.reranker.identity, rerank_depth=self.depth)
        return info
