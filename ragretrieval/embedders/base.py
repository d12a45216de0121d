"""The `Embedder` protocol."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Anything with an `identity` and an `embed` method.

    `identity` names the exact model (id plus a hash of its weights or its revision, and the normalisation): the
    embedding cache is keyed by it, so two embedders with one identity must give the same vectors.
    `embed` returns a float32 array of shape (len(texts), dim), rows L2-normalised when the identity says so.
    """

    identity: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
