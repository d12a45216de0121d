"""Active statistical inference (analysis/active_inference.py): the estimator equals its formula written out term by
term; with answers drawn uncertain-first by priority sampling, its mean over many draws is the labels' mean (no bias,
where PPI that ignores the draw is biased); every answer keeps a chance to be drawn; bad inputs are refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from ragretrieval.analysis.active_inference import (
    active_mean,
    draw_order,
    inclusion_probabilities,
    sampling_weights,
    uniform_keys,
)
from ragretrieval.analysis.calibration import CalibrationError, ppi_mean


def population(n: int, seed: int):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.6).astype(float)
    score = 1 / (1 + np.exp(-(2.0 * (2 * y - 1) + 1.5 * rng.standard_normal(n))))
    return y, score, 1 - 2 * np.abs(score - 0.5)


def review(y, weights, keys, k):
    order = draw_order(weights, keys)
    labels = np.full(len(y), np.nan)
    labels[order[:k]] = y[order[:k]]
    return labels, inclusion_probabilities(weights, keys, k)


def direct(f, labels, pi, lam):
    """The estimator as the module's docstring writes it, one answer at a time."""
    terms = []
    for fi, yi, p in zip(f, labels, pi):
        term = lam * fi
        if not math.isnan(yi):
            term += (yi - lam * fi) / p
        terms.append(term)
    mean = sum(terms) / len(terms)
    sd = math.sqrt(sum((t - mean) ** 2 for t in terms) / (len(terms) - 1))
    return mean, sd / math.sqrt(len(terms))


@pytest.mark.parametrize("lam", [0.0, 0.35, 1.0, None])
def test_the_estimate_is_the_formula_term_by_term(lam):
    y, f, u = population(300, 1)
    weights = sampling_weights(u)
    labels, pi = review(y, weights, uniform_keys(range(300), "seed"), 60)
    est = active_mean(f, labels, pi, lam=lam)
    if lam is None:  # the tuned λ minimises the variance of the terms: no λ on a fine grid does better
        grid = np.linspace(0, 1, 201)
        assert est.se <= min(direct(f, labels, pi, g)[1] for g in grid) + 1e-12
        lam = est.lam
    mean, se = direct(f, labels, pi, lam)
    assert est.mean == pytest.approx(mean, abs=1e-12) and est.se == pytest.approx(se, abs=1e-12)
    half = norm.ppf(0.975) * se
    assert est.ci == pytest.approx((mean - half, mean + half), abs=1e-12)
    assert est.labelled == 60 and est.total == 300


def test_uniform_weights_and_every_answer_labelled_give_the_labels_mean():
    y, f, _ = population(50, 2)
    est = active_mean(f, y, np.ones(50))
    assert est.mean == pytest.approx(y.mean(), abs=1e-12)


def test_uniform_weights_agree_with_ppi_on_a_uniform_subset_at_lam_0():
    """λ = 0 and equal π = n/N: the HT mean of the labels, ppi's labels-only mean up to the π estimate."""
    y, f, _ = population(400, 3)
    keys = uniform_keys(range(400), "u")
    labels, pi = review(y, np.ones(400), keys, 100)
    assert np.allclose(pi, pi[0])  # uniform weights: one probability for all
    est = active_mean(f, labels, pi, lam=0.0)
    assert est.mean == pytest.approx(np.nansum(labels) / pi[0] / 400, abs=1e-12)


def test_inclusion_probabilities_grow_with_the_weight_and_are_one_when_all_are_labelled():
    weights = sampling_weights([0.0, 0.5, 1.0, 1.0])
    keys = np.array([0.3, 0.6, 0.1, 0.9])
    pi = inclusion_probabilities(weights, keys, 2)
    assert pi[0] < pi[1] < pi[2] == pi[3] <= 1
    assert list(inclusion_probabilities(weights, keys, 4)) == [1, 1, 1, 1]
    assert sampling_weights([0.0]).min() > 0  # no answer is never drawn


@pytest.mark.slow  # thousands of simulated draws: 5 s each, in `make test` rather than the fast loop
@pytest.mark.parametrize("lam", [1.0, 0.5])
def test_unbiased_over_many_uncertain_first_draws_where_ppi_is_not(lam):
    y, f, u = population(60, 4)
    weights = sampling_weights(u)
    rng = np.random.default_rng(5)
    active, naive = [], []
    for _ in range(20_000):
        labels, pi = review(y, weights, rng.random(60), 15)
        active.append(active_mean(f, labels, pi, lam=lam).mean)
        seen = np.isfinite(labels)
        naive.append(float(ppi_mean(labels[seen], f[seen], f[~seen], lam=lam)[0]))
    active, naive = np.array(active), np.array(naive)
    se = active.std() / math.sqrt(len(active))
    assert abs(active.mean() - y.mean()) < 4 * se, (active.mean(), y.mean(), se)
    # PPI, reading the uncertain-first labels as a uniform subset, is off by many standard errors
    assert abs(naive.mean() - y.mean()) > 10 * naive.std() / math.sqrt(len(naive))


def test_keys_are_reproducible_and_uniform():
    keys = uniform_keys([f"q{i}" for i in range(4000)], "eval-1")
    assert np.array_equal(keys, uniform_keys([f"q{i}" for i in range(4000)], "eval-1"))
    assert not np.array_equal(keys, uniform_keys([f"q{i}" for i in range(4000)], "eval-2"))
    assert 0 < keys.min() and keys.max() < 1 and abs(keys.mean() - 0.5) < 0.02


@pytest.mark.parametrize("args, message", [
    (([0.5, 0.5], [1.0, np.nan], [1.0, 1.0]), "at least 2 labelled"),
    (([0.5, 0.5], [1.0, 0.0], [1.0]), "one length"),
    (([0.5, np.nan], [1.0, 0.0], [1.0, 1.0]), "finite"),
    (([0.5, 0.5], [1.0, 0.0], [0.0, 1.0]), "probability in"),
])
def test_bad_inputs_are_refused_by_name(args, message):
    with pytest.raises(CalibrationError, match=message):
        active_mean(*args)
    with pytest.raises(CalibrationError, match="lam"):
        active_mean([0.5, 0.5], [1.0, 0.0], [1.0, 1.0], lam=2)
