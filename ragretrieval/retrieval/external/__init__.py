"""Retrievers that run outside ragretrieval: a running retrieval service (`http`) or results already on disk
(`run-file`). Both answer with ids (see ../hits.py); docs/bring-your-own.md shows how to use them."""

from __future__ import annotations

from ...errors import RagretrievalError


class ExternalRetrieverError(RagretrievalError, ValueError):
    """A retriever service or results file that cannot be used as configured."""
