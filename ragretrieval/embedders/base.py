"""The `Embedder` protocol: an identity, and texts in, unit vectors out."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import RagretrievalError

SIDES = ("query", "passage")


class EmbedderError(RagretrievalError):
    """A model that cannot be found, loaded or asked."""


@runtime_checkable
class Embedder(Protocol):
    """Anything with an `identity`, an `embed` method and a view per side.

    `identity` names the exact model (id plus a hash of its weights or its revision, the normalisation, and anything
    else that changes vectors: prefixes, quantisation, side): the embedding cache is keyed by it, so two embedders
    with one identity must give the same vectors. `embed` returns a float32 array of shape (len(texts), dim), rows
    L2-normalised. `for_side("query")` / `for_side("passage")` is the embedder for questions / chunks: the same
    object for a symmetric model, a view with its own identity for a model that embeds the two sides differently
    (e5's ``query: `` / ``passage: `` prefixes, an API's ``input_type``).
    """

    identity: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def for_side(self, side: str) -> "Embedder": ...


class Symmetric:
    """Mixin for embedders that embed questions and chunks alike."""

    def for_side(self, side: str):
        if side not in SIDES:
            raise ValueError(f"side must be one of {', '.join(SIDES)}; got {side!r}")
        return self
