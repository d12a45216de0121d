"""Calibrated judge scores: the mean of a judge's per-question metric, corrected by a person's labels on some of the
answers, with a valid confidence interval: prediction-powered inference (PPI; Angelopoulos, Bates, Fannjiang, Jordan
and Zrnic, Science 2023) and its power-tuned form PPI++ (Angelopoulos, Duchi and Zrnic, 2023).
docs/answers/calibrate.md works an example.

Notation: a person's labels Y_1..Y_n on n answers, the judge's values on the same answers f_1..f_n, and the judge's
values on the N answers without a label g_1..g_N (labels and judge on the same scale: 0/1, 1-5, a share). σ̂(x) is
the standard deviation with divisor the count (ddof 0), z = Φ⁻¹(1 - α/2) (1.96 for a 95% interval).

- **judge alone**: the mean of all n + N judge values, ± z σ̂ / √(n + N). Biased by whatever bias the judge has; its
  interval is honest only about the judge's noise.
- **labels alone**: Ȳ ± z σ̂(Y) / √n. Unbiased, wide when n is small.
- **calibrated** (PPI with power tuning λ): θ̂ = λ ḡ + (1/n) Σ (Y_i - λ f_i), the judge's mean over the unlabelled
  answers corrected by the judge's average error on the labelled ones; standard error
  se = √(λ² σ̂(g)² / N + σ̂(Y - λ f)² / n); interval θ̂ ± z se. Unbiased whatever the judge, and narrower than the
  labels alone when the judge tracks the labels.
- **λ** (PPI++, the default): λ̂ = clip(Ĉov(Y, f) / ((1 + n/N) V̂ar(f ∪ g)), 0, 1), with Ĉov over the n labelled pairs
  (divisor n) and V̂ar over all n + N judge values (divisor n + N - 1), as ppi-python computes it; a judge whose
  values never vary gets λ = 0 (it carries no information: the labels alone). ``lam=1`` is classic PPI, ``lam=0``
  the labels alone.

These are large-sample (normal) intervals, as PPI's; with fewer than `FEW_LABELS` labels they are optimistic, and
a note says so. The figures equal ppi-python's ``ppi_mean_pointestimate``, ``ppi_mean_ci`` and ``classical_mean_ci``
(tests/analysis/test_calibration.py, to 1e-9). `ppi_mean` takes arrays with any leading shape (many draws at once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from scipy.stats import norm

from ..errors import RagretrievalError

FEW_LABELS = 30
METHODS = {None: "PPI++ (power-tuned)", 1.0: "PPI (classic, lam = 1)", 0.0: "labels only (lam = 0)"}


class CalibrationError(RagretrievalError, ValueError):
    """Values a calibrated mean cannot be computed from."""


def _z(confidence: float) -> float:
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0 < confidence < 1:
        raise CalibrationError(f"confidence must lie strictly between 0 and 1; got {confidence!r}")
    return float(norm.ppf(1 - (1 - confidence) / 2))


def power_tuning(labels, judged, unlabelled) -> np.ndarray:
    """PPI++'s λ̂ (module text) along the last axis; 0 where the judge's values never vary."""
    n, big_n = labels.shape[-1], unlabelled.shape[-1]
    covariance = ((labels - labels.mean(-1, keepdims=True)) * (judged - judged.mean(-1, keepdims=True))).mean(-1)
    variance = np.concatenate([judged, unlabelled], axis=-1).var(-1, ddof=1)
    scale = (1 + n / big_n) * variance
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(scale > 0, covariance / np.where(scale > 0, scale, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def ppi_mean(labels, judged, unlabelled, lam: float | None = None, confidence: float = 0.95):
    """(estimate, (low, high), λ) of the calibrated mean along the last axis of `labels` (Y), `judged` (f, same
    shape) and `unlabelled` (g); λ power-tuned when `lam` is None."""
    z = _z(confidence)
    labels, judged = np.asarray(labels, dtype=np.float64), np.asarray(judged, dtype=np.float64)
    unlabelled = np.asarray(unlabelled, dtype=np.float64)
    if labels.shape != judged.shape:
        raise CalibrationError(f"labels and the judge's values on them differ in shape: {labels.shape} and "
                               f"{judged.shape}")
    if labels.shape[-1] < 2 or unlabelled.shape[-1] < 1:
        raise CalibrationError(f"a calibrated mean needs at least 2 labelled answers and 1 unlabelled one; got "
                               f"{labels.shape[-1]} and {unlabelled.shape[-1]}")
    for name, values in (("labels", labels), ("judge values", judged), ("unlabelled judge values", unlabelled)):
        if not np.isfinite(values).all():
            raise CalibrationError(f"{name} must be finite numbers (no NaN, no infinity)")
    if lam is None:
        lam = power_tuning(labels, judged, unlabelled)
    else:
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
            raise CalibrationError(f"lam must be a number from 0 to 1 (1: classic PPI, 0: the labels alone); got "
                                   f"{lam!r}")
        lam = np.full(labels.shape[:-1], float(lam))
    weight = lam[..., None]
    rectifier = labels - weight * judged
    estimate = lam * unlabelled.mean(-1) + rectifier.mean(-1)
    se = np.sqrt(lam ** 2 * unlabelled.var(-1) / unlabelled.shape[-1] + rectifier.var(-1) / labels.shape[-1])
    return estimate, (estimate - z * se, estimate + z * se), lam


def classical_mean(values, confidence: float = 0.95):
    """(mean, (low, high)) along the last axis: mean ± z σ̂ / √n."""
    z = _z(confidence)
    values = np.asarray(values, dtype=np.float64)
    mean = values.mean(-1)
    half = z * values.std(-1) / np.sqrt(values.shape[-1])
    return mean, (mean - half, mean + half)


@dataclass(frozen=True)
class Estimate:
    """One row of a calibration: a mean, its interval and how many answers it stands on."""

    method: str  # judge alone | labels alone | calibrated
    mean: float
    ci: tuple[float, float]
    n: int

    def to_json(self) -> dict:
        number = (lambda x: float(x) if math.isfinite(x) else None)  # noqa: E731
        return {"mean": number(self.mean), "ci": [number(self.ci[0]), number(self.ci[1])], "n": self.n}


@dataclass(frozen=True)
class Calibration:
    """The three rows for one metric (`calibrated_mean`), with what they were computed from."""

    judge: Estimate
    labels: Estimate
    calibrated: Estimate
    lam: float
    method: str
    labelled: int  # answers with both a label and a judge value
    unlabelled: int  # answers with a judge value and no label
    confidence: float = 0.95
    metric: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[Estimate]:
        return [self.judge, self.labels, self.calibrated]

    def to_json(self) -> dict:
        return {"metric": self.metric, "confidence": self.confidence, "method": self.method, "lam": self.lam,
                "labelled": self.labelled, "unlabelled": self.unlabelled,
                "judge_alone": self.judge.to_json(), "labels_alone": self.labels.to_json(),
                "calibrated": self.calibrated.to_json(), "notes": self.notes}


def _finite(values: Mapping[str, float | None], what: str) -> dict[str, float]:
    kept = {}
    for key, value in values.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
            raise CalibrationError(f"{what} of question {key!r} is not a finite number: {value!r}")
        kept[str(key)] = float(value)
    return kept


def calibrated_mean(judge_values: Mapping[str, float | None], labels: Mapping[str, float], *,
                    lam: float | None = None, confidence: float = 0.95, metric: str | None = None) -> Calibration:
    """The judge alone, the labels alone and the calibrated mean of one metric.

    `judge_values` maps each answered question's id to the judge's value (None or NaN: no verdict, left out);
    `labels` maps question ids to a person's value for the same answers, on the same scale. Labels on answers without
    a judge value count in the labels-alone row only (noted). The web app calls this with an evaluation's verdicts
    and its annotations; ``ragretrieval calibrate`` with a run and a labels file."""
    judged = _finite(judge_values, "the judge's value")
    labelled = _finite(labels, "the label")
    if len(labelled) < 2:
        raise CalibrationError(f"a calibrated mean needs at least 2 labels; got {len(labelled)}")
    paired = [qid for qid in labelled if qid in judged]
    rest = [qid for qid in judged if qid not in labelled]
    notes = []
    stray = len(labelled) - len(paired)
    if stray:
        notes.append(f"{stray} label(s) are on answers without a judge value: they count in the labels-alone row "
                     "only")
    if len(paired) < 2:
        raise CalibrationError(f"a calibrated mean needs at least 2 labelled answers the judge judged; got "
                               f"{len(paired)} of {len(labelled)} labels")
    y = np.array([labelled[q] for q in paired])
    f = np.array([judged[q] for q in paired])
    g = np.array([judged[q] for q in rest])
    every = np.array(list(judged.values()))
    judge_mean, judge_ci = classical_mean(every, confidence)
    labels_mean, labels_ci = classical_mean(np.array(list(labelled.values())), confidence)
    if len(rest):
        mean, ci, tuned = ppi_mean(y, f, g, lam, confidence)
        lam_used, method = float(tuned), METHODS.get(None if lam is None else float(lam), f"PPI (lam = {lam})")
    else:
        (mean, ci), lam_used, method = classical_mean(y, confidence), 0.0, METHODS[0.0]
        notes.append("every judged answer has a label: there is nothing to calibrate with, the calibrated row is "
                     "the labels' own mean")
    if len(paired) < FEW_LABELS:
        notes.append(f"only {len(paired)} labelled answers: normal intervals on fewer than {FEW_LABELS} labels are "
                     "optimistic")
    return Calibration(
        judge=Estimate("judge alone", float(judge_mean), (float(judge_ci[0]), float(judge_ci[1])), len(every)),
        labels=Estimate("labels alone", float(labels_mean), (float(labels_ci[0]), float(labels_ci[1])),
                        len(labelled)),
        calibrated=Estimate("calibrated", float(mean), (float(ci[0]), float(ci[1])), len(every)),
        lam=lam_used, method=method, labelled=len(paired), unlabelled=len(rest), confidence=confidence,
        metric=metric, notes=notes)
