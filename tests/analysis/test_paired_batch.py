"""`paired_stats_many` gives `paired_stats`' numbers for many metrics at once (analysis/paired_batch.py): the same
draws (one seed), counted once and applied to every metric as a matrix product."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragretrieval.analysis import paired_batch
from ragretrieval.analysis.paired_batch import paired_stats_many
from ragretrieval.analysis.stats import StatsError, paired_stats


def close(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-12, abs=1e-12)


def same(one, other) -> bool:
    return (one.n, one.wins, one.ties, one.losses, one.note, one.test) == (
        other.n, other.wins, other.ties, other.losses, other.note, other.test) and all(
        close(x, y) for x, y in zip((one.mean_a, one.mean_b, one.diff, one.p, one.effect_size, *one.ci),
                                    (other.mean_a, other.mean_b, other.diff, other.p, other.effect_size, *other.ci)))


@pytest.mark.parametrize("test", ["t", "wilcoxon", "permutation", "bootstrap"])
def test_many_metrics_at_once_give_the_numbers_of_one_at_a_time(test):
    rng = np.random.default_rng(5)
    a = rng.random((60, 6))
    b = np.clip(a + rng.normal(0.03, 0.2, a.shape), 0, 1)
    pairs = [(a[:, j], b[:, j]) for j in range(6)]
    pairs += [(a[:40, 0], b[:40, 0]),  # another n: its own draws
              (a[:, 1], a[:, 1]),  # no difference at all
              (a[:1, 2], b[:1, 2]),  # too few to test
              (np.round(a[:, 3]), np.round(b[:, 3]))]  # 0/1 values, many ties
    paired_batch._kept.clear()
    together = paired_stats_many(pairs, test, n_resamples=700, seed=3, confidence=0.9)
    alone = [paired_stats(x, y, test, n_resamples=700, seed=3, confidence=0.9) for x, y in pairs]
    assert all(same(t, o) for t, o in zip(together, alone))
    again = paired_stats_many(pairs[:2], test, n_resamples=700, seed=3, confidence=0.9)  # kept draws reused
    assert all(same(t, o) for t, o in zip(again, alone[:2]))
    other_seed = paired_stats_many(pairs[:1], test, n_resamples=700, seed=4, confidence=0.9)[0]
    assert other_seed.ci != together[0].ci


def test_bad_settings_are_refused_as_paired_stats_refuses_them():
    with pytest.raises(StatsError, match="test must be one of"):
        paired_stats_many([([0.1, 0.2], [0.2, 0.3])], "z")
    with pytest.raises(StatsError, match="resamples must be positive"):
        paired_stats_many([([0.1, 0.2], [0.2, 0.3])], "t", n_resamples=0)
    with pytest.raises(StatsError, match="NaN"):
        paired_stats_many([([0.1, float("nan")], [0.2, 0.3])])
    assert paired_stats_many([]) == []
