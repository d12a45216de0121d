"""`bootstrap_ratio_ci` (the CI of RAG-IFEval's instance-level means) against a reference written from its docstring:
questions drawn with replacement from the documented stream 4 of the seed, the ratio Σ sums / Σ counts of each
resample, and the (1 ± confidence) / 2 percentiles of those ratios. Values are multiples of 1/8 so every sum is exact
in any order and the reference can be compared to the last bit."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from ragretrieval.analysis import stats

SUMS = [1.0, 0.5, 2.0, 0.0, 1.5, 3.0, 0.25, 1.0, 0.75]  # passed conditions (or scores) per question
COUNTS = [2, 1, 3, 1, 2, 4, 1, 1, 3]  # conditions per question


def reference_ratios(sums, counts, resamples: int, seed: int) -> list[float]:
    """One ratio per resample; a resample whose questions hold no instance at all (Σ counts = 0, Σ sums = 0) is 0."""
    rng, n, ratios = np.random.default_rng([seed, 4]), len(sums), []
    for row in rng.integers(0, n, size=(resamples, n)):
        total, count = sum(sums[i] for i in row), sum(counts[i] for i in row)
        ratios.append(total / count if count else 0.0)
    return ratios


def reference_ci(sums, counts, confidence: float, resamples: int, seed: int) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    return tuple(float(x) for x in np.quantile(reference_ratios(sums, counts, resamples, seed), [tail, 1 - tail]))


def test_the_default_is_a_95_percent_interval_of_10000_resamples_with_seed_0():
    got = stats.bootstrap_ratio_ci(np.array(SUMS), np.array(COUNTS))
    assert got == reference_ci(SUMS, COUNTS, 0.95, 10_000, 0)
    low, high = got
    assert low < sum(SUMS) / sum(COUNTS) < high


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.99])
@pytest.mark.parametrize("seed", [0, 5])
def test_other_confidence_levels_and_seeds(confidence, seed):
    got = stats.bootstrap_ratio_ci(SUMS, COUNTS, confidence=confidence, n_resamples=700, seed=seed)
    assert got == reference_ci(SUMS, COUNTS, confidence, 700, seed)
    assert got[0] < got[1]


def test_the_ratio_is_of_sums_not_a_mean_of_ratios():
    """Two questions: 0 of 1 condition and 3 of 3. Resamples (0, 0), (0, 1) / (1, 0), (1, 1) give 0, 3/4, 1
    (a mean of per-question ratios would give 1/2 for the mixed ones)."""
    ratios = set(reference_ratios([0.0, 3.0], [1, 3], 200, 2))
    assert ratios == {0.0, 0.75, 1.0}
    assert stats.bootstrap_ratio_ci([0.0, 3.0], [1, 3], 0.5, 200, 2) == reference_ci([0.0, 3.0], [1, 3], 0.5, 200, 2)


def test_counts_need_not_be_whole_numbers():
    """Weights below 1 (a weighted mean): the ratio is still Σ sums / Σ weights, never a sum divided by 1."""
    sums, weights = [0.125, 0.0, 0.25], [0.25, 0.25, 0.25]
    got = stats.bootstrap_ratio_ci(sums, weights, 0.9, 300, 1)
    assert got == reference_ci(sums, weights, 0.9, 300, 1)
    assert got[1] > 0.75  # Σ weights is 0.75: an interval of sums alone would stay at or below 0.375


def test_questions_without_instances_count_for_nothing():
    """Count 0 (and sum 0): a question adds nothing to either sum; a resample of only such questions gives 0."""
    sums, counts = [0.0, 0.0, 2.0, 0.0], [0, 0, 4, 0]
    ratios = reference_ratios(sums, counts, 400, 3)
    assert set(ratios) == {0.0, 0.5}  # at least one resample draws only empty questions (probability (3/4)^4)
    assert stats.bootstrap_ratio_ci(sums, counts, 0.6, 400, 3) == reference_ci(sums, counts, 0.6, 400, 3)


def test_fewer_than_two_questions_have_no_interval_and_two_do():
    for sums, counts in (([], []), ([1.0], [2])):
        low, high = stats.bootstrap_ratio_ci(sums, counts)
        assert math.isnan(low) and math.isnan(high)
    got = stats.bootstrap_ratio_ci([1.0, 0.0], [2, 1], 0.8, 300, 4)
    assert got == reference_ci([1.0, 0.0], [2, 1], 0.8, 300, 4)
    assert got == (0.0, 1 / 2)


def test_resamples_spanning_several_blocks_continue_the_same_stream():
    """300 questions make blocks of 2**20 // 300 = 3495 resamples: 4000 resamples are one full block and a part,
    and they must be the first 4000 draws of the stream, as one draw of all of them gives."""
    n, resamples = 300, 4000
    assert list(stats._blocks(resamples, n, None)) == [3495, 505]
    values = np.random.default_rng(11)
    sums = values.integers(0, 9, n) / 8
    counts = values.integers(1, 5, n).astype(np.float64)
    index = np.random.default_rng([6, 4]).integers(0, n, size=(resamples, n))
    ratios = sums[index].sum(axis=1) / counts[index].sum(axis=1)
    assert stats.bootstrap_ratio_ci(sums, counts, 0.9, resamples, 6) == tuple(np.quantile(ratios, [0.05, 0.95]))


def test_values_are_read_as_floats_whatever_sequence_holds_them():
    """Sums and counts from a CSV (strings) or exact JSON (Decimals) give the interval of their float values."""
    expected = reference_ci(SUMS, COUNTS, 0.8, 300, 2)
    assert stats.bootstrap_ratio_ci([str(x) for x in SUMS], COUNTS, 0.8, 300, 2) == expected
    assert stats.bootstrap_ratio_ci(SUMS, [str(c) for c in COUNTS], 0.8, 300, 2) == expected
    assert stats.bootstrap_ratio_ci([Decimal(str(x)) for x in SUMS], [Decimal(c) for c in COUNTS], 0.8, 300, 2) \
        == expected
