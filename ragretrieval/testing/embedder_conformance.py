"""The conformance suite every embedder runs: subclass `EmbedderConformance`, name the model, inherit the tests.

An embedder (built in, or a plugin from the entry-point group ``ragretrieval.embedders``) proves it can stand behind
the embedding cache and the dense retriever::

    import pytest
    from ragretrieval.testing.embedder_conformance import EmbedderConformance

    class TestMyEmbedder(EmbedderConformance):
        @pytest.fixture
        def model_name(self):
            return "my-model"

Fixtures: ``model_name`` (required), ``options`` (keyword options for `get_embedder`, default none),
``tolerance`` (how far two embeddings of one text may differ, default 1e-5: batching changes float sums).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ..embedders import Embedder, get_embedder
from ..embedders.base import SIDES

TEXTS = ["如何做红烧肉？", "先把五花肉切块焯水，再炒糖色。", "How do I cook rice?", "", "a " * 40]


class EmbedderConformance:
    @pytest.fixture
    def model_name(self) -> str:
        raise NotImplementedError("a conformance test class must give the `model_name` fixture")

    @pytest.fixture
    def options(self) -> dict:
        return {}

    @pytest.fixture
    def tolerance(self) -> float:
        return 1e-5

    @pytest.fixture
    def embedder(self, model_name, options) -> Embedder:
        return get_embedder(model_name, **options)

    def test_follows_the_protocol(self, embedder):
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.identity, str) and embedder.identity
        for side in SIDES:
            assert isinstance(embedder.for_side(side), Embedder)

    def test_identity_is_stable_and_names_what_changes_vectors(self, embedder, model_name, options):
        assert get_embedder(model_name, **options).identity == embedder.identity
        sides = {embedder.for_side(side).identity for side in SIDES}
        vectors = {side: embedder.for_side(side).embed(TEXTS[:1]) for side in SIDES}
        if not np.allclose(vectors["query"], vectors["passage"], atol=1e-6):
            assert len(sides) == 2, "sides that embed differently must have different identities (cache keys)"

    def test_unit_float32_rows_one_per_text(self, embedder):
        for side in SIDES:
            vectors = embedder.for_side(side).embed(TEXTS)
            assert vectors.dtype == np.float32 and vectors.ndim == 2 and vectors.shape[0] == len(TEXTS)
            norms = np.linalg.norm(vectors[[0, 1, 2, 4]], axis=1)  # the empty text may be a zero vector
            assert np.allclose(norms, 1.0, atol=1e-3), norms

    def test_deterministic_and_independent_of_batching(self, embedder, tolerance):
        side = embedder.for_side("passage")
        together = side.embed(TEXTS)
        alone = np.stack([side.embed([text])[0] for text in TEXTS])
        assert np.abs(together - alone).max() <= tolerance
        assert np.abs(side.embed(TEXTS) - together).max() <= tolerance

    def test_no_texts_no_rows(self, embedder):
        assert embedder.for_side("query").embed([]).shape[0] == 0

    def test_pickles_as_a_recipe(self, embedder):
        """Executors ship embedders to workers (embedders/executors): a pickled embedder embeds the same."""
        copy = pickle.loads(pickle.dumps(embedder))
        assert copy.identity == embedder.identity
        assert np.allclose(copy.embed(TEXTS[:2]), embedder.embed(TEXTS[:2]), atol=1e-5)
