"""`HashingEmbedder`: feature hashing of tokens into a fixed number of signed buckets, L2-normalised.

No model, no download, no torch: it embeds thousands of texts per second, gives the same vectors on every machine
and in every process, and needs nothing but NumPy. That makes it the embedder for smoke tests of the dense path
(stores, executors, caches) and a cheap lexical baseline; it is not semantic, so never read its numbers as those of
a real model. Tokens are those of the BM25 retriever: lower-cased words, Chinese as character unigrams and bigrams.
Use it as ``--model hashing`` (256 dimensions) or ``--model hashing-<dim>``.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from ..text import tokenize
from .base import EmbedderError, Symmetric

DEFAULT_DIM = 256


class HashingEmbedder(Symmetric):
    def __init__(self, dim: int = DEFAULT_DIM):
        if dim <= 0:
            raise EmbedderError(f"hashing embedder: dimension must be positive, got {dim}")
        self.dim = dim
        self.identity = f"hashing:blake2b-signed:dim={dim}:normalize=True:v1"

    @classmethod
    def from_name(cls, name: str) -> "HashingEmbedder":
        """``hashing`` or ``hashing-<dim>``."""
        _, _, dim = name.partition("-")
        if dim and not dim.isdigit():
            raise EmbedderError(f"{name!r}: expected 'hashing' or 'hashing-<dimension>', e.g. 'hashing-384'")
        return cls(int(dim) if dim else DEFAULT_DIM)

    def _bucket(self, token: str) -> tuple[int, float]:
        value = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
        return value % self.dim, 1.0 if value >> 63 else -1.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                bucket, sign = self._bucket(token)
                vectors[row, bucket] += sign
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.divide(vectors, norms, out=vectors, where=norms > 0)
