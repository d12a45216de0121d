"""`score()` itself: how it takes metrics and options, the exact error for each option it refuses, and what the
options do on a run small enough to rank by hand (docs/metrics.md, "Options of score()")."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.errors import RagretrievalError
from ragretrieval.scoring import Qrels, Run, score
from ragretrieval.scoring.metrics import Metric
from ragretrieval.scoring.types import ScoringError

QRELS = Qrels.from_dict({"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"d": 1}})
# q1: a (label 1) at rank 2, c (label 0) at 3, b (label 2) at 4; q2: d at rank 1
RUN = Run.from_dict({"q1": ["x", "a", "c", "b"], "q2": ["d"]})


def refused(**options) -> str:
    with pytest.raises(ScoringError) as error:
        score(QRELS, RUN, options.pop("metrics", ["mrr"]), **options)
    assert isinstance(error.value, RagretrievalError)
    return str(error.value)


def test_one_metric_may_be_given_alone_as_a_name_or_a_metric():
    for metrics in ("mrr", Metric("mrr"), ["mrr"], (Metric("mrr"),)):
        result = score(QRELS, RUN, metrics)
        assert result.metrics == [Metric("mrr")]
        assert result.per_query["mrr"].tolist() == [0.5, 1.0] and result.means == {"mrr": 0.75}


def test_the_result_keeps_the_metrics_in_the_order_given_and_to_dict_gives_the_means():
    result = score(QRELS, RUN, ["recall@2", "mrr", "recall@2"])
    assert result.metrics == [Metric("recall", 2), Metric("mrr")]
    assert result.query_ids.tolist() == ["q1", "q2"] and result.missing_queries == []
    # recall@2: q1 finds a of {a, b} (c's label 0 is not relevant), q2 finds d
    assert result.to_dict() == {"recall@2": 0.75, "mrr": 0.75}
    copy = result.to_dict()
    copy["mrr"] = 0.0
    assert result.means["mrr"] == 0.75


def test_no_metric_is_an_error():
    assert refused(metrics=[]) == "no metrics given"


@pytest.mark.parametrize(
    "option, value, allowed",
    [("ties", "Score", "score, rank"), ("ties", None, "score, rank"), ("duplicates", "last", "first, error"),
     ("queries", "some", "all, both")],
)
def test_an_unknown_option_value_names_the_option_and_its_values(option, value, allowed):
    assert refused(**{option: value}) == f"{option} must be one of {allowed}; got {value!r}"


@pytest.mark.parametrize("rel_level", [0, -1, 1.5, "2", None, np.int64(0)])
def test_rel_level_is_an_integer_of_at_least_one(rel_level):
    assert refused(rel_level=rel_level) == f"rel_level must be an integer >= 1, got {rel_level!r}"


def test_rel_level_decides_which_labels_are_relevant():
    assert score(QRELS, RUN, "mrr", rel_level=1).per_query["mrr"].tolist() == [0.5, 1.0]
    # at level 2 only b (rank 4) is relevant for q1, and q2 has nothing relevant
    assert score(QRELS, RUN, "mrr", rel_level=np.int64(2)).per_query["mrr"].tolist() == [0.25, 0.0]


@pytest.mark.parametrize("depth", [0, -3])
def test_depth_is_positive(depth):
    assert refused(depth=depth) == f"depth must be a positive integer, got {depth!r}"


def test_depth_keeps_the_first_docs_of_each_ranking():
    assert score(QRELS, RUN, "mrr", depth=1).per_query["mrr"].tolist() == [0.0, 1.0]
    assert score(QRELS, RUN, "mrr", depth=2).per_query["mrr"].tolist() == [0.5, 1.0]
    assert score(QRELS, RUN, "mrr", depth=3).per_query["mrr"].tolist() == [0.5, 1.0]
    assert score(QRELS, RUN, "ndcg", depth=4).per_query["ndcg"].tolist() == score(QRELS, RUN, "ndcg").per_query[
        "ndcg"].tolist()


def test_a_repeated_doc_keeps_its_first_rank_or_is_refused():
    run = Run.from_dict({"q1": ["x", "x", "a"], "q2": ["d", "d"]})
    assert score(QRELS, run, "mrr").per_query["mrr"].tolist() == [0.5, 1.0]  # a is the second distinct doc
    assert score(QRELS, run, "mrr", duplicates="first").per_query["mrr"].tolist() == [0.5, 1.0]
    with pytest.raises(ScoringError) as error:
        score(QRELS, run, "mrr", duplicates="error")
    assert str(error.value) == "query 'q1' retrieves document 'x' more than once"


def test_queries_missing_from_the_run_score_zero_or_are_left_out():
    run = Run.from_dict({"q1": ["a"], "elsewhere": ["d"]})
    every = score(QRELS, run, "mrr")
    assert every.missing_queries == ["q2"] and every.query_ids.tolist() == ["q1", "q2"]
    assert every.per_query["mrr"].tolist() == [1.0, 0.0] and every.means == {"mrr": 0.5}
    both = score(QRELS, run, "mrr", queries="both")
    assert both.missing_queries == ["q2"] and both.query_ids.tolist() == ["q1"]
    assert both.per_query["mrr"].tolist() == [1.0] and both.means == {"mrr": 1.0}


def test_with_every_query_in_the_run_none_is_missing():
    for run in (RUN, Run.from_dict({"q2": ["d"], "q1": ["a"]})):  # in the qrels' order, or another
        result = score(QRELS, run, "mrr", queries="both")
        assert result.missing_queries == [] and result.query_ids.tolist() == ["q1", "q2"]


def test_scoring_no_query_is_an_error_not_a_mean_of_zero():
    run = Run.from_dict({"elsewhere": ["a"]})
    with pytest.raises(ScoringError, match=r"nothing to score: none of the 2 judged queries is in the run"):
        score(QRELS, run, ["mrr", "ndcg@3"], queries="both")
    with pytest.raises(ScoringError, match="nothing to score: the qrels judge no query"):
        score(Qrels.from_dict({}), Run.from_dict({}), "mrr")
    assert score(QRELS, run, ["mrr"]).means == {"mrr": 0.0}  # judged queries the run lacks: each scores 0
