"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

    score(d) = sum over lists i that hold d of 1 / (k + rank_i(d)),   rank counted from 1

Only ranks count, so lists on different scales fuse without normalisation; ``k`` (60 in the paper) damps the weight
of the very first ranks. A list that lacks d adds nothing for it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

DEFAULT_K = 60.0


def rrf_scores(lists: Sequence[tuple[np.ndarray, np.ndarray]], k: float = DEFAULT_K) -> dict[int, float]:
    """Fused scores of one question: `lists` holds (positions, scores) per retriever, best first, -1 padding."""
    fused: dict[int, float] = {}
    for positions, _ in lists:
        for rank, position in enumerate(positions[positions >= 0].tolist(), start=1):
            fused[position] = fused.get(position, 0.0) + 1.0 / (k + rank)
    return fused
