"""What a metric is: a family name, an optional cutoff, and validation.

How a metric is computed lives in `kernels.py`; the formulas are written down once, below, and in docs/metrics.md.
Notation for one query: the ranking r_1..r_D (D = docs retrieved, after ranking, de-duplication and any depth cut),
label(d) the judged label of d (0 when unjudged), level the relevance level, rel_i = 1 if label(r_i) >= level else 0,
R = number of judged docs with label >= level.

- ``precision@k``  = sum(rel_1..rel_k) / k              (divides by k even when D < k, as trec_eval P_k)
- ``recall@k``     = sum(rel_1..rel_k) / R              (0 when R = 0; trec_eval recall_k)
- ``hit_rate@k``   = 1 if any rel_i = 1 for i <= k      (trec_eval success_k, ranx hit_rate@k)
- ``mrr@k``        = 1 / min{i <= k : rel_i = 1}        (0 when none; ranx mrr@k, ir_measures RR@k)
- ``mrr``          = the same over the whole ranking     (trec_eval recip_rank, which has no cutoff)
- ``f1@k``         = 2 P R / (P + R) with P = precision@k, R = recall@k (0 when both are 0; ranx f1@k)
- ``ndcg@k``       = DCG@k / IDCG@k, DCG@k = sum_{i<=k} g(r_i) / log2(i + 1) with linear gain g(d) = label(d) when
                      label(d) > 0 else 0; IDCG@k is the DCG@k of all judged docs sorted by gain. Labels are not
                      thresholded by the relevance level (trec_eval ndcg_cut_k); 0 when IDCG = 0.
- ``ndcg``         = the same without a cutoff (trec_eval ndcg)
- ``ndcg_exp@k``   = as ndcg@k with exponential gain g(d) = 2^label(d) - 1 (ranx ndcg_burges@k)
- ``map@k``        = sum_{i<=k} rel_i * precision@i / R  (divides by R, never min(k, R); trec_eval map_cut_k)
- ``map``          = the same over the whole ranking     (trec_eval map)
- ``r_precision``  = precision@R                        (0 when R = 0; trec_eval Rprec)

Labels below zero are non-relevant and never count in R; unjudged retrieved docs are non-relevant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError

# family -> (cutoff: "required" | "optional" | "none", one-line description)
FAMILIES: dict[str, tuple[str, str]] = {
    "precision": ("required", "relevant docs in the top k, divided by k"),
    "recall": ("required", "relevant docs in the top k, divided by all relevant docs"),
    "hit_rate": ("required", "1 if any relevant doc is in the top k"),
    "mrr": ("optional", "reciprocal rank of the first relevant doc (within k)"),
    "f1": ("required", "harmonic mean of precision@k and recall@k"),
    "ndcg": ("optional", "normalised DCG, linear gain (trec_eval ndcg_cut)"),
    "ndcg_exp": ("optional", "normalised DCG, exponential gain 2^rel - 1"),
    "map": ("optional", "average precision (within k), divided by all relevant docs"),
    "r_precision": ("none", "precision at R, the number of relevant docs"),
}

_NAME = re.compile(r"^(?P<family>[a-z_0-9]+?)(?:@(?P<k>[^@]*))?$")


class MetricError(InputError, ValueError):
    """A metric name that cannot be parsed or validated: the command must name another (exit 2)."""


@dataclass(frozen=True, order=True)
class Metric:
    """One metric: a family from `FAMILIES` and a cutoff `k` (None = the whole ranking)."""

    family: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            known = ", ".join(sorted(FAMILIES))
            raise MetricError(f"unknown metric '{self.family}'; known metrics: {known}")
        rule = FAMILIES[self.family][0]
        if self.k is None and rule == "required":
            raise MetricError(f"metric '{self.family}' needs a cutoff, e.g. '{self.family}@10'")
        if self.k is not None and rule == "none":
            raise MetricError(f"metric '{self.family}' takes no cutoff")
        if self.k is not None and (not isinstance(self.k, int) or isinstance(self.k, bool) or self.k <= 0):
            raise MetricError(f"cutoff of '{self.family}' must be a positive integer, got {self.k!r}")

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __str__(self) -> str:
        return self.name


def parse_metric(text: str | Metric) -> Metric:
    """Parse a metric name as users type it: ``"ndcg@10"``, ``"mrr"``, ``"r_precision"``."""
    if isinstance(text, Metric):
        return text
    match = _NAME.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise MetricError(f"cannot parse metric name {text!r}; expected a name like 'recall@10' or 'mrr'")
    family, k_text = match.group("family"), match.group("k")
    if k_text is None:
        return Metric(family)
    if not re.fullmatch(r"-?\d+", k_text):
        raise MetricError(f"cutoff of '{family}' must be a positive integer, got {k_text!r} in {text!r}")
    return Metric(family, int(k_text))


def parse_metrics(texts) -> list[Metric]:
    """Parse many names; repeated names are kept once, in first-seen order."""
    seen: dict[str, Metric] = {}
    for text in texts:
        metric = parse_metric(text)
        seen.setdefault(metric.name, metric)
    return list(seen.values())


def expand_cutoffs(families, cutoffs) -> list[Metric]:
    """``expand_cutoffs(["recall", "mrr"], [1, 5])`` -> recall@1, recall@5, mrr@1, mrr@5."""
    return [Metric(f, k) if FAMILIES[f][0] != "none" else Metric(f) for f in families for k in cutoffs]
