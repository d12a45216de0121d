"""How noisy a judge is, from repeated verdicts on the same answers (docs/answers/judge.md, "Judge noise"), and
what that noise means for a comparison: the smallest paired difference of a judge metric that N questions can tell
from it.

- **Flip rate** p: the chance that a verdict differs from the judge's usual verdict on that answer. With each
  verdict the usual one with probability 1 − p, two repeats of one question differ with probability
  d = 2p(1 − p); d is estimated without bias by the share of disagreeing pairs of repeats (over all questions'
  pairs), and p = (1 − √(1 − 2d)) / 2. Its interval: a percentile bootstrap over questions (2,000 resamples,
  seed 0). For a graded verdict (1-5) a flip is any change of score.
- **Noise variance** σ² of a judge metric: the pooled within-question variance of its repeated values,
  Σ_q Σ_r (v_qr − v̄_q)² / Σ_q (R_q − 1).
- **Minimal detectable difference** of a paired comparison of two runs judged by noisy judges, from the noise
  alone: MDE = (z_{1−α/2} + z_{power}) √((σ²_A + σ²_B) / n), with α the comparison's level and 80 % power; a
  difference of a judge metric smaller than it could be the judges' noise.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .settings import PAIRED

RESAMPLES = 2_000
POWER = 0.8


def _pairs(groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per question: disagreeing pairs of repeats, and pairs."""
    differ = np.array([float((g[:, None] != g[None, :]).sum() / 2) for g in groups])
    pairs = np.array([len(g) * (len(g) - 1) / 2 for g in groups], dtype=np.float64)
    return differ, pairs


def _p_of_d(d: float) -> float:
    return (1 - math.sqrt(max(0.0, 1 - 2 * d))) / 2


def flip_rate(verdicts: list[list[float]], confidence: float = 0.95, resamples: int = RESAMPLES, seed: int = 0
              ) -> dict:
    """The flip rate of repeated verdicts (one list per question; questions with fewer than two are left out):
    ``{"flip_rate", "ci", "disagreement", "questions", "verdicts"}``."""
    groups = [np.asarray(v, dtype=np.float64) for v in verdicts if len(v) >= 2]
    if not groups:
        return {"flip_rate": None, "ci": None, "disagreement": None, "questions": 0, "verdicts": 0}
    differ, pairs = _pairs(groups)
    d = float(differ.sum() / pairs.sum())
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(resamples, len(groups)))
    drawn = differ[picks].sum(axis=1) / pairs[picks].sum(axis=1)
    low, high = np.quantile([_p_of_d(x) for x in drawn], [(1 - confidence) / 2, (1 + confidence) / 2])
    return {"flip_rate": _p_of_d(d), "ci": [float(low), float(high)], "disagreement": d, "questions": len(groups),
            "verdicts": int(sum(len(g) for g in groups))}


def within_variance(values: list[list[float]]) -> float | None:
    """The pooled within-question variance of repeated values (None without a question repeated)."""
    groups = [np.asarray(v, dtype=np.float64) for v in values if len(v) >= 2]
    if not groups:
        return None
    return float(sum(((g - g.mean()) ** 2).sum() for g in groups) / sum(len(g) - 1 for g in groups))


def interval(measure, a, b, confidence: float = 0.95, resamples: int = RESAMPLES, seed: int = 0):
    """A percentile bootstrap interval of `measure(a, b) -> float` over paired items (None when it is undefined in
    most resamples, e.g. kappa with one verdict everywhere)."""
    a, b = np.asarray(a), np.asarray(b)
    if len(a) < 2:
        return None
    rng = np.random.default_rng(seed)
    found = [measure(a[i], b[i]) for i in rng.integers(0, len(a), size=(resamples, len(a)))]
    found = np.array([x for x in found if x is not None and math.isfinite(x)])
    if len(found) < resamples / 2:
        return None
    low, high = np.quantile(found, [(1 - confidence) / 2, (1 + confidence) / 2])
    return [float(low), float(high)]


def shift(original, changed, seed: int = 0) -> dict:
    """How a variant of each request (contexts shuffled, answer padded) moved the verdicts: the mean change with its
    paired bootstrap interval, and the share of verdicts that changed."""
    a, b = np.asarray(original, dtype=np.float64), np.asarray(changed, dtype=np.float64)
    if not len(a):
        return {"shift": None, "ci": None, "changed": None, "n": 0}
    return {"shift": float((b - a).mean()), "ci": interval(lambda x, y: float((y - x).mean()), a, b, seed=seed),
            "changed": float((a != b).mean()), "n": int(len(a))}


def minimal_detectable_difference(variance_a: float, variance_b: float, n: int, alpha: float = PAIRED.alpha,
                                  power: float = POWER) -> float:
    """The smallest paired mean difference `n` questions detect at level `alpha` with `power`, from noise alone."""
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return z * math.sqrt((variance_a + variance_b) / n) if n else math.inf


def measured_variance(report, metric: str) -> float | None:
    """The noise variance of `metric` measured for one of the run's judges (`report.judge_noise`), if any."""
    for noise in (getattr(report, "judge_noise", None) or {}).values():
        if metric in noise.get("variance", {}):
            return noise["variance"][metric]
    return None


def noise_bounds(runs, comparison) -> dict[tuple[str, str], dict]:
    """(run label, metric) -> {"mde", "variance_a", "variance_b", "n"} for every compared judge metric whose noise
    one of the two runs measured (the other is taken to have the same judge noise when it measured none)."""
    from .compare import PER_QUESTION_NAMES

    base = runs[0]
    by_label = {run.label: run for run in runs}
    bounds = {}
    for pair in comparison.pairs:
        for metric, m in pair.metrics.items():
            name = PER_QUESTION_NAMES.get(metric, metric)
            a, b = measured_variance(base.report, name), measured_variance(by_label[pair.b].report, name)
            if a is None and b is None:
                continue
            a, b = (b if a is None else a), (a if b is None else b)
            bounds[(pair.b, metric)] = {"mde": minimal_detectable_difference(a, b, m.stats.n, comparison.alpha),
                                        "variance_a": a, "variance_b": b, "n": m.stats.n}
    return bounds


def noise_lines(bounds: dict[tuple[str, str], dict], alpha: float) -> list[str]:
    if not bounds:
        return []
    lines = ["", f"judge noise (judge answers --repeats): the smallest paired difference the judges' noise lets these "
                 f"questions show (alpha {alpha}, {POWER:.0%} power)"]
    for (label, metric), b in bounds.items():
        lines.append(f"  {metric} ({label}): {b['mde']:.4f} (noise variance A {b['variance_a']:.4f}, "
                     f"B {b['variance_b']:.4f}; n={b['n']})")
    return lines


def within_noise(comparison, bounds: dict[tuple[str, str], dict]) -> list[tuple[str, str, float, float]]:
    """Regressions of judge metrics smaller than the judges' noise: (label, metric, difference, MDE)."""
    found = []
    for pair in comparison.pairs:
        for metric, m in pair.metrics.items():
            bound = bounds.get((pair.b, metric))
            if m.regression and bound is not None and abs(m.stats.diff) < bound["mde"]:
                found.append((pair.b, metric, m.stats.diff, bound["mde"]))
    return found
