"""The kernels (`ragretrieval/scoring/kernels.py`) against a reference written here from the definitions of
docs/metrics.md, one query at a time: every metric family at every cutoff, and the kernels' own helpers at their
edges (gains of labels <= 0, the packed sort's fallback when packing would overflow int64, cutoffs past int64)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.scoring import FAMILIES, Qrels, Run, kernels, score
from ragretrieval.scoring.kernels import _sorted_within_rows, gains

CUTOFFS = (1, 2, 3, 5, 10, None)
INT64_MAX = int(np.iinfo(np.int64).max)


def reference(ranked: list, labels: dict, rel_level: int, family: str, k: int | None) -> float:
    """One metric of one query, walking the ranking (best first) as docs/metrics.md states it, trec_eval's way."""
    top = ranked if k is None else ranked[:k]
    rel = [labels.get(d, 0) >= rel_level for d in top]
    n_relevant = sum(1 for g in labels.values() if g >= rel_level)
    hits = sum(rel)
    if family == "precision":
        return hits / k
    if family == "recall":
        return hits / n_relevant if n_relevant else 0.0
    if family == "hit_rate":
        return 1.0 if hits else 0.0
    if family == "mrr":
        return next((1 / i for i, r in enumerate(rel, start=1) if r), 0.0)
    if family == "f1":
        p, r = hits / k, (hits / n_relevant if n_relevant else 0.0)
        return 2 * p * r / (p + r) if p + r else 0.0
    if family in ("ndcg", "ndcg_exp"):

        def gain(label: int) -> float:
            return 0.0 if label <= 0 else float(2**label - 1 if family == "ndcg_exp" else label)

        dcg = sum(gain(labels.get(d, 0)) / math.log2(i + 1) for i, d in enumerate(top, start=1))
        ideal = sorted(labels.values(), reverse=True)[: len(labels) if k is None else k]
        idcg = sum(gain(g) / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
        return dcg / idcg if idcg else 0.0
    if family == "map":
        precisions = [sum(rel[:i]) / i for i, r in enumerate(rel, start=1) if r]
        return sum(precisions) / n_relevant if n_relevant else 0.0
    if family == "r_precision":
        return sum(labels.get(d, 0) >= rel_level for d in ranked[:n_relevant]) / n_relevant if n_relevant else 0.0
    raise AssertionError(family)


def every_metric() -> list[str]:
    names = []
    for family, (rule, _) in FAMILIES.items():
        cutoffs = [None] if rule == "none" else [k for k in CUTOFFS if k is not None or rule == "optional"]
        names += [family if k is None else f"{family}@{k}" for k in cutoffs]
    return names


def assert_matches_reference(labels: dict, rankings: dict, rel_level: int, names: list[str]) -> None:
    result = score(Qrels.from_dict(labels), Run.from_dict(rankings), names, rel_level=rel_level)
    assert result.query_ids.tolist() == list(labels)
    for name in names:
        family, _, k = name.partition("@")
        expected = [reference(rankings.get(q, []), labels[q], rel_level, family, int(k) if k else None) for q in labels]
        assert result.per_query[name].tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15), name


DOCS = [f"d{i}" for i in range(8)]


@st.composite
def judged_runs(draw):
    """Up to 4 queries judging up to 6 docs with labels -1..3 (some all non-relevant, some judging nothing
    positive); rankings of up to 7 docs mixing judged and unjudged ones, some empty, some queries not in the run."""
    labels, rankings = {}, {}
    for q in range(draw(st.integers(1, 4))):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=6))
        labels[f"q{q}"] = {d: draw(st.integers(-1, 3)) for d in judged}
        if draw(st.integers(0, 5)):
            rankings[f"q{q}"] = draw(st.lists(st.sampled_from(DOCS + ["u1", "u2"]), unique=True, max_size=7))
    return labels, rankings, draw(st.integers(1, 3))


@settings(max_examples=40, deadline=None)
@given(judged_runs())
def test_every_metric_at_every_cutoff_equals_the_reference(drawn):
    labels, rankings, rel_level = drawn
    assert_matches_reference(labels, rankings, rel_level, every_metric())


@pytest.mark.parametrize("threads", [1, 2])
def test_metrics_computed_on_two_threads_equal_the_reference(monkeypatch, threads):
    """With PARALLEL_JUDGEMENTS = 0 the gain metrics (nDCG) and the others are computed by two kernels on two
    threads (THREADS = 2), or by one (THREADS = 1); every metric still equals the reference, in the order given."""
    monkeypatch.setattr(kernels, "PARALLEL_JUDGEMENTS", 0)
    monkeypatch.setattr(kernels, "THREADS", threads)
    labels = {"q1": {"a": 3, "b": 0, "c": 1, "d": 2, "e": -1}, "q2": {"a": 1, "b": 2}, "q3": {"x": 1}}
    rankings = {"q1": ["e", "c", "u", "a", "b", "d"], "q2": ["b", "v", "a"]}
    names = every_metric()[::-1]
    assert_matches_reference(labels, rankings, 1, names)
    assert list(score(Qrels.from_dict(labels), Run.from_dict(rankings), names).per_query) == names
    assert set(kernels.GAIN_FAMILIES) < set(FAMILIES)


def test_a_worked_example_at_every_cutoff():
    labels = {"q1": {"a": 3, "b": 0, "c": 1, "d": 2, "e": -1}, "q2": {"a": 1}, "q3": {"x": 0}}
    rankings = {"q1": ["e", "c", "u", "a", "b"], "q2": ["u", "v"]}  # q3 is not in the run
    for rel_level in (1, 2, 3):
        assert_matches_reference(labels, rankings, rel_level, every_metric())
    result = score(Qrels.from_dict(labels), Run.from_dict(rankings), ["map", "ndcg@2", "r_precision", "mrr@1"])
    # by hand: q1's relevant docs c (rank 2) and a (rank 4), d missing: AP = (1/2 + 2/4) / 3
    assert result.per_query["map"].tolist() == pytest.approx([(1 / 2 + 2 / 4) / 3, 0.0, 0.0])
    assert result.per_query["ndcg@2"].tolist() == pytest.approx([(1 / math.log2(3)) / (3 + 2 / math.log2(3)), 0, 0])
    assert result.per_query["r_precision"].tolist() == pytest.approx([1 / 3, 0.0, 0.0])
    assert result.per_query["mrr@1"].tolist() == [0.0, 0.0, 0.0]


def test_gains_are_zero_for_labels_at_or_below_zero():
    labels = np.array([-3, -1, 0, 1, 2, 3])
    assert gains(labels, exponential=False).tolist() == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]
    assert gains(labels, exponential=True).tolist() == [0.0, 0.0, 0.0, 1.0, 3.0, 7.0]
    assert gains(labels, exponential=False).dtype == np.float64


def test_the_largest_label_int64_holds_is_sorted_into_the_ideal_ranking():
    """The ideal ranking sorts labels descending by packing (query, -label) into one int64; a label of 2^63 - 1
    leaves no room for that and must take the slower sort instead of overflowing."""
    labels, rankings = {"q": {"a": INT64_MAX, "b": 1, "c": 0}}, {"q": ["b", "c", "a"]}
    assert_matches_reference(labels, rankings, 1, ["ndcg", "ndcg@1", "ndcg@2", "ndcg@3", "map", "recall@2"])
    ndcg = score(Qrels.from_dict(labels), Run.from_dict(rankings), "ndcg").means["ndcg"]
    assert ndcg == pytest.approx((1 + INT64_MAX / 2) / (INT64_MAX + 1 / math.log2(3)))


def stable_order(rows: list[int], values: list[int], descending: bool) -> list[int]:
    return sorted(range(len(rows)), key=lambda i: (rows[i], -values[i] if descending else values[i]))


EXTREMES = st.sampled_from([-(2**63) + 1, -(2**62), -1, 0, 1, 2**62 - 1, 2**62, INT64_MAX])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.integers(-3, 3), EXTREMES)), max_size=30), st.booleans())
def test_sorting_within_rows_is_stable_and_never_overflows(items, descending):
    rows = np.array([r for r, _ in items], dtype=np.int64)
    values = np.array([v for _, v in items], dtype=np.int64)
    order = _sorted_within_rows(rows, values, descending=descending)
    assert order.tolist() == stable_order(rows.tolist(), values.tolist(), descending)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("row", [0, 1, 2, 5])
@pytest.mark.parametrize("top", [2**61, 2**62 - 2, 2**62 - 1, 2**62, 2**63 - 2, INT64_MAX])
def test_sorting_within_rows_at_the_packing_limit(row, top, descending):
    """Around the edge where (row, value) no longer packs into one int64: both sorts give the same stable order."""
    rows = np.array([row, 0, row, 0, row], dtype=np.int64)
    values = np.array([top, 1, 0, top, top], dtype=np.int64)
    order = _sorted_within_rows(rows, values, descending=descending)
    assert order.tolist() == stable_order(rows.tolist(), values.tolist(), descending)


def test_a_cutoff_past_int64_covers_the_whole_ranking():
    labels, rankings = {"q1": {"a": 3, "b": 1, "c": 2}, "q2": {"z": 1}}, {"q1": ["b", "x", "a"], "q2": ["y"]}
    for k in (INT64_MAX, INT64_MAX + 1, 10**20):
        names = [f"{f}@{k}" for f, (rule, _) in FAMILIES.items() if rule != "none"]
        assert_matches_reference(labels, rankings, 1, names)
        result = score(Qrels.from_dict(labels), Run.from_dict(rankings), names + ["map", "ndcg", "mrr"])
        assert result.means[f"map@{k}"] == result.means["map"] == pytest.approx((1 + 2 / 3) / 3 / 2)
        assert result.means[f"precision@{k}"] == 2 / k / 2


@pytest.mark.parametrize("k", [2**53, 2**53 + 1, 3**40, INT64_MAX, 10**308, 2**1024, 2**1024 + 1, 10**400],
                         ids=["2^53", "2^53+1", "3^40", "int64-max", "10^308", "2^1024", "2^1024+1", "10^400"])
def test_precision_and_f1_divide_by_any_cutoff_exactly(k):
    """hits / k rounded once, as Python divides ints: a cutoff a float cannot hold (past 2**53 not every int, past
    about 1.8e308 none) once gave an OverflowError or a doubly rounded quotient. Subnormal results stay."""
    labels = {"q1": {"a": 1, "b": 1, "c": 1}, "q2": {"z": 1}, "q3": {"y": 1, "x": 1}}
    rankings = {"q1": ["b", "x", "a", "c"], "q2": ["y"], "q3": ["x"]}
    result = score(Qrels.from_dict(labels), Run.from_dict(rankings), [f"precision@{k}", f"f1@{k}", f"recall@{k}"])
    hits, n_relevant = [3, 0, 1], [3, 1, 2]
    assert result.per_query[f"precision@{k}"].tolist() == [h / k for h in hits]
    f1 = [2 * (h / k) * (h / n) / (h / k + h / n) if h else 0.0 for h, n in zip(hits, n_relevant)]
    assert result.per_query[f"f1@{k}"].tolist() == f1
    assert result.per_query[f"recall@{k}"].tolist() == [1.0, 0.0, 0.5]
    if k == 2**1024:
        assert result.per_query[f"precision@{k}"][2] == 2.0**-1024 > 0


def test_a_family_added_without_a_kernel_fails_naming_the_metric(monkeypatch):
    monkeypatch.setitem(FAMILIES, "novel", ("optional", "a family nobody wrote a kernel for"))
    with pytest.raises(AssertionError) as error:
        score(Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": ["a"]}), ["recall@3", "novel@3"])
    assert str(error.value) == "no kernel for novel@3"
