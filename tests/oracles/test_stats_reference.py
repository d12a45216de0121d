"""Paired statistics to the last bit: resampling p-values and the CI against a slow reference that draws the same
documented random streams, and every edge the module docstring promises (ties at the tolerance, n = 2, no questions,
inputs that are not float arrays)."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats as scipy_stats

from ragretrieval.analysis import stats


def streams(seed: int, stream: int):
    """The documented streams of one user seed: 1 sign flips, 2 the bootstrap test, 3 the CI."""
    return np.random.default_rng([seed, stream])


def reference_permutation_p(d, resamples: int, seed: int, block: int) -> float:
    """Sign vectors drawn block by block (int8 draws depend on the block shape), each mean summed by hand."""
    rng, n, hits, done = streams(seed, 1), len(d), 0, 0
    observed = abs(sum(d) / n)
    tolerance = 1e-9 * (sum(abs(x) for x in d) + 1.0) / n
    while done < resamples:
        size = min(block, resamples - done)
        for signs in 1 - 2 * rng.integers(0, 2, size=(size, n), dtype=np.int8):
            hits += abs(sum(int(s) * x for s, x in zip(signs, d)) / n) >= observed - tolerance
        done += size
    return (1 + hits) / (1 + resamples)


def reference_bootstrap_means(d, resamples: int, seed: int, stream: int) -> list[float]:
    rng = streams(seed, stream)
    return [sum(d[i] for i in row) / len(d) for row in rng.integers(0, len(d), size=(resamples, len(d)))]


def reference_bootstrap_p(d, resamples: int, seed: int) -> float:
    mean = sum(d) / len(d)
    centred = [x - mean for x in d]
    tolerance = 1e-9 * (sum(abs(x) for x in d) + 1.0) / len(d)
    hits = sum(abs(m) >= abs(mean) - tolerance for m in reference_bootstrap_means(centred, resamples, seed, 2))
    return (1 + hits) / (1 + resamples)


D = [0.25, -0.5, 0.0, 1.0, 0.75, 0.25, -0.25, 0.5, 0.0, 0.25, 1.0]


@pytest.mark.parametrize("block", [None, 1, 7, 64])
def test_permutation_p_equals_the_reference_draw_for_draw(block):
    got = stats.permutation_p(np.array(D), 500, seed=3, block_size=block)
    expected = reference_permutation_p(D, 500, 3, block or stats.BLOCK_ELEMENTS // len(D))
    assert got == expected


def test_bootstrap_p_and_ci_equal_the_reference_draw_for_draw():
    d = np.array(D)
    assert stats.bootstrap_p(d, 400, seed=4, block_size=9) == reference_bootstrap_p(D, 400, 4)
    means = reference_bootstrap_means(D, 400, 4, 3)
    assert stats.bootstrap_ci(d, 0.9, 400, seed=4) == tuple(np.quantile(means, [0.05, 0.95]))
    assert stats.bootstrap_ci(d[:2], 0.8, 300, seed=1) == tuple(np.quantile(
        reference_bootstrap_means(D[:2], 300, 1, 3), [0.1, 0.9]))  # two questions are enough for a CI


def test_the_entry_points_pass_the_seed_and_resamples_on():
    d = np.random.default_rng(1).normal(0.1, 0.3, 15)  # continuous: two seeds never give the same CI by chance
    a = np.zeros(len(d))
    for test, direct in (("permutation", stats.permutation_p), ("bootstrap", stats.bootstrap_p)):
        assert stats.test_p(d, test, 300, seed=7) == direct(d, 300, seed=7)
        result = stats.paired_stats(a, d, test, n_resamples=300, seed=7, confidence=0.8)
        assert result.p == direct(d, 300, seed=7)
        assert result.ci == stats.bootstrap_ci(d, 0.8, 300, seed=7)
        assert result.ci != stats.bootstrap_ci(d, 0.8, 300, seed=0)
        assert (result.n, result.test, result.note) == (len(d), test, None)
        assert result.effect_size == stats.cohens_dz(d) and (result.mean_a, result.mean_b) == (0.0, np.mean(d))
    assert stats.paired_stats(a[:2], d[:2], "t", n_resamples=1).ci == stats.bootstrap_ci(d[:2], 0.95, 1, 0)


@pytest.mark.parametrize("delta, extreme", [(0.8e-9, True), (1.2e-9, False)])
def test_the_tie_tolerance_is_one_billionth_of_the_total_difference(delta, extreme):
    """d = (1, δ): flipping δ's sign moves |mean| down by exactly δ, and the tolerance is 1e-9 (|1| + |δ| + 1) / 2,
    so the flip counts as extreme when δ is below about 1e-9. In the bootstrap test the resamples that draw one
    index twice have |mean| = (1 - δ) / 2, again δ below the observed (1 + δ) / 2; the others have mean 0."""
    d = np.array([1.0, delta])
    permutation = stats.permutation_p(d, 2000, seed=0)
    bootstrap = stats.bootstrap_p(d, 2000, seed=0)
    if extreme:
        assert permutation == 1.0 and 0.4 < bootstrap < 0.6
    else:
        assert 0.4 < permutation < 0.6 and bootstrap == 1 / 2001


def test_blocks_cover_every_resample_and_hold_at_most_the_block_budget():
    assert list(stats._blocks(10, 3, 4)) == [4, 4, 2]
    assert list(stats._blocks(stats.BLOCK_ELEMENTS + 1, 1, None)) == [stats.BLOCK_ELEMENTS, 1]
    assert list(stats._blocks(3, stats.BLOCK_ELEMENTS * 2, None)) == [1, 1, 1]  # one row even when it is over
    assert list(stats._blocks(5, 0, None)) == [5]


def test_edges_of_the_t_test_effect_size_and_counts():
    tie = stats.TIE_TOLERANCE
    assert stats.t_test_p(np.zeros(3)) == 1.0 and stats.t_test_p(np.full(3, tie)) == 1.0
    assert stats.t_test_p(np.full(3, 2 * tie)) == 0.0
    assert stats.t_test_p(np.array([0.0])) == 1.0 and stats.t_test_p(np.array([0.5])) == 0.0
    assert stats.cohens_dz([0.0, 0.0, 0.0]) == 0.0 and stats.cohens_dz([tie, tie]) == 0.0
    assert stats.cohens_dz([-0.2, -0.2]) == -math.inf
    assert stats.cohens_dz([0.1, 0.3]) == pytest.approx(0.2 / np.std([0.1, 0.3], ddof=1))
    assert math.isnan(stats.cohens_dz([0.3]))
    assert stats.wins_ties_losses([tie, -tie, 2 * tie, -2 * tie, 0.0]) == (1, 3, 1)


def test_wilcoxon_treats_differences_within_the_tolerance_as_zero():
    tie = stats.TIE_TOLERANCE
    d = np.array([0.5, -0.25, 0.75, tie, -tie / 2, 1.0, 0.125, -0.5])
    expected = scipy_stats.wilcoxon(np.where(np.abs(d) <= tie, 0.0, d), zero_method="wilcox").pvalue
    assert stats.wilcoxon_p(d) == pytest.approx(expected, abs=0)
    assert stats.wilcoxon_p(np.array([tie, -tie, 0.0])) == 1.0


def test_paired_stats_with_two_questions_and_with_none():
    two = stats.paired_stats([0.0, 0.5], [0.25, 1.0], "t")
    assert two.note is None and not math.isnan(two.p) and not math.isnan(two.ci[0])
    assert two.effect_size == stats.cohens_dz([0.25, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "mean of empty slice" noise for an empty comparison
        none = stats.paired_stats([], [], "wilcoxon")
    assert none.n == 0 and none.test == "wilcoxon" and none.note == stats.TOO_FEW_NOTE
    assert all(math.isnan(x) for x in (none.mean_a, none.mean_b, none.diff, none.p, none.effect_size, *none.ci))
    zero = stats.paired_stats([0.5, 0.5], [0.5, 0.5], "bootstrap")
    assert (zero.n, zero.test, zero.mean_a, zero.diff, zero.p) == (2, "bootstrap", 0.5, 0.0, 1.0)


def test_bad_arguments_are_named():
    with pytest.raises(stats.StatsError, match=r"^test must be one of t, wilcoxon, permutation, bootstrap; got 'z'$"):
        stats.paired_stats([0.1, 0.2], [0.2, 0.3], "z")
    with pytest.raises(stats.StatsError, match=r"^test must be one of t, wilcoxon, permutation, bootstrap; got 'z'$"):
        stats.test_p(np.array([0.1, 0.2]), "z")
    with pytest.raises(stats.StatsError, match=r"^the number of resamples must be positive, got 0$"):
        stats.paired_stats([0.1, 0.2], [0.2, 0.3], "t", n_resamples=0)
    assert stats.paired_stats([0.1, 0.2], [0.2, 0.4], "permutation", n_resamples=1).p in (0.5, 1.0)
    nan = float("nan")
    with pytest.raises(stats.StatsError, match=r"^6 NaN value\(s\) in run a at position\(s\) \[0, 1, 2, 3, 4\]$"):
        stats.differences([nan] * 6 + [0.1], [0.1] * 7)


def test_values_are_read_as_floats_whatever_sequence_holds_them():
    """Per-question values may come as numeric strings (a CSV) or Decimals (JSON read exactly), p-values as None
    for a missing test: each is read as float64 (None as NaN)."""
    floats = [0.0, 0.25, 1.0, 0.5]
    texts, decimals = [str(x) for x in floats], [Decimal(str(x)) for x in floats]
    other = [0.5, 0.5, 0.25, 1.0]
    d = np.array(other) - np.array(floats)
    assert list(stats.differences(texts, [str(x) for x in other])) == list(d)
    assert list(stats.differences(decimals, other)) == list(d)
    for function in (stats.permutation_p, stats.bootstrap_p, stats.bootstrap_ci, stats.t_test_p, stats.wilcoxon_p,
                     stats.cohens_dz, stats.wins_ties_losses):
        assert function([str(x) for x in d]) == function(d), function.__name__
    assert stats.adjust([0.01, None, 0.04], "holm")[::2] == [0.02, 0.04]
