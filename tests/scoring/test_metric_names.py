"""Metric names as users type them: what `Metric`, `parse_metric` and `expand_cutoffs` accept, and the exact error
for each thing they refuse (the messages are the interface: the CLI prints them as they are)."""

from __future__ import annotations

import pytest

from ragretrieval.errors import RagretrievalError
from ragretrieval.scoring.metrics import Metric, MetricError, expand_cutoffs, parse_metric, parse_metrics

KNOWN = "f1, hit_rate, map, mrr, ndcg, ndcg_exp, precision, r_precision, recall"  # FAMILIES, sorted by hand


def refused(call, *args) -> str:
    with pytest.raises(MetricError) as error:
        call(*args)
    assert isinstance(error.value, RagretrievalError)
    return str(error.value)


def test_an_unknown_family_lists_the_known_ones():
    assert refused(Metric, "recal", 5) == f"unknown metric 'recal'; known metrics: {KNOWN}"
    assert refused(parse_metric, "nope@3") == f"unknown metric 'nope'; known metrics: {KNOWN}"


@pytest.mark.parametrize("family", ["precision", "recall", "hit_rate", "f1"])
def test_families_that_need_a_cutoff(family):
    assert refused(Metric, family) == f"metric '{family}' needs a cutoff, e.g. '{family}@10'"
    assert refused(parse_metric, family) == f"metric '{family}' needs a cutoff, e.g. '{family}@10'"
    assert Metric(family, 3).name == f"{family}@3"


def test_r_precision_takes_no_cutoff():
    assert refused(Metric, "r_precision", 5) == "metric 'r_precision' takes no cutoff"
    assert refused(parse_metric, "r_precision@5") == "metric 'r_precision' takes no cutoff"
    assert Metric("r_precision").name == "r_precision"


@pytest.mark.parametrize("family", ["mrr", "ndcg", "ndcg_exp", "map"])
def test_an_optional_cutoff(family):
    assert Metric(family).name == family and Metric(family).k is None
    assert Metric(family, 1).name == f"{family}@1"


@pytest.mark.parametrize("k", [0, -1, True, False, 2.5, 10.0, "10"])
def test_a_cutoff_is_a_positive_int(k):
    assert refused(Metric, "ndcg", k) == f"cutoff of 'ndcg' must be a positive integer, got {k!r}"


def test_parse_metric_reads_what_users_type():
    assert parse_metric("ndcg@10") == Metric("ndcg", 10)
    assert parse_metric("  mrr\n") == Metric("mrr")
    assert parse_metric("r_precision") == Metric("r_precision")
    same = Metric("map", 5)
    assert parse_metric(same) is same


@pytest.mark.parametrize("text", ["NDCG@10", "ndcg@1@2", "", "@5", "ndcg 10"])
def test_a_name_that_cannot_be_parsed(text):
    expected = f"cannot parse metric name {text!r}; expected a name like 'recall@10' or 'mrr'"
    assert refused(parse_metric, text) == expected


@pytest.mark.parametrize("text", [5, None, b"mrr", ["mrr"]])
def test_a_name_that_is_not_a_string(text):
    expected = f"cannot parse metric name {text!r}; expected a name like 'recall@10' or 'mrr'"
    assert refused(parse_metric, text) == expected


@pytest.mark.parametrize("text, k_text", [("ndcg@x", "x"), ("ndcg@", ""), ("ndcg@1.5", "1.5"), ("ndcg@+3", "+3")])
def test_a_cutoff_that_is_not_a_whole_number(text, k_text):
    assert refused(parse_metric, text) == f"cutoff of 'ndcg' must be a positive integer, got {k_text!r} in {text!r}"


@pytest.mark.parametrize("text, k", [("ndcg@0", 0), ("ndcg@-2", -2)])
def test_a_cutoff_that_is_whole_but_not_positive(text, k):
    assert refused(parse_metric, text) == f"cutoff of 'ndcg' must be a positive integer, got {k!r}"


def test_parse_metrics_keeps_each_name_once_in_first_seen_order():
    assert parse_metrics(["mrr", "ndcg@10", Metric("mrr"), " ndcg@10"]) == [Metric("mrr"), Metric("ndcg", 10)]


def test_expand_cutoffs_pairs_each_family_with_each_cutoff():
    assert expand_cutoffs(["recall", "mrr"], [1, 5]) == [Metric("recall", 1), Metric("recall", 5),
                                                          Metric("mrr", 1), Metric("mrr", 5)]
    # a family that takes no cutoff is given without one, once per cutoff (as the docstring's loop says)
    assert expand_cutoffs(["r_precision", "precision"], [3]) == [Metric("r_precision"), Metric("precision", 3)]
    assert [m.name for m in expand_cutoffs(["ndcg"], [2, 4])] == ["ndcg@2", "ndcg@4"]
    assert expand_cutoffs(["map"], []) == []
