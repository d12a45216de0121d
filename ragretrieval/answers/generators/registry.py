"""Generators by name: the one registry behind ``answer --generator`` and the web app's evaluations.

A spec is a name (``extractive``) or a prefix and an argument (``openai:gpt-4o-mini``, ``http://...`` after ``http:``,
``file:answers.jsonl``). The names are `GENERATORS`, this kind's `Registry` (work/plugins.py): the built-in generators,
loaded only when used, and those installed distributions add through the entry-point group ``ragretrieval.generators``
(an entry named ``mine`` claims that exact name, one named ``mine:`` every spec starting with it), the way retrievers
come from ``ragretrieval.retrievers``. Every generator passes one conformance suite,
`ragretrieval.testing.generator_conformance`."""

from __future__ import annotations

from ...work.named import UnknownPluginError
from ...work.plugins import GENERATORS
from .base import Generator, GeneratorError, GeneratorOptions, GeneratorPlugin

ENTRY_POINT_GROUP = GENERATORS.group
BUILT_IN = {entry.name: entry.target for entry in GENERATORS.built_in}  # name or prefix -> "module:Class"
SUMMARY = {entry.name: entry.summary for entry in GENERATORS.built_in}


def available_generators() -> dict[str, str]:
    """Name or prefix -> where it comes from ("built in", or the distribution that provides it)."""
    return GENERATORS.available()


def generator_class(spec: str) -> tuple[GeneratorPlugin, str]:
    """The registered class that claims `spec`, and the argument after its prefix."""
    try:
        entry, argument = GENERATORS.entry(spec)
    except UnknownPluginError as error:
        raise GeneratorError(str(error)) from None
    return entry.load(), argument


def build_generator(spec: str, options: GeneratorOptions | None = None) -> Generator:
    """A generator from its spec; a bad option is a `GeneratorError` naming the generator."""
    plugin, argument = generator_class(spec)
    try:
        return plugin.build(spec, argument, options or GeneratorOptions())
    except TypeError as error:
        raise GeneratorError(f"generator {spec!r}: bad option ({error})") from None
