"""The model-free hashing embedder: deterministic, normalised, lexical, selectable by name."""

from __future__ import annotations

import numpy as np
import pytest

from ragretrieval.embedders import EmbedderError, get_embedder
from ragretrieval.embedders.hashing import HashingEmbedder


def test_vectors_are_deterministic_unit_rows_and_lexical():
    embedder = get_embedder("hashing-128")
    texts = ["红烧肉的做法", "红烧肉怎么做", "how to boil an egg", ""]
    vectors = embedder.embed(texts)
    assert vectors.shape == (4, 128) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0) and not vectors[3].any()
    assert np.array_equal(vectors, HashingEmbedder(128).embed(texts))
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.3 and abs(unrelated) < similar
    assert embedder.identity == "hashing:blake2b-signed:dim=128:normalize=True:v1"
    assert get_embedder("hashing").dim == 256


def test_bad_names_are_refused():
    with pytest.raises(EmbedderError, match="expected 'hashing' or 'hashing-<dimension>'"):
        get_embedder("hashing-big")
    with pytest.raises(EmbedderError, match="dimension must be positive"):
        HashingEmbedder(0)
