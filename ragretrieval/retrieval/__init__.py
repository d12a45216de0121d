"""Retrieval: the `Retriever` protocol (base.py), the registry of retrievers by name (registry.py), the built-in
families (lexical.py: bm25; dense.py: embedder + vector store; external/: a service or a results file), hits named by
id (hits.py), and the roll-up from chunk rankings to documents (rollup.py)."""

from ..text import tokenize
from .base import Hit, Ranking, Retriever, RetrieverInfo, RetrieverSpec
from .dense import DenseRetriever
from .lexical import BM25Retriever
from .registry import BuildContext, RetrieverError, available_retrievers, build_retriever, spec_from_config
from .rollup import distinct_per_row, search_for_documents

__all__ = ["BM25Retriever", "BuildContext", "DenseRetriever", "Hit", "Ranking", "Retriever", "RetrieverError",
           "RetrieverInfo", "RetrieverSpec", "available_retrievers", "build_retriever", "distinct_per_row",
           "search_for_documents", "spec_from_config", "tokenize"]
