"""Reranking: a post-processor of any first stage (BEIR's shape). `RerankedRetriever` (reranked.py) searches its child,
re-scores the top `depth` hits with a `Reranker` and puts them first; rerankers come by name from one registry
(registry.py): ``st-cross:<id-or-folder>`` (cross_encoder.py), ``embed:<embedder>`` (embed.py), ``http:<url>``
(http.py: Cohere/Jina ``/v1/rerank`` or TEI ``/rerank``), and plugins (entry-point group ``ragretrieval.rerankers``).
"""

from .base import Reranker, RerankError, RerankSettings

__all__ = ["RerankError", "RerankSettings", "Reranker"]
