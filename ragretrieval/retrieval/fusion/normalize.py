"""Score normalisation for fusion: each retriever's scores are on its own scale (BM25 unbounded, cosine in [-1, 1]),
so a weighted sum first maps every list to [0, 1]."""

from __future__ import annotations

import numpy as np


def min_max(scores: np.ndarray) -> np.ndarray:
    """``(s - min) / (max - min)`` over one question's list; a list whose scores are all equal maps to 1 (each of its
    hits is that list's best). Non-finite scores (padding) stay out of the minimum and maximum and map to 0."""
    scores = np.asarray(scores, dtype=np.float64)
    finite = np.isfinite(scores)
    out = np.zeros_like(scores)
    if not finite.any():
        return out
    low, high = scores[finite].min(), scores[finite].max()
    out[finite] = (scores[finite] - low) / (high - low) if high > low else 1.0
    return out
