"""Paired significance tests on per-question metric values, the bootstrap CI of the mean difference, effect size,
wins/ties/losses and multiple-testing corrections.

Notation: two runs scored on the same n questions give a_i and b_i; the paired differences are d_i = b_i - a_i, their
mean d̄ = (1/n) Σ d_i and sample standard deviation s = sqrt(Σ (d_i - d̄)² / (n - 1)). Every test is two-sided with
H0: "the two runs are exchangeable question by question" (mean difference zero).

- ``t``: paired Student t-test, t = d̄ / (s / √n) with n - 1 degrees of freedom (`scipy.stats.ttest_rel`).
- ``wilcoxon``: Wilcoxon signed-rank test on the d_i, zero differences dropped (Wilcoxon's ``zero_method="wilcox"``),
  exact distribution for small samples and the normal approximation otherwise (`scipy.stats.wilcoxon`, method auto).
- ``permutation``: sign-flip (randomization) test. Under H0 each d_i is as likely to be -d_i, so with random signs
  ε_i ∈ {-1, +1}: p = (1 + #{r : |Σ ε_i^(r) d_i| >= |Σ d_i|}) / (1 + R) over R random sign vectors.
- ``bootstrap``: paired bootstrap test (Efron & Tibshirani 1993, §16.4): the differences are shifted to mean zero,
  d0_i = d_i - d̄, resampled with replacement R times, and p = (1 + #{r : |mean(d0*^(r))| >= |d̄|}) / (1 + R).
- CI: percentile paired bootstrap, the 2.5% and 97.5% quantiles of mean(d*^(r)) over R resamples of the d_i.
- Effect size: Cohen's d_z for paired data, d_z = d̄ / s (the mean difference in units of the differences' spread;
  not Cohen's d_av, which divides by the runs' pooled spread).

The "+1" in both resampling p-values counts the observed data as one resample: p is never 0 and the test stays valid.
Resampling runs in blocks (`block_size`) so memory stays flat whatever R is; a seed fixes every resample.

Edge cases: when every d_i is 0 (to within `TIE_TOLERANCE`) the runs agree on every question and every test returns
p = 1 with a note; with fewer than 2 questions no test is possible and p, CI and d_z are NaN with a note; NaN inputs
are refused (`StatsError` naming the positions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import RagretrievalError
from .settings import CORRECTIONS, DEFAULT_RESAMPLES, DEFAULT_SEED, PAIRED, TESTS  # noqa: F401 (their old home)

TIE_TOLERANCE = 1e-12  # |d_i| at or below this is a tie: equal metric values can differ in the last bit
BLOCK_ELEMENTS = 1 << 20  # resampled values held at once (8 MiB of float64)
ALL_ZERO_NOTE = "all differences are zero: p = 1 (the runs agree on every question)"
TOO_FEW_NOTE = "fewer than 2 paired questions: no test, p and CI undefined"


class StatsError(RagretrievalError, ValueError):
    """Inputs the statistics cannot accept."""


@dataclass(frozen=True)
class PairedStats:
    """Everything `paired_stats` computes for one metric and one pair of runs (b against a)."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci: tuple[float, float]
    p: float
    effect_size: float  # Cohen's d_z
    wins: int  # b > a
    ties: int
    losses: int  # b < a
    test: str
    note: str | None = None


def differences(a, b) -> np.ndarray:
    """d = b - a as float64, after checking shapes and refusing NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise StatsError(f"paired values must be two 1-d arrays of the same length, got {a.shape} and {b.shape}")
    for name, values in (("a", a), ("b", b)):
        bad = np.flatnonzero(np.isnan(values))
        if len(bad):
            raise StatsError(f"{len(bad)} NaN value(s) in run {name} at position(s) {bad[:5].tolist()}")
    return b - a


def _blocks(n_resamples: int, n: int, block_size: int | None):
    size = block_size or max(1, BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, size):
        yield min(size, n_resamples - start)


def _rng(seed: int, stream: int) -> np.random.Generator:
    """Independent, reproducible streams for the CI and each test from one user seed."""
    return np.random.default_rng([seed, stream])


def _tolerance(d: np.ndarray) -> float:
    """Slack for `>=` between sums of the same numbers added in different orders."""
    return 1e-9 * (float(np.abs(d).sum()) + 1.0)


def sign_flip_means(d: np.ndarray, n_resamples: int, seed: int, block_size: int | None = None):
    """Yield blocks of mean(ε ⊙ d) for random sign vectors ε."""
    rng = _rng(seed, 1)
    for size in _blocks(n_resamples, len(d), block_size):
        signs = 1 - 2 * rng.integers(0, 2, size=(size, len(d)), dtype=np.int8)
        yield (signs @ d) / len(d)


def bootstrap_means(d: np.ndarray, n_resamples: int, seed: int, stream: int, block_size: int | None = None):
    """Yield blocks of mean(d[idx]) for index vectors drawn with replacement."""
    rng = _rng(seed, stream)
    for size in _blocks(n_resamples, len(d), block_size):
        yield d[rng.integers(0, len(d), size=(size, len(d)))].mean(axis=1)


def _count_extreme(blocks, observed: float, tolerance: float) -> int:
    return sum(int(np.count_nonzero(np.abs(block) >= observed - tolerance)) for block in blocks)


def permutation_p(d, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                  block_size: int | None = None) -> float:
    """Sign-flip test p-value (formula in the module docstring)."""
    d = np.asarray(d, dtype=np.float64)
    observed = abs(float(d.mean()))
    hits = _count_extreme(sign_flip_means(d, n_resamples, seed, block_size), observed, _tolerance(d) / len(d))
    return (1 + hits) / (1 + n_resamples)


def bootstrap_p(d, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                block_size: int | None = None) -> float:
    """Paired bootstrap test p-value: resample the mean-shifted differences (module docstring)."""
    d = np.asarray(d, dtype=np.float64)
    observed = abs(float(d.mean()))
    centred = d - d.mean()
    hits = _count_extreme(bootstrap_means(centred, n_resamples, seed, 2, block_size), observed, _tolerance(d) / len(d))
    return (1 + hits) / (1 + n_resamples)


def bootstrap_ci(d, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 block_size: int | None = None) -> tuple[float, float]:
    """Percentile CI of the mean difference: quantiles (1 ± confidence) / 2 of the bootstrap means."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2:
        return (math.nan, math.nan)
    means = np.concatenate(list(bootstrap_means(d, n_resamples, seed, 3, block_size)))
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(means, [tail, 1 - tail])
    return (float(lo), float(hi))


def bootstrap_ratio_ci(sums, counts, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile CI of a ratio of sums over questions, Σ sums / Σ counts, resampling questions with replacement:
    the CI of a mean over condition instances when questions hold different numbers of them (RAG-IFEval's
    aggregates). With every count 1 it is the CI of the plain mean."""
    sums, counts = np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    if len(sums) < 2:
        return (math.nan, math.nan)
    rng = _rng(seed, 4)
    ratios = []
    for size in _blocks(n_resamples, len(sums), None):
        index = rng.integers(0, len(sums), size=(size, len(sums)))
        ratios.append(sums[index].sum(axis=1) / np.maximum(counts[index].sum(axis=1), 1e-300))
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(np.concatenate(ratios), [tail, 1 - tail])
    return (float(lo), float(hi))


def t_test_p(d) -> float:
    """Paired t-test p-value via `scipy.stats.ttest_rel` (d_i = b_i - a_i)."""
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    if np.all(d == d[0]):  # s = 0: t is ±inf (p = 0) unless every d_i is 0
        return 1.0 if abs(d[0]) <= TIE_TOLERANCE else 0.0
    return float(stats.ttest_rel(d, np.zeros_like(d)).pvalue)


def wilcoxon_p(d) -> float:
    """Wilcoxon signed-rank p-value via `scipy.stats.wilcoxon` (zero differences dropped, method auto)."""
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    d = np.where(np.abs(d) <= TIE_TOLERANCE, 0.0, d)
    if not d.any():
        return 1.0
    return float(stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def cohens_dz(d) -> float:
    """d_z = d̄ / s; 0 when every d_i is 0, ±inf when all d_i are equal and non-zero, NaN when n < 2."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2:
        return math.nan
    mean = float(d.mean())
    if np.all(d == d[0]):  # s = 0 (computing it would leave rounding noise, not 0)
        return 0.0 if abs(mean) <= TIE_TOLERANCE else math.copysign(math.inf, mean)
    return mean / float(d.std(ddof=1))


def wins_ties_losses(d) -> tuple[int, int, int]:
    """Questions where b beats a (d_i > 0), ties (|d_i| <= TIE_TOLERANCE) and losses (d_i < 0)."""
    d = np.asarray(d, dtype=np.float64)
    wins, losses = int(np.sum(d > TIE_TOLERANCE)), int(np.sum(d < -TIE_TOLERANCE))
    return wins, len(d) - wins - losses, losses


def test_p(d, test: str, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> float:
    """The p-value of the named test (`TESTS`) on the differences `d`."""
    if test == "t":
        return t_test_p(d)
    if test == "wilcoxon":
        return wilcoxon_p(d)
    if test == "permutation":
        return permutation_p(d, n_resamples, seed)
    if test == "bootstrap":
        return bootstrap_p(d, n_resamples, seed)
    raise StatsError(f"test must be one of {', '.join(TESTS)}; got {test!r}")


def paired_stats(a, b, test: str = PAIRED.test, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 confidence: float = 0.95) -> PairedStats:
    """Means, difference b - a with its bootstrap CI, the p-value of `test`, d_z and wins/ties/losses."""
    if test not in TESTS:
        raise StatsError(f"test must be one of {', '.join(TESTS)}; got {test!r}")
    if n_resamples < 1:
        raise StatsError(f"the number of resamples must be positive, got {n_resamples}")
    d = differences(a, b)
    n = len(d)
    means = [float(np.mean(x)) if n else math.nan for x in (a, b)]
    counts = wins_ties_losses(d)
    diff = float(d.mean()) if n else math.nan
    if n < 2:
        return PairedStats(n, *means, diff, (math.nan, math.nan), math.nan, math.nan, *counts, test, TOO_FEW_NOTE)
    if counts[0] == counts[2] == 0:
        return PairedStats(n, *means, 0.0, (0.0, 0.0), 1.0, 0.0, *counts, test, ALL_ZERO_NOTE)
    return PairedStats(n, *means, diff, bootstrap_ci(d, confidence, n_resamples, seed), test_p(d, test, n_resamples,
                       seed), cohens_dz(d), *counts, test)


def adjust(pvalues, method: str) -> list[float]:
    """Family-wise error corrections over m finite p-values (NaN stays NaN and does not count in m).

    - ``bonferroni``: p'_i = min(1, m p_i)
    - ``holm`` (step-down): with p_(1) <= ... <= p_(m) sorted, p'_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))
    - ``none``: p' = p
    """
    if method not in CORRECTIONS:
        raise StatsError(f"correction must be one of {', '.join(CORRECTIONS)}; got {method!r}")
    p = np.asarray(pvalues, dtype=np.float64)
    out = p.copy()
    finite = np.flatnonzero(~np.isnan(p))
    m = len(finite)
    if method == "none" or m == 0:
        return out.tolist()
    if method == "bonferroni":
        out[finite] = np.minimum(1.0, m * p[finite])
        return out.tolist()
    order = finite[np.argsort(p[finite], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out.tolist()
