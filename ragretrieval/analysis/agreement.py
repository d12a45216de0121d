"""Agreement between two raters of the same items: how far an LLM judge can be trusted where a deterministic check
also gave a verdict (docs/answers/judge.md, "Judge trust").

- `cohen_kappa(a, b)` for two yes/no (or any categorical) verdicts of the same items:
  kappa = (p_o - p_e) / (1 - p_e), where p_o is the share of items both raters put in the same category and
  p_e = sum over categories of (share of a in it) x (share of b in it), the agreement expected by chance.
  1 is perfect agreement, 0 what chance gives, below 0 worse than chance. Undefined (NaN) when both raters put every
  item in one and the same category (p_e = 1): nothing tells agreement from chance then.
- `krippendorff_alpha(ratings)` for more than two raters (reviewers), each rating some of the items.
- `spearman(a, b)` for graded verdicts (a 1-5 score against a check score in [0, 1]): SciPy's rank correlation
  (ties get their average rank) and its two-sided p-value; NaN when either side is constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Agreement:
    statistic: str  # "cohen_kappa" | "spearman" | "krippendorff_alpha"
    value: float  # NaN when undefined
    n: int  # items both raters judged
    observed: float | None = None  # kappa: the share of items with the same verdict
    p: float | None = None  # spearman: two-sided p-value

    def as_dict(self) -> dict:
        def clean(x):
            return None if x is None or not np.isfinite(x) else round(float(x), 6)

        return {"statistic": self.statistic, "value": clean(self.value), "n": self.n,
                **({"observed": clean(self.observed)} if self.observed is not None else {}),
                **({"p": clean(self.p)} if self.p is not None else {})}


def cohen_kappa(a, b) -> Agreement:
    """Cohen's kappa between two sequences of categorical verdicts of the same items."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("kappa needs two 1-d sequences of the same length")
    n = len(a)
    if n == 0:
        return Agreement("cohen_kappa", float("nan"), 0)
    observed = float(np.mean(a == b))
    categories = np.union1d(a, b)
    expected = float(sum(np.mean(a == c) * np.mean(b == c) for c in categories))
    value = float("nan") if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return Agreement("cohen_kappa", value, n, observed=observed)


def spearman(a, b) -> Agreement:
    """Spearman's rank correlation between two sequences of graded verdicts of the same items."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("spearman needs two 1-d sequences of the same length")
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Agreement("spearman", float("nan"), len(a), p=float("nan"))
    result = spearmanr(a, b)
    return Agreement("spearman", float(result.statistic), len(a), p=float(result.pvalue))


def krippendorff_alpha(ratings) -> Agreement:
    """Krippendorff's alpha (nominal) for any number of raters, each item rated by some of them.

    `ratings` is a list of items, each a list of the categories its raters gave (missing ratings simply absent).
    Items with fewer than two ratings are left out (they hold no pair). With o_ck the coincidence matrix (each
    ordered pair of ratings of one item adds 1 / (m_u - 1), m_u the item's ratings), n_c = Σ_k o_ck and
    n = Σ_c n_c: alpha = 1 - (n - 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. 1 is perfect agreement, 0 chance; undefined
    (NaN) when every rating is one category. Equals Cohen's kappa's sibling Scott's pi (with a small-sample
    correction) for two raters; Krippendorff (2011), "Computing Krippendorff's alpha-reliability", works the example
    the tests check."""
    units = [list(item) for item in ratings if len(item) >= 2]
    categories = sorted({value for item in units for value in item}, key=str)
    index = {c: i for i, c in enumerate(categories)}
    coincidence = np.zeros((len(categories), len(categories)))
    for item in units:
        counts = np.zeros(len(categories))
        for value in item:
            counts[index[value]] += 1
        coincidence += (np.outer(counts, counts) - np.diag(counts)) / (len(item) - 1)
    totals = coincidence.sum(1)
    n = totals.sum()
    if n == 0:
        return Agreement("krippendorff_alpha", float("nan"), 0)
    observed_off = coincidence.sum() - np.trace(coincidence)
    expected_off = totals.sum() ** 2 - (totals ** 2).sum()
    value = float("nan") if expected_off == 0 else 1.0 - (n - 1) * observed_off / expected_off
    return Agreement("krippendorff_alpha", value, len(units), observed=float(np.trace(coincidence) / n))
