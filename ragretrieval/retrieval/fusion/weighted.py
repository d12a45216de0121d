"""Weighted sum of normalised scores (a convex combination, "CombSUM" with weights).

    score(d) = sum over lists i of w_i * minmax_i(s_i(d)),   minmax_i(s) = (s - min_i) / (max_i - min_i)

min and max are taken over list i's hits for this question (normalize.py); a list that lacks d adds 0 for it. With
two lists (BM25, dense) and ``alpha`` the dense weight, the weights are (1 - alpha, alpha).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .normalize import min_max


def weighted_scores(lists: Sequence[tuple[np.ndarray, np.ndarray]], weights: Sequence[float]) -> dict[int, float]:
    """Fused scores of one question: `lists` holds (positions, scores) per retriever, best first, -1 padding."""
    fused: dict[int, float] = {}
    for (positions, scores), weight in zip(lists, weights, strict=True):
        found = positions >= 0
        for position, value in zip(positions[found].tolist(), min_max(scores[found]).tolist()):
            fused[position] = fused.get(position, 0.0) + weight * value
    return fused
