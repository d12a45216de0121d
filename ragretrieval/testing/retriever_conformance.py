"""The conformance suite every retriever runs: subclass `RetrieverConformance`, give its spec, inherit the tests.

A retriever (built in, or a plugin from the entry-point group ``ragretrieval.retrievers``) proves it behaves as
`evaluate` and `answer` expect by running these tests::

    import pytest
    from ragretrieval.retrieval import RetrieverSpec
    from ragretrieval.testing.retriever_conformance import RetrieverConformance

    class TestMyRetriever(RetrieverConformance):
        @pytest.fixture
        def spec(self):
            return RetrieverSpec(name="my-retriever", options={"depth_limit": 50})

Fixtures a subclass gives or overrides:

- ``spec`` (required): the `RetrieverSpec` the registry builds the retriever from.
- ``context``: the `BuildContext` (default: a fresh embedding cache in a temporary folder, no progress output).
- ``prefix_consistent``: whether the first d hits of a search at depth 2d are the hits of a search at depth d
  (default True; a fusion of top lists whose length depends on the depth may say False).
- ``min_doc_recall``: the least document recall@10 the retriever must reach on the demo dataset (default 0.5; a
  deliberately bad toy may set 0).
- ``demo_corpus``: the Markdown folder of the end-to-end test (default ``datasets/demo/dishes`` of the source tree).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ..data.chunking import ChunkPolicy, chunk_corpus
from ..data.corpus import load_corpus
from ..data.dataset import Dataset, Manifest
from ..data.filename_questions import filename_questions
from ..retrieval.base import Ranking, Retriever, RetrieverInfo, RetrieverSpec
from ..retrieval.registry import BuildContext, build_retriever

DEFAULT_DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "dishes"


class RetrieverConformance:
    @pytest.fixture
    def spec(self) -> RetrieverSpec:
        raise NotImplementedError("a conformance test class must give the `spec` fixture")

    @pytest.fixture
    def context(self, tmp_path) -> BuildContext:
        from ..embedders import EmbeddingCache

        return BuildContext(cache=EmbeddingCache(tmp_path / "cache"))

    @pytest.fixture
    def prefix_consistent(self) -> bool:
        return True

    @pytest.fixture
    def min_doc_recall(self) -> float:
        return 0.5

    @pytest.fixture
    def demo_corpus(self) -> Path:
        return DEFAULT_DEMO

    @pytest.fixture
    def demo(self, demo_corpus) -> Dataset:
        if not demo_corpus.is_dir():
            pytest.skip(f"demo corpus {demo_corpus} not found; override the demo_corpus fixture")
        corpus = load_corpus(demo_corpus)
        questions = tuple(filename_questions(corpus.documents))
        manifest = Manifest(corpus_fingerprint=corpus.fingerprint, n_documents=len(corpus.documents),
                            n_questions=len(questions))
        return Dataset(demo_corpus, corpus.documents, questions, manifest)

    @pytest.fixture
    def indexed(self, spec, context, demo):
        chunks = chunk_corpus(demo.documents, ChunkPolicy())
        retriever = build_retriever(spec, context)
        retriever.index(chunks)
        return retriever, chunks

    # ---- the protocol ----------------------------------------------------------------------------------------------
    def test_follows_the_protocol(self, indexed):
        retriever, _ = indexed
        assert isinstance(retriever, Retriever)
        assert isinstance(retriever.info(), RetrieverInfo)
        assert all(isinstance(v, float) for v in retriever.timings.values()), retriever.timings

    def test_spec_survives_a_json_round_trip(self, spec):
        assert RetrieverSpec.model_validate_json(spec.model_dump_json()) == spec

    def test_ranking_shape_and_codes(self, indexed, demo):
        retriever, chunks = indexed
        questions = demo.questions[:7]
        ranking = retriever.search(questions, 12)
        assert isinstance(ranking, Ranking)
        assert ranking.positions.dtype == np.int64 and ranking.positions.shape[0] == len(questions)
        assert ranking.positions.shape[1] <= 12 and ranking.scores.shape == ranking.positions.shape
        table = len(chunks) + len(ranking.foreign)
        assert ranking.positions.min(initial=0) >= -1 and ranking.positions.max(initial=0) < table
        for row in ranking.positions:
            found = row[row >= 0]
            assert (row[len(found):] == -1).all(), "padding (-1) only at the end of a row"
            ours = found[found < len(chunks)]
            assert len(set(ours.tolist())) == len(ours), "a chunk appears once per ranking"

    def test_finds_something_for_every_demo_question(self, indexed, demo):
        retriever, _ = indexed
        ranking = retriever.search(demo.questions, 5)
        assert (ranking.positions[:, 0] >= 0).all()

    def test_a_deeper_search_extends_a_shallower_one(self, indexed, demo, prefix_consistent):
        if not prefix_consistent:
            pytest.skip("this retriever's top hits depend on the depth asked")
        retriever, _ = indexed
        shallow, deep = retriever.search(demo.questions[:5], 4), retriever.search(demo.questions[:5], 8)
        assert shallow.positions.tolist() == deep.positions[:, :4].tolist()

    def test_no_questions_no_rows(self, indexed):
        retriever, _ = indexed
        assert retriever.search([], 5).positions.shape[0] == 0

    # ---- end to end ------------------------------------------------------------------------------------------------
    def test_evaluates_the_demo(self, spec, context, demo, min_doc_recall):
        from ..evaluation.pipeline import evaluate

        config = config_for(spec)
        report = evaluate(demo, config, context=context)
        recorded = report.retriever["spec"]
        assert recorded["name"] == spec.name, "the run records the spec it ran"
        assert [c["name"] for c in recorded["children"]] == [c.name for c in spec.children]
        means = report.means["doc"]
        assert all(0.0 <= value <= 1.0 for value in means.values())
        assert means["recall@10"] >= min_doc_recall
        assert len(report.questions) == len(demo.questions)


def config_for(spec: RetrieverSpec):
    """The evaluation configuration whose spec is `spec`: the settings its class reads (`config_fields`), its other
    options as ``retriever_options``; a ``rerank`` spec is its first stage's configuration with ``rerank`` set."""
    from ..evaluation.report import EvalConfig
    from ..retrieval.registry import retriever_class

    if spec.name == "rerank":
        first = config_for(spec.children[0])
        return EvalConfig(**{**first.model_dump(), "rerank": {k: v for k, v in spec.options.items() if k != "embed"}})
    fields = retriever_class(spec.name).config_fields
    return EvalConfig(retriever=spec.name, **{k: v for k, v in spec.options.items() if k in fields},
                      retriever_options={k: v for k, v in spec.options.items() if k not in fields})
