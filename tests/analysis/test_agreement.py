"""Agreement between raters (analysis/agreement.py): Krippendorff's alpha on Krippendorff's own worked example, and
its agreement with Cohen's kappa's construction where both are defined."""

from __future__ import annotations

import math

import pytest

from ragretrieval.analysis.agreement import cohen_kappa, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units, missing values
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def test_alpha_on_krippendorff_s_worked_example():
    units = [[o[u] for o in OBSERVERS if o[u] is not None] for u in range(12)]
    alpha = krippendorff_alpha(units)
    assert alpha.value == pytest.approx(0.743, abs=5e-4)
    assert alpha.n == 11  # the last unit has one rating: no pair


def test_alpha_perfect_and_undefined():
    assert krippendorff_alpha([["a", "a"], ["b", "b", "b"]]).value == 1.0
    assert math.isnan(krippendorff_alpha([["a", "a"], ["a", "a"]]).value)
    assert math.isnan(krippendorff_alpha([["a"], []]).value)


def test_alpha_for_two_raters_is_close_to_kappa():
    a = ["c", "c", "i", "p", "c", "i", "c", "p", "c", "c"] * 5
    b = ["c", "i", "i", "p", "c", "i", "c", "c", "c", "p"] * 5
    kappa = cohen_kappa(a, b).value
    alpha = krippendorff_alpha(list(zip(a, b))).value
    assert abs(alpha - kappa) < 0.03
