"""The `Embedder` protocol: an identity, and texts in, unit vectors out."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import InputError, RagretrievalError

SIDES = ("query", "passage")


class EmbedderError(RagretrievalError):
    """A model that cannot be found, loaded or asked."""


class ModelNotFoundError(EmbedderError):
    """A model name that is neither a folder nor a model in the local cache: a bad ``--model`` (exit 2)."""

    exit_code = 2


class UnusableSetting(EmbedderError, InputError):
    """A setting the model cannot take (a dtype for a model without one, a batch size for @int8): exit 2."""


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
        check_side(side)
        return self


def check_side(side: str) -> str:
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}; got {side!r}")
    return side


class Asymmetric:
    """Mixin for embedders that embed questions and chunks differently: a subclass defines ``embed_side(texts,
    side)`` and ``side_identity(side)``. Used without `for_side`, it embeds as the passage side (chunks)."""

    def embed_side(self, texts: Sequence[str], side: str) -> np.ndarray:
        raise NotImplementedError

    def side_identity(self, side: str) -> str:
        raise NotImplementedError

    @property
    def identity(self) -> str:
        return self.side_identity("passage")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_side(texts, "passage")

    def for_side(self, side: str) -> "SideView":
        return SideView(self, check_side(side))


class SideView:
    """One side of an asymmetric embedder, with that side's identity (its own cache key)."""

    def __init__(self, parent: Asymmetric, side: str):
        self.parent, self.side = parent, side

    @property
    def identity(self) -> str:
        return self.parent.side_identity(self.side)

    @property
    def usage(self):
        """The parent's API usage, if it calls an API (openai_api.py)."""
        return getattr(self.parent, "usage", None)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.parent.embed_side(texts, self.side)

    def for_side(self, side: str) -> "SideView":
        return self.parent.for_side(side)
