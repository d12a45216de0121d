"""`Run.from_dict` and `Qrels.from_dict` at their edges: no query, an empty ranking, scored and unscored rankings."""

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
    with pytest.raises(ValueError, match="mix of scored and unscored rankings"):
        Run.from_dict({"q1": {"a": 1.0}, "q2": ["a"]})


def test_a_scored_run_from_a_dict_is_ranked_by_its_scores():
    run = Run.from_dict({"q": {"a": 1.0, "b": 3.0}})  # b is listed second but scores higher
    assert score(Qrels.from_dict({"q": {"b": 1}}), run, ["mrr"]).means["mrr"] == 1.0
