"""A random-weight sentence-transformers model of the tiny shape (ragretrieval/testing/random_models.py), made once
per session: real loading, precisions and batching, in a second, with no model to download."""

from __future__ import annotations

import pytest

from ragretrieval.testing.random_models import make_random_model


@pytest.fixture(scope="session")
def random_model(tmp_path_factory):
    return make_random_model(tmp_path_factory.mktemp("random-model") / "tiny", "tiny")
