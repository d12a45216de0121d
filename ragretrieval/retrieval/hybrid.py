"""`hybrid`: BM25 and dense retrieval fused into one ranking (fusion/: reciprocal rank fusion or a weighted sum of
normalised scores).

Its spec has two children, ``bm25`` (with ``k1``/``b`` when given) and ``dense`` (with the run's model, embedding
settings and store), so a sweep over models gives one hybrid per dense model and a run records both parts. Each
part is searched `candidates` deep (100 by default, or the depth asked when deeper) and the fused list is cut to the
depth asked: with a fixed candidate depth a deeper search extends a shallower one, which the document roll-up relies
on when it searches again deeper.

Options (``--fusion``, ``--rrf-k``, ``--alpha``, or ``--retriever-option candidates=200``), declared with their
defaults in `HybridOptions`: ``fusion`` rrf or weighted; ``rrf_k``; ``alpha``, the dense part's weight in a weighted
sum; ``candidates``, how deep each part is searched.
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal, Sequence

from pydantic import Field

from ..data.chunking import Chunk
from ..work.limits import Integer
from ..work.options import PluginOptions, plugin_options
from .base import Ranking, RetrieverInfo, RetrieverSpec, SimpleRetriever
from .fusion import DEFAULT_ALPHA, DEFAULT_K, check_fusion, fuse
from .lexical import BM25Options
from .registry import RetrieverError, build_retriever

FUSION_OPTIONS = ("fusion", "rrf_k", "alpha", "candidates")
LEXICAL_OPTIONS = tuple(BM25Options.model_fields)
DENSE_OPTIONS = ("model", "embed", "store", "store_options")
DEFAULT_CANDIDATES = 100


class HybridOptions(BM25Options):
    """The BM25 part's ``k1`` and ``b``, and how the parts are fused."""

    fusion: Literal["rrf", "weighted"] = Field("rrf", description="reciprocal rank fusion, or a weighted sum of "
                                                                  "normalised scores")
    rrf_k: float = Field(DEFAULT_K, ge=0, description="k of reciprocal rank fusion")
    alpha: float = Field(DEFAULT_ALPHA, ge=0, le=1, description="weight of the dense part in weighted fusion")
    candidates: Integer = Field(DEFAULT_CANDIDATES, ge=1, le=100_000, description="hits each part is searched for")


class HybridRetriever(SimpleRetriever):
    sweepable: ClassVar[bool] = True
    config_fields: ClassVar[tuple[str, ...]] = DENSE_OPTIONS
    keeps_index: ClassVar[bool] = True  # its dense part
    Options: ClassVar[type[PluginOptions]] = HybridOptions

    def __init__(self, parts: Sequence, names: Sequence[str], fusion: str = "rrf", rrf_k: float = DEFAULT_K,
                 alpha: float = DEFAULT_ALPHA, candidates: int = DEFAULT_CANDIDATES):
        self.parts, self.names = list(parts), list(names)
        self.fusion, self.rrf_k, self.alpha, self.candidates = fusion, float(rrf_k), float(alpha), int(candidates)
        check_fusion(self.fusion, self.rrf_k, self.alpha, len(self.parts))
        if self.candidates < 1:
            raise RetrieverError(f"hybrid: candidates must be positive; got {self.candidates}")
        self._fusion_seconds = 0.0

    @classmethod
    def children(cls, options: dict) -> tuple[RetrieverSpec, ...]:
        lexical = {k: options[k] for k in LEXICAL_OPTIONS if k in options}
        dense = {k: options[k] for k in DENSE_OPTIONS if k in options}
        return RetrieverSpec(name="bm25", options=lexical), RetrieverSpec(name="dense", options=dense)

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "HybridRetriever":
        children = spec.children or cls.children(spec.options)
        own = plugin_options(cls.Options, {k: v for k, v in spec.options.items() if k not in DENSE_OPTIONS},
                             "retriever hybrid")
        if len(children) < 2:
            raise RetrieverError(f"hybrid: fuses two or more retrievers; its spec has {len(children)}")
        parts = [build_retriever(child, context) for child in children]
        options = {k: own[k] for k in FUSION_OPTIONS if k in own}
        return cls(parts, [child.label() for child in children], **options)

    @property
    def timings(self) -> dict[str, float]:
        """The parts' stages added up (embedding, indexing, ...), and the fusion's own time."""
        total: dict[str, float] = {}
        for part in self.parts:
            for stage, seconds in part.timings.items():
                total[stage] = total.get(stage, 0.0) + seconds
        total["fusion"] = self._fusion_seconds
        return total

    def index(self, chunks: Sequence[Chunk]) -> None:
        for part in self.parts:
            part.index(chunks)

    def search(self, questions, depth: int) -> Ranking:
        deep = max(depth, self.candidates)
        rankings = [part.search(questions, deep) for part in self.parts]
        started = time.perf_counter()
        fused = fuse(rankings, depth, self.fusion, self.rrf_k, self.alpha)
        self._fusion_seconds += time.perf_counter() - started
        return fused

    def info(self) -> RetrieverInfo:
        info = RetrieverInfo()
        for name, part in zip(self.names, self.parts):
            info.merge(part.info(), part=name)
        info.details.update(fusion=self.fusion, candidates=self.candidates,
                            **({"rrf_k": self.rrf_k} if self.fusion == "rrf" else {"alpha": self.alpha}))
        return info
