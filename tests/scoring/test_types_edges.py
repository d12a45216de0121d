"""`Run.from_dict` and `Qrels.from_dict` at their edges (no query, an empty ranking, scored and unscored rankings), and
what `from_arrays` refuses, with its message in full, and stores."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.scoring import Qrels, Run, score


def test_run_from_dict_scored_unscored_and_empty():
    ranked = Run.from_dict({"q1": ["a", "b"], "q2": ["b"]})
    assert ranked.scores is None and ranked.codes.tolist() == [[0, 1], [1, -1]] and ranked.codes.dtype == np.int64
    scored = Run.from_dict({"q1": {"a": 2.0, "b": 1.0}, "q2": {}})
    assert scored.scores is not None and scored.scores[0].tolist() == [2.0, 1.0]
    assert scored.codes.tolist() == [[0, 1], [-1, -1]]
    nothing = Run.from_dict({})
    assert nothing.codes.shape == (0, 0) and nothing.n_queries == 0
    assert Run.from_dict({"q": []}).codes.shape == (1, 0)
    with pytest.raises(ValueError, match="^mix of scored and unscored rankings$"):
        Run.from_dict({"q1": {"a": 1.0}, "q2": ["a"]})


def test_a_scored_run_from_a_dict_is_ranked_by_its_scores():
    run = Run.from_dict({"q": {"a": 1.0, "b": 3.0}})  # b is listed second but scores higher
    assert score(Qrels.from_dict({"q": {"b": 1}}), run, ["mrr"]).means["mrr"] == 1.0


# ---- from_arrays: what it refuses (each message in full) and what it stores


def refused(call, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as error:
        call(*args, **kwargs)
    return str(error.value)


INDPTR = "indptr must start at 0, rise monotonically and have one entry per query plus one"


@pytest.mark.parametrize(
    "query_ids, indptr, doc_codes",
    [
        (["q"], [0], []),  # one entry short
        (["q"], [0, 0, 0], []),  # one entry too many
        (["q"], [1, 1], [0]),  # does not start at 0 (and ends at len(doc_codes))
        (["q1", "q2"], [0, 2, 1], [0]),  # falls
    ],
)
def test_qrels_from_arrays_refuses_a_bad_indptr(query_ids, indptr, doc_codes):
    labels = [1] * len(doc_codes)
    assert refused(Qrels.from_arrays, query_ids, ["a", "b"], indptr, doc_codes, labels) == INDPTR


@pytest.mark.parametrize("indptr, doc_codes, labels", [([0, 2], [0, 1], [1]), ([0, 1], [0, 1], [1, 1])])
def test_qrels_from_arrays_refuses_judgements_that_do_not_fit_indptr(indptr, doc_codes, labels):
    message = refused(Qrels.from_arrays, ["q"], ["a", "b"], indptr, doc_codes, labels)
    assert message == "doc_codes and labels must both have indptr[-1] entries"


@pytest.mark.parametrize("code", [2, 5, -1])
def test_qrels_from_arrays_refuses_a_code_outside_the_vocabulary(code):
    message = refused(Qrels.from_arrays, ["q"], ["a", "b"], [0, 2], [0, code], [1, 1])
    assert message == "doc_codes must index into doc_ids"


def test_qrels_from_arrays_refuses_repeated_ids_unless_told_they_are_unique():
    message = refused(Qrels.from_arrays, ["q1", "q2", "q2"], ["a"], [0, 0, 0, 0], [], [])
    assert message == "query ids must be unique: 'q2' appears more than once"
    message = refused(Qrels.from_arrays, ["q"], ["a", "b", "a", "b"], [0, 0], [], [])
    assert message == "document ids must be unique: 'a' appears more than once"
    trusted = Qrels.from_arrays(["q"], ["a", "a"], [0, 1], [1], [1], check_ids=False)
    assert trusted.doc_ids.tolist() == ["a", "a"]


def test_qrels_from_arrays_sorts_each_querys_labels_by_doc_code():
    qrels = Qrels.from_arrays(["q1", "q2"], ["a", "b", "c"], [0, 3, 5], [0, 2, 1, 2, 0], [1, 3, 2, 4, 5])
    assert qrels.doc_codes.tolist() == [0, 1, 2, 0, 2] and qrels.labels.tolist() == [1, 2, 3, 5, 4]
    assert qrels.to_dict() == {"q1": {"a": 1, "b": 2, "c": 3}, "q2": {"a": 5, "c": 4}}
    reversed_pair = Qrels.from_arrays(["q"], ["a", "b"], [0, 2], [1, 0], [7, 8])
    assert reversed_pair.doc_codes.tolist() == [0, 1] and reversed_pair.labels.tolist() == [8, 7]


@pytest.mark.parametrize(
    "indptr, doc_codes, query, doc",
    [([0, 2, 2], [0, 0], "q1", "a"), ([0, 3, 3], [0, 1, 1], "q1", "b"), ([0, 0, 3], [2, 1, 2], "q2", "c"),
     ([0, 1, 5], [1, 0, 2, 0, 2], "q2", "a")],
)
def test_qrels_from_arrays_refuses_a_pair_judged_twice(indptr, doc_codes, query, doc):
    message = refused(Qrels.from_arrays, ["q1", "q2"], ["a", "b", "c"], indptr, doc_codes, [1] * len(doc_codes))
    assert message == f"duplicate label for query {query!r}, document {doc!r}"


def test_qrels_from_arrays_stores_int64_arrays_that_cannot_be_written():
    qrels = Qrels.from_arrays(["q"], ["a", "b"], np.array([0, 2], np.int32), np.array([1, 0], np.int16),
                              np.array([2, 1], np.int8))
    for array in (qrels.indptr, qrels.doc_codes, qrels.labels):
        assert array.dtype == np.int64
    for array in (qrels.query_ids, qrels.doc_ids, qrels.indptr, qrels.doc_codes, qrels.labels):
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[0] = array[0]


@pytest.mark.parametrize("codes", [[0, 1], [[[0]]], [[0], [1]], np.zeros((0, 2))])
def test_run_from_arrays_refuses_codes_that_are_not_one_row_per_query(codes):
    message = refused(Run.from_arrays, ["q"], ["a", "b"], codes)
    assert message == "codes must be a 2-d array with one row per query"


def test_run_from_arrays_refuses_a_single_row_as_a_flat_list():
    message = refused(Run.from_arrays, ["q"], ["a"], [0])  # one query, one code: the right length, not 2-d
    assert message == "codes must be a 2-d array with one row per query"


@pytest.mark.parametrize("code", [2, 9, -2])
def test_run_from_arrays_refuses_a_code_outside_the_vocabulary(code):
    message = refused(Run.from_arrays, ["q"], ["a", "b"], [[0, code]])
    assert message == "codes must index into doc_ids, with -1 for empty slots"


def test_run_from_arrays_checks_its_scores():
    message = refused(Run.from_arrays, ["q"], ["a", "b"], [[0, 1]], [[1.0]])
    assert message == "scores must have the same shape as codes"
    message = refused(Run.from_arrays, ["q"], ["a", "b"], [[0, 1]], [[1.0, np.nan]])
    assert message == "scores must not be NaN"
    padded = Run.from_arrays(["q"], ["a", "b"], [[0, -1]], [[1.0, np.nan]])  # an empty slot's score is never read
    assert padded.scores.dtype == np.float64
    whole = Run.from_arrays(["q"], ["a", "b"], np.array([[1, 0]], np.int32), [[3, 2]])
    assert whole.codes.dtype == np.int64 and whole.scores.dtype == np.float64 and whole.scores.tolist() == [[3, 2]]


def test_run_from_arrays_refuses_repeated_ids_unless_told_they_are_unique():
    message = refused(Run.from_arrays, ["q1", "q2", "q1"], ["a"], [[0], [0], [0]])
    assert message == "query ids must be unique: 'q1' appears more than once"
    message = refused(Run.from_arrays, ["q"], ["a", "b", "b"], [[0]])
    assert message == "document ids must be unique: 'b' appears more than once"
    trusted = Run.from_arrays(["q", "q"], ["a", "a"], [[0], [1]], check_ids=False)
    assert trusted.query_ids.tolist() == ["q", "q"] and trusted.doc_ids.tolist() == ["a", "a"]


def test_run_from_arrays_stores_arrays_that_cannot_be_written():
    run = Run.from_arrays(["q"], ["a", "b"], [[1, 0]], [[2.0, 1.0]])
    for array in (run.query_ids, run.doc_ids, run.codes, run.scores):
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[0] = array[0]
