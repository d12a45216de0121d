"""`ragretrieval.score` on what scores nothing or holds holes: scoring no query is an error (a mean of 0.0 over no
query is a made-up number), and a DataFrame cell that is missing (None, NaN, pd.NA) or not a grade is refused
naming its row and column, never read as a query called "<NA>" nor left to a bare ValueError."""

from __future__ import annotations

import pandas as pd
import pytest

import ragretrieval as rr
from ragretrieval.scoring import ScoringError

RUN = {"q1": {"d1": 1.0, "d2": 0.5}}


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


@pytest.mark.parametrize("qrels, run", [
    ({}, {}),
    ({}, RUN),
    (frame(query_id=[], doc_id=[], relevance=[]), frame(query_id=[], doc_id=[], score=[])),
    (frame(query_id=[], doc_id=[], relevance=[]), RUN),
])
def test_scoring_nothing_is_an_error_not_a_mean_of_zero(qrels, run):
    with pytest.raises(ScoringError, match="nothing to score: the qrels judge no query"):
        rr.score(qrels, run, ["recall@5"])


def test_queries_both_with_no_judged_query_in_the_run_is_an_error_too():
    with pytest.raises(ScoringError, match="none of the 1 judged queries is in the run"):
        rr.score({"q9": {"d1": 1}}, RUN, ["recall@5"], queries="both")
    assert rr.score({"q9": {"d1": 1}}, RUN, ["recall@5"]).means == {"recall@5": 0.0}  # judged, nothing found: 0


@pytest.mark.parametrize("missing", [pd.NA, None, float("nan")])
def test_a_missing_query_id_names_the_row_and_column(missing):
    qrels = frame(query_id=["q1", missing], doc_id=["d1", "d2"], relevance=[1, 1])
    qrels.index = [10, 11]
    with pytest.raises(ScoringError, match=r"^qrels: row 11: column 'query_id' is missing \(None, NaN or NA\)$"):
        rr.score(qrels, RUN, ["recall@5"])


def test_a_nan_or_fractional_relevance_names_the_row_and_column():
    with pytest.raises(ScoringError, match="^qrels: row 1: column 'relevance' is missing"):
        rr.score(frame(query_id=["q1", "q2"], doc_id=["d1", "d2"], relevance=[1, float("nan")]), RUN, ["recall@5"])
    with pytest.raises(ScoringError, match="^qrels: row 1: column 'grade': 1.5 is not a whole number"):
        rr.score(frame(query_id=["q1", "q2"], doc_id=["d1", "d2"], grade=[1, 1.5]), RUN, ["recall@5"])
    whole = frame(query_id=["q1", "q1"], doc_id=["d1", "d2"], relevance=[1.0, 2.0])  # a float column of grades
    assert rr.score(whole, RUN, ["recall@5"]).means == {"recall@5": 1.0}


def test_a_run_frame_with_a_missing_doc_or_score_names_the_row_and_column():
    qrels = {"q1": {"d1": 1}}
    with pytest.raises(ScoringError, match="^run: row 'b': column 'doc_id' is missing"):
        rr.score(qrels, pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", None], "score": [1.0, 0.5]},
                                     index=["a", "b"]), ["recall@5"])
    with pytest.raises(ScoringError, match="^run: row 0: column 'score' is missing"):
        rr.score(qrels, frame(query_id=["q1"], doc_id=["d1"], score=[float("nan")]), ["recall@5"])
