"""A calibrated judge mean when the labelled answers were chosen for their uncertainty: active statistical inference
(Zrnic and Candès, "Active Statistical Inference", ICML 2024), with the draw made by priority sampling (Duffield,
Lund and Thorup 2007) so that a reviewer who stops after any number of labels leaves known probabilities behind.

PPI (calibration.py) assumes the labelled answers are a uniform random subset. A review that labels the uncertain
answers first breaks that assumption: its labels over-represent the hard answers, and PPI's mean is biased. Here each
answer i has a weight w_i > 0 (larger = more uncertain, `sampling_weights`) and a key u_i uniform on (0, 1) fixed in
advance (`uniform_keys`: a hash, so every server process draws the same order). Answers are reviewed in increasing
u_i / w_i (`draw_order`). After the first k of that order, answer i was labelled with probability
π_i = min(1, c w_i), where c is the (k + 1)-th smallest u / w (`inclusion_probabilities`; π_i = 1 once every answer
is labelled). Horvitz-Thompson weights 1 / π_i are then unbiased (priority sampling's theorem: E[ξ_i / π_i] = 1).

The estimator (`active_mean`), with Y_i the label, f_i the judge's value on the same scale, ξ_i = 1 when labelled:

    z_i = λ f_i + (Y_i - λ f_i) ξ_i / π_i            (Y_i is needed only where ξ_i = 1)
    θ̂  = (1/N) Σ z_i,   se = sd(z) / √N (sd with divisor N - 1),   interval θ̂ ± z_{1-α/2} se

For a fixed λ, θ̂ is unbiased for the mean of Y whatever the judge (tests/analysis/test_active_inference.py checks it
by simulation). λ = 1 is the paper's basic estimator; by default λ is power-tuned as the paper proposes: the value in
[0, 1] that minimises the sample variance of z, λ̂ = -Ĉov(a, b) / V̂ar(b) with a_i = Y_i ξ_i / π_i and
b_i = f_i (1 - ξ_i / π_i), 0 when V̂ar(b) = 0. With uniform weights this is PPI++ over a uniform random subset.

The interval is a large-sample (normal) one; with fewer than `calibration.FEW_LABELS` labels a note says it is
optimistic. benchmarks/bench_review.py measures its coverage and its width against uniform labels.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from .calibration import FEW_LABELS, CalibrationError

UNIFORM_FLOOR = 0.1  # the least certain answer is drawn at most 1 / 0.1 = 10 times as often as the most certain one


def sampling_weights(uncertainty, floor: float = UNIFORM_FLOOR) -> np.ndarray:
    """w = floor + (1 - floor) u for uncertainties u in [0, 1] (clipped): every answer keeps a chance to be drawn,
    so no weight 1 / π explodes."""
    if not 0 < floor <= 1:
        raise CalibrationError(f"floor must lie in (0, 1]; got {floor!r}")
    u = np.clip(np.nan_to_num(np.asarray(uncertainty, dtype=np.float64), nan=1.0), 0.0, 1.0)
    return floor + (1 - floor) * u


def uniform_keys(ids, seed: str) -> np.ndarray:
    """A key in (0, 1) per id from SHA-256 of ``seed:id``: a fixed, reproducible uniform draw."""
    keys = []
    for item in ids:
        digest = hashlib.sha256(f"{seed}:{item}".encode("utf-8")).digest()
        keys.append((int.from_bytes(digest[:8], "big") + 0.5) / 2 ** 64)
    return np.array(keys, dtype=np.float64)


def draw_order(weights, keys) -> np.ndarray:
    """The indices in the order to review them: increasing key / weight (the uncertain ones tend to come first)."""
    weights, keys = np.asarray(weights, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    return np.argsort(keys / weights, kind="stable")


def inclusion_probabilities(weights, keys, labelled: int) -> np.ndarray:
    """π_i after the first `labelled` answers of `draw_order` were labelled (module text)."""
    weights, keys = np.asarray(weights, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    if not 0 <= labelled <= len(weights):
        raise CalibrationError(f"labelled must be from 0 to {len(weights)}; got {labelled}")
    if labelled == len(weights):
        return np.ones(len(weights))
    threshold = np.sort(keys / weights)[labelled]
    return np.minimum(1.0, threshold * weights)


@dataclass(frozen=True)
class ActiveEstimate:
    mean: float
    ci: tuple[float, float]
    se: float
    lam: float
    labelled: int
    total: int
    confidence: float = 0.95
    method: str = "active inference (inverse-probability weights)"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        number = (lambda x: float(x) if math.isfinite(x) else None)  # noqa: E731
        return {"method": self.method, "mean": number(self.mean), "ci": [number(self.ci[0]), number(self.ci[1])],
                "se": number(self.se), "lam": self.lam, "labelled": self.labelled, "total": self.total,
                "confidence": self.confidence, "notes": self.notes}


def _tuned(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """λ̂ in [0, 1] minimising the sample variance of a + λ b along the last axis."""
    bc = b - b.mean(-1, keepdims=True)
    covariance = ((a - a.mean(-1, keepdims=True)) * bc).mean(-1)
    variance = (bc ** 2).mean(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(variance > 0, -covariance / np.where(variance > 0, variance, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def active_terms(judge, labels, probabilities, lam: float | None = None):
    """(z, λ): the per-answer terms of the estimator along the last axis; `labels` is NaN where not labelled. Takes
    arrays with leading axes (many simulated draws at once)."""
    f = np.asarray(judge, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    pi = np.asarray(probabilities, dtype=np.float64)
    xi = np.isfinite(y)
    weight = np.where(xi, 1.0 / np.where(pi > 0, pi, 1.0), 0.0)
    a = np.where(xi, np.nan_to_num(y), 0.0) * weight
    b = f * (1.0 - weight)
    if lam is None:
        lam_used = _tuned(a, b)
    else:
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
            raise CalibrationError(f"lam must be a number from 0 to 1; got {lam!r}")
        lam_used = np.full(f.shape[:-1], float(lam))
    return a + lam_used[..., None] * b, lam_used


def active_mean(judge, labels, probabilities, *, lam: float | None = None,
                confidence: float = 0.95) -> ActiveEstimate:
    """The mean of the labels over all N answers, from the judge's values on all of them (`judge`), the labels where
    given (`labels`, NaN elsewhere) and each answer's probability of having been labelled (`probabilities`)."""
    if not 0 < confidence < 1:
        raise CalibrationError(f"confidence must lie strictly between 0 and 1; got {confidence!r}")
    f = np.asarray(judge, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    pi = np.asarray(probabilities, dtype=np.float64)
    if not (f.shape == y.shape == pi.shape) or f.ndim != 1:
        raise CalibrationError(f"judge values, labels and probabilities must be 1-d and of one length; got "
                               f"{f.shape}, {y.shape} and {pi.shape}")
    if not np.isfinite(f).all():
        raise CalibrationError("the judge's values must be finite numbers (no NaN, no infinity)")
    labelled = int(np.isfinite(y).sum())
    if labelled < 2:
        raise CalibrationError(f"an estimate needs at least 2 labelled answers; got {labelled}")
    if np.any(np.isfinite(y) & ~((pi > 0) & (pi <= 1))):
        raise CalibrationError("every labelled answer needs a probability in (0, 1]")
    z, lam_used = active_terms(f, y, pi, lam)
    mean = float(z.mean())
    se = float(z.std(ddof=1) / math.sqrt(len(z)))
    half = float(norm.ppf(1 - (1 - confidence) / 2)) * se
    notes = []
    if labelled < FEW_LABELS:
        notes.append(f"only {labelled} labelled answers: normal intervals on fewer than {FEW_LABELS} labels are "
                     "optimistic")
    return ActiveEstimate(mean, (mean - half, mean + half), se, float(lam_used), labelled, len(z), confidence,
                          notes=notes)
