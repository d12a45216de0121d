"""Multiple-testing corrections against a step-down done by hand, on p-value vectors with ties and NaN."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.analysis.stats import adjust

from .reference import bonferroni, holm

pvalues = st.lists(st.one_of(st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.05, 0.2, 0.5, 1.0, math.nan]),
                             st.floats(0, 1)), max_size=12)


def same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e, rel=1e-12, abs=0)


@settings(max_examples=400, deadline=None)
@given(pvalues)
def test_holm_bonferroni_and_none_equal_the_references(p):
    same(adjust(p, "holm"), holm(p))
    same(adjust(p, "bonferroni"), bonferroni(p))
    same(adjust(p, "none"), p)


@settings(max_examples=200, deadline=None)
@given(pvalues)
def test_holm_is_monotone_between_the_raw_p_and_bonferroni(p):
    adjusted, bonf = adjust(p, "holm"), adjust(p, "bonferroni")
    finite = [i for i, x in enumerate(p) if not math.isnan(x)]
    for i in finite:
        assert p[i] <= adjusted[i] <= bonf[i] <= 1.0
        for j in finite:
            if p[i] <= p[j]:
                assert adjusted[i] <= adjusted[j]
    assert all(math.isnan(adjusted[i]) for i, x in enumerate(p) if math.isnan(x))
