"""The sweep grid's ``embed_dtypes`` axis: one cell per local model and dtype; a model that takes no dtype runs once."""

from __future__ import annotations

import pytest

from ragretrieval.runs.sweep import cell_embed
from ragretrieval.runs.sweep_grid import SweepError, validated_grid


def test_a_dtype_reaches_local_models_only():
    assert cell_embed({}, "m3e-small", "bfloat16") == {"dtype": "bfloat16"}
    assert cell_embed({"query_prefix": "q"}, "st:/models/x", "float16") == {"query_prefix": "q", "dtype": "float16"}
    assert cell_embed({}, "m3e-small", "auto") is None
    for takes_none in ("hashing-64", "e5-small-q4", "openai:text-embedding-3-small", "m3e-small@int8"):
        assert cell_embed({}, takes_none, "bfloat16") is None


@pytest.mark.parametrize("fields, says", [
    ({"embed_dtypes": []}, "embed_dtypes must not be empty"),
    ({"embed_dtypes": ["fp16"]}, "field 'embed_dtypes.0'"),
    ({"embed": {"dtype": "float16"}}, "the dtypes go in embed_dtypes"),
])
def test_a_bad_axis_is_refused_naming_the_field(fields, says):
    with pytest.raises(SweepError, match=says):
        validated_grid({"dataset": "d", **fields})


def test_a_scalar_is_an_axis_of_one():
    assert validated_grid({"dataset": "d", "embed_dtypes": "bfloat16"}).embed_dtypes == ["bfloat16"]
    assert validated_grid({"dataset": "d"}).embed_dtypes == ["auto"]
