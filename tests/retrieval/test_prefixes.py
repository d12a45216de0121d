"""Query and passage prefixes: known defaults per model family, explicit ones for any embedder, each side's prefix
in its identity (so a prefixed and a bare run never share cache entries), and the run's configuration."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.embedders import get_embedder
from ragretrieval.embedders.prefixes import BGE_ZH, E5, default_prefixes
from ragretrieval.testing.embedder_conformance import EmbedderConformance


@pytest.mark.parametrize("name, expected", [
    ("intfloat/multilingual-e5-small", E5), ("intfloat/e5-base-v2", E5), ("./models/e5-large", E5),
    ("BAAI/bge-small-zh-v1.5", BGE_ZH), ("m3e-small", ("", "")), ("BAAI/bge-m3", ("", "")),
    ("sentence-transformers/all-MiniLM-L6-v2", ("", "")),
])
def test_known_families_have_default_prefixes(name, expected):
    assert default_prefixes(name) == expected


def test_a_prefix_is_put_before_the_text_and_named_in_the_identity():
    bare = get_embedder("hashing-64")
    prefixed = get_embedder("hashing-64", settings={"query_prefix": "query: ", "passage_prefix": "passage: "})
    query, passage = prefixed.for_side("query"), prefixed.for_side("passage")
    assert np.array_equal(query.embed(["红烧肉"]), bare.embed(["query: 红烧肉"]))
    assert np.array_equal(passage.embed(["红烧肉"]), bare.embed(["passage: 红烧肉"]))
    assert query.identity == bare.identity + ':query-prefix="query: "'
    assert passage.identity == bare.identity + ':passage-prefix="passage: "'


def test_an_empty_prefix_or_none_leaves_the_embedder_as_it_is():
    assert get_embedder("hashing-64", settings={"query_prefix": ""}).identity == get_embedder("hashing-64").identity
    e5 = get_embedder("e5-small-q4", settings={"query_prefix": "请回答："})
    assert e5.for_side("query").identity.endswith('side=query:query-prefix="请回答："')
    assert e5.for_side("passage").identity == get_embedder("e5-small-q4").for_side("passage").identity


def test_prefixes_are_in_the_run_configuration_and_embedder_identities(demo_dataset, tmp_path):
    out = tmp_path / "run.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--model", "hashing-128",
                                       "--query-prefix", "问：", "--no-save", "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["config"]["embed"] == {"query_prefix": "问："}
    assert report["retriever"]["embedders"]["dense.query"].endswith('query-prefix="问："')
    assert report["retriever"]["embedders"]["dense"] == get_embedder("hashing-128").identity


class TestPrefixedHashing(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "hashing-64"

    @pytest.fixture
    def options(self):
        return {"settings": {"query_prefix": "query: ", "passage_prefix": "passage: "}}
