"""Calibrated judge scores (analysis/calibration.py): the figures equal ppi-python's to 1e-9; in a simulation with a
known truth and a biased judge the calibrated 95% interval covers the truth in 93-97 % of the draws, the judge's own
interval does not, and it is narrower than the labels' alone; and every bad input is refused by name."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from ppi_py.baselines import classical_mean_ci

from ragretrieval.analysis.calibration import CalibrationError, calibrated_mean, classical_mean, ppi_mean

TOLERANCE = 1e-9


def data(kind: str, n: int, big_n: int, seed: int):
    """Labels, the judge on them, the judge on unlabelled answers: yes/no, 1-5 scores, or shares."""
    rng = np.random.default_rng(seed)
    if kind == "binary":
        y = (rng.random(n + big_n) < 0.6).astype(float)
        f = np.where(rng.random(n + big_n) < 0.8, y, 1 - y)
    elif kind == "score5":
        y = rng.integers(1, 6, n + big_n).astype(float)
        f = np.clip(y + rng.integers(-1, 2, n + big_n) + (rng.random(n + big_n) < 0.3), 1, 5)
    else:
        y = rng.random(n + big_n)
        f = np.clip(y + rng.normal(0.1, 0.2, n + big_n), 0, 1)
    return y[:n], f[:n], f[n:]


def one(value) -> float:
    return float(np.ravel(value)[0])


@pytest.mark.parametrize("kind", ["binary", "score5", "share"])
@pytest.mark.parametrize("n, big_n", [(10, 3), (57, 500), (200, 40)])
@pytest.mark.parametrize("lam", [None, 1.0, 0.4, 0.0])
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_equals_ppi_python(kind, n, big_n, lam, confidence):
    y, f, g = data(kind, n, big_n, seed=n + big_n)
    mean, (low, high), tuned = ppi_mean(y, f, g, lam, confidence)
    alpha = 1 - confidence
    assert abs(float(mean) - one(ppi_py.ppi_mean_pointestimate(y, f, g, lam=lam))) < TOLERANCE
    ref_low, ref_high = ppi_py.ppi_mean_ci(y, f, g, alpha=alpha, lam=lam)
    assert abs(float(low) - one(ref_low)) < TOLERANCE and abs(float(high) - one(ref_high)) < TOLERANCE
    assert 0 <= float(tuned) <= 1 and (lam is None or float(tuned) == lam)
    mean, (low, high) = classical_mean(y, confidence)
    ref_low, ref_high = classical_mean_ci(y, alpha=alpha)
    assert abs(float(low) - one(ref_low)) < TOLERANCE and abs(float(high) - one(ref_high)) < TOLERANCE


def test_calibrated_mean_gives_the_three_rows_from_question_ids():
    y, f, g = data("binary", 40, 160, seed=3)
    judge = {f"q{i}": v for i, v in enumerate(np.concatenate([f, g]))}
    labels = {f"q{i}": v for i, v in enumerate(y)}
    judge["q-failed"] = None  # a verdict that failed: in no row
    c = calibrated_mean(judge, labels, metric="response/llm_judged/correctness/rating")
    assert (c.labelled, c.unlabelled, c.judge.n, c.labels.n, c.calibrated.n) == (40, 160, 200, 40, 200)
    ref = ppi_py.ppi_mean_ci(y, f, g, alpha=0.05)
    assert abs(c.calibrated.mean - one(ppi_py.ppi_mean_pointestimate(y, f, g))) < TOLERANCE
    assert abs(c.calibrated.ci[0] - one(ref[0])) < TOLERANCE and abs(c.calibrated.ci[1] - one(ref[1])) < TOLERANCE
    assert abs(c.judge.mean - np.concatenate([f, g]).mean()) < TOLERANCE and c.labels.mean == pytest.approx(y.mean())
    ref = classical_mean_ci(np.concatenate([f, g]), alpha=0.05)
    assert abs(c.judge.ci[0] - one(ref[0])) < TOLERANCE
    assert c.method == "PPI++ (power-tuned)" and c.to_json()["calibrated"]["n"] == 200
    classic = calibrated_mean(judge, labels, lam=1)
    assert classic.lam == 1.0 and classic.method.startswith("PPI (classic")
    assert abs(classic.calibrated.mean - one(ppi_py.ppi_mean_pointestimate(y, f, g, lam=1))) < TOLERANCE


def test_a_biased_judge_is_corrected_with_honest_coverage():
    """1,000 draws, each of 2,200 answers whose true value is yes with p = 0.6; a person labels 200 of them; the judge
    says yes to 90 % of the true yeses and to 30 % of the noes, so its mean is 0.66, not 0.6."""
    draws, n, big_n, truth = 1000, 200, 2000, 0.6
    rng = np.random.default_rng(20231129)
    y = (rng.random((draws, n + big_n)) < truth).astype(float)
    judge = np.where(y == 1, rng.random(y.shape) < 0.9, rng.random(y.shape) < 0.3).astype(float)
    _, (low, high), lam = ppi_mean(y[:, :n], judge[:, :n], judge[:, n:])
    _, (judge_low, judge_high) = classical_mean(judge)
    _, (labels_low, labels_high) = classical_mean(y[:, :n])
    covered = float(np.mean((low <= truth) & (truth <= high)))
    assert 0.93 <= covered <= 0.97, covered
    assert float(np.mean((judge_low <= truth) & (truth <= judge_high))) < 0.05  # the judge alone misses it
    assert float(np.mean(high - low)) < 0.9 * float(np.mean(labels_high - labels_low))  # narrower than labels alone
    assert ((0 < lam) & (lam < 1)).all()


def test_edge_cases_are_said_not_guessed():
    labels = {"a": 1.0, "b": 0.0, "c": 1.0}
    constant = calibrated_mean({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}, labels)
    assert constant.lam == 0.0 and constant.calibrated.mean == pytest.approx(2 / 3)  # a judge that never varies
    every = calibrated_mean({"a": 1, "b": 1, "c": 0}, labels)
    assert every.unlabelled == 0 and "nothing to calibrate with" in every.notes[0]
    assert every.calibrated.mean == every.labels.mean
    stray = calibrated_mean({"a": 1, "b": 0, "d": 1, "e": 0}, {**labels, "x": 0.0})
    assert stray.labelled == 2 and stray.labels.n == 4 and "2 label(s) are on answers without a judge value" in \
        stray.notes[0]
    assert any("optimistic" in note for note in stray.notes)


@pytest.mark.parametrize("judge, labels, options, message", [
    ({"a": 1, "b": 0}, {"a": 1}, {}, "at least 2 labels; got 1"),
    ({"a": 1, "b": 0}, {}, {}, "at least 2 labels; got 0"),
    ({"a": 1, "z": 0}, {"a": 1, "b": 0}, {}, "at least 2 labelled answers the judge judged; got 1 of 2"),
    ({"a": 1, "b": 0, "c": 1}, {"a": math.inf, "b": 0}, {}, "the label of question 'a' is not a finite number"),
    ({"a": "yes", "b": 0, "c": 1}, {"a": 1, "b": 0}, {}, "the judge's value of question 'a' is not a finite"),
    ({"a": True, "b": 0, "c": 1}, {"a": 1, "b": 0}, {}, "the judge's value of question 'a' is not a finite"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"lam": 1.5}, "lam must be a number from 0 to 1"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"lam": -0.1}, "lam must be a number from 0 to 1"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"lam": "1"}, "lam must be a number from 0 to 1"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"confidence": 1.0}, "confidence must lie strictly between"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"confidence": 0}, "confidence must lie strictly between"),
    ({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 0}, {"confidence": 95}, "confidence must lie strictly between"),
])
def test_bad_values_are_refused(judge, labels, options, message):
    with pytest.raises(CalibrationError, match=message):
        calibrated_mean(judge, labels, **options)


def test_the_kernel_refuses_mismatched_or_non_finite_arrays():
    with pytest.raises(CalibrationError, match="differ in shape"):
        ppi_mean([1, 0, 1], [1, 0], [1])
    with pytest.raises(CalibrationError, match="unlabelled judge values must be finite"):
        ppi_mean([1, 0], [1, 0], [np.nan])
    with pytest.raises(CalibrationError, match="at least 2 labelled answers and 1 unlabelled one; got 2 and 0"):
        ppi_mean([1, 0], [1, 0], [])
