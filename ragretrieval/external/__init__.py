"""Retrievers that run outside ragretrieval: a running retrieval service (`http`) or results already on disk
(`run-file`). Both answer with ids (see ragretrieval/hits.py); docs/bring-your-own.md shows how to use them."""

from __future__ import annotations

EXTERNAL_RETRIEVERS = ("http", "run-file")


class ExternalRetrieverError(ValueError):
    """A retriever service or results file that cannot be used as configured."""


def make_external_retriever(name: str, options: dict, progress: bool = True):
    if name == "http":
        from .http import HttpRetriever, load_mapping

        return HttpRetriever(load_mapping(options), progress=progress)
    if name == "run-file":
        from .run_file import RunFileRetriever

        return RunFileRetriever.from_options(options)
    raise ExternalRetrieverError(f"unknown external retriever {name!r}; known: {', '.join(EXTERNAL_RETRIEVERS)}")
