"""Embedders by name: the one registry used by `eval`, `sweep`, grids, rerankers, the cache and the runs store.

A name is matched against each family of `EMBEDDERS`, this kind's `Registry` (work/plugins.py): built-in families first
(patterns), then those installed distributions publish in the entry-point group ``ragretrieval.embedders`` (an entry
named ``mymodel`` claims that exact name; one named ``myapi:`` claims every name starting with it). A name no family
claims is a sentence-transformers model id or folder, as ``st:<id-or-folder>`` says explicitly."""

from __future__ import annotations

from ..work.named import Entry
from ..work.plugins import EMBEDDERS
from .base import Embedder, EmbedderError, UnusableSetting
from .prefixes import default_prefixes, with_prefixes
from .sentence_transformer import DEFAULT_MODEL
from .settings import AUTO, EmbedSettings

ENTRY_POINT_GROUP = EMBEDDERS.group


class EmbedderFamily:
    """The names one `Entry` of `EMBEDDERS` claims (its pattern, or its prefix or exact name when installed), and the
    traits the embedders' code reads: ``takes_settings`` (built with ``settings=EmbedSettings``: an API's endpoint,
    dimensions...) and ``sentence_transformers`` (may be quantised with @int8; known families get default
    prefixes) and ``self_contained`` (every name it claims builds with no file, hub or API: ``hashing-DIM``, which a
    web client may name)."""

    def __init__(self, entry: Entry):
        self.entry = entry
        self.pattern, self.factory, self.summary, self.source = entry.name, entry.target, entry.summary, entry.source
        self.shown_as = entry.shown
        self.takes_settings = bool(entry.traits.get("takes_settings"))
        self.sentence_transformers = bool(entry.traits.get("sentence_transformers"))
        self.self_contained = bool(entry.traits.get("self_contained"))
        # the fixed names it answers to (none for a prefix or a folder): `registered_models`
        self.names = tuple(entry.traits.get("names", (entry.name,) if entry.match == "exact" else ()))

    def matches(self, name: str) -> bool:
        return self.entry.claims(name) is not None

    def create(self, name: str, **options) -> Embedder:
        return self.entry.load()(name, **options)


BUILT_IN = tuple(EmbedderFamily(entry) for entry in EMBEDDERS.built_in)
# a name no family claims is a sentence-transformers id or folder
SENTENCE_TRANSFORMERS = EmbedderFamily(Entry(r".+", "ragretrieval.embedders.sentence_transformer:"
                                             "SentenceTransformerEmbedder", "a sentence-transformers id or folder",
                                             match="pattern", shown_as="ID-OR-FOLDER",
                                             traits={"sentence_transformers": True}))


def families() -> list[EmbedderFamily]:
    """Every family, in matching order: built in, then installed plugins."""
    return [EmbedderFamily(entry) for entry in EMBEDDERS.entries()]


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
    found = EMBEDDERS.find(name)
    return EmbedderFamily(found[0]) if found else SENTENCE_TRANSFORMERS


VARIANTS = ("int8",)  # `<name>@int8`: a quantised variant of a sentence-transformers model


def get_embedder(name: str = DEFAULT_MODEL, settings: EmbedSettings | dict | None = None, **options) -> Embedder:
    """The embedder a model name stands for; nothing loads until it must embed.

    ``<name>@int8`` is the dynamic int8 variant of a sentence-transformers model (``m3e-small@int8``,
    ``st:<id>@int8``). `settings` (`EmbedSettings`: ``--embed-*``, ``--query-prefix``, ``--passage-prefix``) reach
    API families whole; the prefixes (or, when not given, the known defaults of a sentence-transformers model's
    family, prefixes.py) apply to every embedder; their ``dtype`` and ``batch_size`` also reach sentence-transformers
    models (texts per forward pass). Other `options` go to the family's factory."""
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
    if family.sentence_transformers:
        options = {**settings.local_options(), **options}  # precision and texts per forward pass
    elif settings.dtype != AUTO and family.source == "built in":
        raise UnusableSetting(f"{name}: dtype {settings.dtype} is for sentence-transformers models; this model takes "
                            "none (leave it auto)")
    if family.takes_settings:
        options["settings"] = settings.model_copy(update={"query_prefix": None, "passage_prefix": None})
    elif family.source != "built in" and settings.recorded():
        options["settings"] = settings  # a plugin API family reads what it needs
    embedder = family.create(name, **options)
    defaults = default_prefixes(name.removeprefix("st:")) if family.sentence_transformers else ("", "")
    query_prefix = defaults[0] if settings.query_prefix is None else settings.query_prefix
    passage_prefix = defaults[1] if settings.passage_prefix is None else settings.passage_prefix
    return with_prefixes(embedder, query_prefix, passage_prefix)
