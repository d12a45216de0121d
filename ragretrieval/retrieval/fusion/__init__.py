"""Fusion of several retrievers' rankings into one (what ``--retriever hybrid`` does): one method per file (rrf.py,
weighted.py), score normalisation apart (normalize.py), and `fuse`, the dispatcher every method goes through."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import RagretrievalError
from ..base import Ranking
from .rrf import DEFAULT_K, rrf_scores
from .weighted import weighted_scores

METHODS = ("rrf", "weighted")
DEFAULT_ALPHA = 0.5


class FusionError(RagretrievalError, ValueError):
    """A fusion method or parameter that does not exist or cannot apply."""


def check_fusion(method: str, rrf_k: float, alpha: float, parts: int) -> None:
    if method not in METHODS:
        raise FusionError(f"unknown fusion {method!r}; known: {', '.join(METHODS)}")
    if rrf_k < 0:
        raise FusionError(f"rrf_k must be >= 0; got {rrf_k}")
    if not 0.0 <= alpha <= 1.0:
        raise FusionError(f"alpha (the dense part's weight) must be within [0, 1]; got {alpha}")
    if method == "weighted" and parts != 2:
        raise FusionError(f"weighted fusion takes two parts (alpha weighs the second); got {parts}")


def fuse(rankings: Sequence[Ranking], depth: int, method: str = "rrf", rrf_k: float = DEFAULT_K,
         alpha: float = DEFAULT_ALPHA) -> Ranking:
    """One ranking, `depth` deep, from rankings of the same questions over the same chunks.

    Ties in the fused score are broken by the best rank a hit had in any list, then by the earlier list, so the
    order never depends on dictionary order."""
    check_fusion(method, rrf_k, alpha, len(rankings))
    if any(r.foreign for r in rankings):  # their positions index each ranking's own table of outside hits
        raise FusionError("fusion takes retrievers that rank this run's chunks, not an outside service's hits")
    n = rankings[0].positions.shape[0] if rankings else 0
    positions = np.full((n, depth), -1, dtype=np.int64)
    scores = np.full((n, depth), np.nan, dtype=np.float32)
    for row in range(n):
        lists = [(r.positions[row], r.scores[row]) for r in rankings]
        fused = rrf_scores(lists, rrf_k) if method == "rrf" else weighted_scores(lists, (1.0 - alpha, alpha))
        first_seen: dict[int, tuple[int, int]] = {}
        for part, (found, _) in enumerate(lists):
            for rank, position in enumerate(found[found >= 0].tolist()):
                first_seen[position] = min(first_seen.get(position, (rank, part)), (rank, part))
        order = sorted(fused, key=lambda p: (-fused[p], first_seen[p]))[:depth]
        positions[row, :len(order)] = order
        scores[row, :len(order)] = [fused[p] for p in order]
    return Ranking(positions, scores)
