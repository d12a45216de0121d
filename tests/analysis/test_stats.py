"""Paired statistics against SciPy, exact enumeration, hand-computed corrections and bootstrap coverage."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from ragretrieval.analysis import stats


def metric_like(rng, n, levels=(0, 0.25, 0.5, 1.0)):
    """Discrete values in [0, 1] like per-question metrics: many ties and zero differences."""
    return rng.choice(levels, size=n), rng.choice(levels, size=n)


@pytest.mark.parametrize("seed", range(5))
def test_t_test_agrees_with_scipy_and_the_formula(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(40), rng.random(40)
    d = b - a
    ours = stats.paired_stats(a, b, "t").p
    assert ours == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue, abs=1e-12)
    t = d.mean() / (d.std(ddof=1) / math.sqrt(len(d)))
    assert ours == pytest.approx(2 * scipy_stats.t.sf(abs(t), len(d) - 1), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_wilcoxon_agrees_with_scipy_with_ties_and_zeros(seed):
    rng = np.random.default_rng(seed)
    a, b = metric_like(rng, 30)
    expected = scipy_stats.wilcoxon(b, a, zero_method="wilcox").pvalue
    assert stats.paired_stats(a, b, "wilcoxon").p == pytest.approx(expected, abs=1e-12)
    a, b = rng.random(12), rng.random(12)  # small, untied: SciPy's exact distribution
    assert stats.wilcoxon_p(b - a) == pytest.approx(scipy_stats.wilcoxon(b, a).pvalue, abs=1e-12)


def exact_sign_flip_p(d):
    """All 2^n sign vectors: the exact permutation p-value."""
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=len(d))))
    sums = signs @ d
    return float(np.mean(np.abs(sums) >= abs(d.sum()) - 1e-9 * (np.abs(d).sum() + 1)))


@pytest.mark.parametrize("n,seed", [(6, 0), (9, 1), (12, 2), (16, 3), (16, 4)])
def test_permutation_agrees_with_exact_enumeration(n, seed):
    """|p_MC - p_exact| <= 4 SE + 1/(R + 1): SE = sqrt(p(1-p)/R) is the binomial standard error of the hit count,
    1/(R + 1) bounds the bias of counting the observed data as a resample; 4 SE makes a false alarm ~1e-4."""
    rng = np.random.default_rng(seed)
    a, b = metric_like(rng, n)
    b = np.where(rng.random(n) < 0.5, np.minimum(b + 0.25, 1), b)  # a real but small effect
    d = b - a
    exact = exact_sign_flip_p(d)
    resamples = 10_000
    got = stats.permutation_p(d, resamples, seed=seed, block_size=777)  # odd block size: blocks must add up
    tolerance = 4 * math.sqrt(exact * (1 - exact) / resamples) + 1 / (resamples + 1)
    assert abs(got - exact) <= tolerance, (got, exact, tolerance)


def test_permutation_and_bootstrap_are_seeded():
    d = np.random.default_rng(0).normal(0.1, 0.3, 25)
    assert stats.permutation_p(d, 2000, seed=5) == stats.permutation_p(d, 2000, seed=5)
    assert stats.bootstrap_p(d, 2000, seed=5) == stats.bootstrap_p(d, 2000, seed=5)
    assert stats.bootstrap_ci(d, n_resamples=2000, seed=5) == stats.bootstrap_ci(d, n_resamples=2000, seed=5)


def test_bootstrap_test_separates_effect_from_noise():
    rng = np.random.default_rng(1)
    strong = rng.normal(0.3, 0.2, 40)
    assert stats.bootstrap_p(strong) < 0.001
    # under H0, p-values are roughly uniform: about 5% fall below 0.05 (50 trials: allow 0..8)
    small = sum(stats.bootstrap_p(rng.normal(0, 1, 30), 1000, seed=i) < 0.05 for i in range(50))
    assert small <= 8


def test_bootstrap_ci_coverage():
    """1000 samples of n = 30 from N(0.1, 0.3): the 95% percentile CI covers 0.1 about 93% of the time (the
    percentile bootstrap under-covers a little at n = 30); 0.90..0.97 is about 4 binomial SEs (0.008) either side."""
    rng = np.random.default_rng(7)
    covered = 0
    for trial in range(1000):
        d = rng.normal(0.1, 0.3, 30)
        lo, hi = stats.bootstrap_ci(d, n_resamples=1000, seed=trial)
        covered += lo <= 0.1 <= hi
    assert 0.90 <= covered / 1000 <= 0.97


def test_ci_contains_the_mean_difference():
    a, b = metric_like(np.random.default_rng(3), 50)
    result = stats.paired_stats(a, b, "permutation")
    assert result.ci[0] <= result.diff <= result.ci[1]


def test_corrections_against_hand_computed_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert stats.adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.adjust(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert stats.adjust(p, "none") == p
    assert stats.adjust([0.5, 0.4], "holm") == pytest.approx([0.8, 0.8])  # capped by the running max, not 1
    assert stats.adjust([0.6, 0.3], "bonferroni") == pytest.approx([1.0, 0.6])  # capped at 1
    held = stats.adjust([0.02, float("nan"), 0.01], "holm")  # NaN stays NaN and does not count in m
    assert math.isnan(held[1]) and held[0] == pytest.approx(0.02) and held[2] == pytest.approx(0.02)
    with pytest.raises(stats.StatsError, match="correction must be one of holm, bonferroni, none"):
        stats.adjust(p, "fdr")


@pytest.mark.parametrize("test", stats.TESTS)
def test_all_zero_differences_give_p_one(test):
    a = np.array([0.5, 1.0, 0.0, 0.25])
    result = stats.paired_stats(a, a.copy(), test)
    assert (result.p, result.diff, result.ci, result.effect_size) == (1.0, 0.0, (0.0, 0.0), 0.0)
    assert (result.wins, result.ties, result.losses) == (0, 4, 0)
    assert result.note == stats.ALL_ZERO_NOTE


def test_fewer_than_two_questions_and_nan():
    result = stats.paired_stats([0.5], [1.0], "t")
    assert math.isnan(result.p) and math.isnan(result.ci[0]) and result.note == stats.TOO_FEW_NOTE
    assert result.diff == 0.5 and result.wins == 1
    with pytest.raises(stats.StatsError, match=r"1 NaN value\(s\) in run b at position\(s\) \[2\]"):
        stats.paired_stats([0.1, 0.2, 0.3], [0.1, 0.2, float("nan")])
    with pytest.raises(stats.StatsError, match="same length"):
        stats.paired_stats([0.1, 0.2], [0.1])


def test_effect_size_and_counts():
    a = np.array([0.0, 0.5, 1.0, 0.5, 0.25])
    b = np.array([0.5, 0.5, 0.75, 1.0, 0.5])
    d = b - a
    result = stats.paired_stats(a, b, "t")
    assert result.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert (result.wins, result.ties, result.losses) == (3, 1, 1)
    assert stats.cohens_dz([0.2, 0.2, 0.2]) == math.inf  # constant non-zero differences
    assert stats.t_test_p(np.array([0.2, 0.2, 0.2])) == 0.0


def test_resampling_memory_stays_flat():
    """n = 1000 questions, R = 5000: all resamples at once would take 80 MB (int64 indices and float64 values);
    blocks of 2^20 values keep the peak near 16 MB."""
    import tracemalloc

    d = np.random.default_rng(0).normal(0, 1, 1000)
    tracemalloc.start()
    try:
        stats.permutation_p(d, 5000)
        stats.bootstrap_p(d, 5000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 28 * 2**20, peak
