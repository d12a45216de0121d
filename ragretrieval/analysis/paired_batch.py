"""`paired_stats` for many metrics at once, with the same numbers: what `compare` runs when it tests every check,
judge and retrieval metric of two runs (the web app's compare page tests about 80 at once).

Why it can be faster without changing a number: `paired_stats` seeds every resampling from the user's seed alone,
so every metric with the same number n of paired questions is resampled with the *same* index vectors (and, for the
permutation test, the same sign vectors). The draws are made once per n, kept as counts (how often each question is
drawn in each resample, R x n), and every metric's resampled means come from one matrix product, counts @ D / n,
instead of R x n gathers per metric. The means equal ``d[idx].mean(axis=1)`` up to the order of the additions (a
few units in the last place), so CIs and p-values agree with `paired_stats` to about 1e-15
(tests/analysis/test_paired_batch.py).

The last draws are kept (one entry: the counts of n = 1,000 questions and R = 10,000 resamples take 20 MB), so the
levels of one comparison (answer, document, chunk), which pair the same questions, draw once.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from .settings import PAIRED
from .stats import (
    ALL_ZERO_NOTE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    TESTS,
    TOO_FEW_NOTE,
    PairedStats,
    StatsError,
    _blocks,
    _rng,
    _tolerance,
    cohens_dz,
    differences,
    test_p,
    wins_ties_losses,
)

ROWS_AT_ONCE = 1024  # resamples turned into float64 at a time (1,024 x n), so memory stays flat
_kept: dict = {}
_kept_lock = threading.Lock()


def _draws(n: int, n_resamples: int, seed: int, stream: int) -> np.ndarray:
    """R x n: how often each question is drawn in each resample (stream 2 and 3: the bootstrap's index vectors), or
    the random signs (stream 1: the permutation test's), drawn exactly as `stats.bootstrap_means` and
    `stats.sign_flip_means` draw them."""
    key = (n, n_resamples, seed, stream)
    with _kept_lock:
        if key in _kept:
            return _kept[key]
    rng = _rng(seed, stream)
    blocks = []
    for size in _blocks(n_resamples, n, None):
        if stream == 1:
            blocks.append(1 - 2 * rng.integers(0, 2, size=(size, n), dtype=np.int8))
        else:
            index = rng.integers(0, n, size=(size, n))
            flat = (index + np.arange(size)[:, None] * n).ravel()
            blocks.append(np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.uint16))
    found = np.concatenate(blocks)
    with _kept_lock:
        _kept.clear()
        _kept[key] = found
    return found


def _resampled_means(draws: np.ndarray, columns: np.ndarray):
    """Blocks of the resampled means of every column (R_block x M)."""
    n = columns.shape[0]
    for start in range(0, len(draws), ROWS_AT_ONCE):
        yield (draws[start:start + ROWS_AT_ONCE].astype(np.float64) @ columns) / n


def _ci(columns: np.ndarray, confidence: float, n_resamples: int, seed: int) -> list[tuple[float, float]]:
    means = np.concatenate(list(_resampled_means(_draws(len(columns), n_resamples, seed, 3), columns)))
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail], axis=0)
    return [(float(a), float(b)) for a, b in zip(lo, hi)]


def _resampled_p(columns: np.ndarray, test: str, n_resamples: int, seed: int) -> list[float]:
    """The permutation or bootstrap test's p of every column (stats.permutation_p, stats.bootstrap_p)."""
    n = len(columns)
    observed = np.abs(columns.mean(axis=0))
    tolerance = np.array([_tolerance(columns[:, j]) / n for j in range(columns.shape[1])])
    if test == "bootstrap":
        draws, shifted = _draws(n, n_resamples, seed, 2), columns - columns.mean(axis=0)
    else:
        draws, shifted = _draws(n, n_resamples, seed, 1), columns
    hits = np.zeros(columns.shape[1], dtype=np.int64)
    for block in _resampled_means(draws, shifted):
        hits += np.count_nonzero(np.abs(block) >= observed - tolerance, axis=0)
    return [(1 + int(h)) / (1 + n_resamples) for h in hits]


def paired_stats_many(pairs, test: str = PAIRED.test, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      confidence: float = 0.95) -> list[PairedStats]:
    """``[paired_stats(a, b, test, n_resamples, seed, confidence) for a, b in pairs]``, computed together."""
    if test not in TESTS:
        raise StatsError(f"test must be one of {', '.join(TESTS)}; got {test!r}")
    if n_resamples < 1:
        raise StatsError(f"the number of resamples must be positive, got {n_resamples}")
    found: list[PairedStats | None] = [None] * len(pairs)
    waiting: dict[int, list] = {}  # n -> [(position, d, means, counts)] of the metrics that need resampling
    for position, (a, b) in enumerate(pairs):
        d = differences(a, b)
        n = len(d)
        means = [float(np.mean(x)) if n else math.nan for x in (a, b)]
        counts = wins_ties_losses(d)
        if n < 2:
            diff = float(d.mean()) if n else math.nan
            found[position] = PairedStats(n, *means, diff, (math.nan, math.nan), math.nan, math.nan, *counts, test,
                                          TOO_FEW_NOTE)
        elif counts[0] == counts[2] == 0:
            found[position] = PairedStats(n, *means, 0.0, (0.0, 0.0), 1.0, 0.0, *counts, test, ALL_ZERO_NOTE)
        else:
            waiting.setdefault(n, []).append((position, d, means, counts))
    for group in waiting.values():
        columns = np.column_stack([d for _, d, _, _ in group])
        cis = _ci(columns, confidence, n_resamples, seed)
        if test in ("permutation", "bootstrap"):
            ps = _resampled_p(columns, test, n_resamples, seed)
        else:
            ps = [test_p(d, test) for _, d, _, _ in group]
        for (position, d, means, counts), ci, p in zip(group, cis, ps):
            found[position] = PairedStats(len(d), *means, float(d.mean()), ci, p, cohens_dz(d), *counts, test)
    return found
