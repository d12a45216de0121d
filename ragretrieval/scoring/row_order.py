"""Items of many rankings in one order: by row (query), then by rank. Shared by trec_eval's measures and its gains
(trec_eval_measures.py, trec_eval_gains.py), which build on each other."""

from __future__ import annotations

import numpy as np


def by_row_and_rank(rows: np.ndarray, ranks: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows and ranks of the `chosen` items, sorted by row, then rank."""
    index = np.flatnonzero(chosen)
    order = np.lexsort((ranks[index], rows[index]))
    return rows[index][order], ranks[index][order]
