"""From hits named by id to a `Ranking`, for retrievers that run outside ragretrieval (a service, a results file).

Such a retriever never saw our chunk positions, so it names what it found (`Hit`: a chunk id and/or a parent
document id). Why ids and not positions: a service has its own index and its own chunking; its ids are the only thing
both sides share. A hit whose chunk id is one of ours (and whose parent, if given, is that chunk's document) becomes
that chunk's position; anything else is appended to the ranking's hit table as a foreign hit, which rollup.py scores:
its document counts at document level, and at chunk level it is a chunk of another chunking (not relevant).
The order of the hits is the ranking; their scores are carried into the report, never used to re-order.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..data.chunking import Chunk
from .base import Hit, Ranking


class ChunkLookup:
    """Our chunks by id: their positions and parents."""

    def __init__(self, chunks: Sequence[Chunk]):
        self.position = {c.chunk_id: i for i, c in enumerate(chunks)}
        self.parent = {c.chunk_id: c.parent_id for c in chunks}
        self.n = len(chunks)


def ranking_from_hits(rows: Sequence[Sequence[Hit]], chunks: ChunkLookup) -> Ranking:
    """One row per question, in hit order."""
    depth = max((len(row) for row in rows), default=0)
    positions = np.full((len(rows), depth), -1, dtype=np.int64)
    scores = np.full((len(rows), depth), np.nan, dtype=np.float32)
    foreign: list[Hit] = []
    for i, row in enumerate(rows):
        for rank, hit in enumerate(row):
            ours = chunks.position.get(hit.chunk_id) if hit.chunk_id is not None else None
            if ours is not None and hit.parent_id in (None, chunks.parent[hit.chunk_id]):
                positions[i, rank] = ours
            else:
                positions[i, rank] = chunks.n + len(foreign)
                foreign.append(hit)
            if hit.score is not None:
                scores[i, rank] = hit.score
    return Ranking(positions, scores, tuple(foreign))
