"""Generators by name: the one registry behind ``answer --generator`` and the web app's evaluations.

A spec is a name (``extractive``) or a prefix and an argument (``openai:gpt-4o-mini``, ``http://...`` after
``http:``, ``file:answers.jsonl``). Built-in generators are listed in `BUILT_IN` and loaded only when used; installed
distributions add more through the entry-point group ``ragretrieval.generators`` (an entry named ``mine`` claims that
exact name, one named ``mine:`` every spec starting with it), the way retrievers come from
``ragretrieval.retrievers``. Every generator passes one conformance suite,
`ragretrieval.testing.generator_conformance`.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from ...work.named import available, load_target
from .base import Generator, GeneratorError, GeneratorOptions, GeneratorPlugin

ENTRY_POINT_GROUP = "ragretrieval.generators"
BUILT_IN = {
    "extractive": "ragretrieval.answers.generators.extractive:ExtractiveGenerator",
    "openai:": "ragretrieval.answers.generators.openai_chat:OpenAIGenerator",
    "http:": "ragretrieval.answers.generators.http_service:HttpGenerator",
    "file:": "ragretrieval.answers.generators.answer_file:FileGenerator",
}
SUMMARY = {
    "extractive": "no model: the question's best-matching sentences of the top contexts, cited (offline floor)",
    "openai:": "openai:MODEL, any OpenAI-compatible endpoint (--base-url), a Jinja prompt",
    "http:": "http:URL, your RAG service: POST the question, read the answer and its sources",
    "file:": "file:PATH, answers already produced (agent-evaluation JSONL or ours)",
}


def available_generators() -> dict[str, str]:
    """Name or prefix -> where it comes from ("built in", or the distribution that provides it)."""
    return available(ENTRY_POINT_GROUP, BUILT_IN)


def _claims(name: str, spec: str) -> str | None:
    """The argument `spec` gives a generator registered as `name`, or None when `name` does not claim it."""
    if name.endswith(":"):
        return spec[len(name):] if spec.startswith(name) and len(spec) > len(name) else None
    return "" if spec == name else None


def generator_class(spec: str) -> tuple[GeneratorPlugin, str]:
    """The registered class that claims `spec`, and the argument after its prefix."""
    for name, target in BUILT_IN.items():
        if (argument := _claims(name, spec)) is not None:
            return load_target(target), argument
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if (argument := _claims(ep.name, spec)) is not None:
            return ep.load(), argument
    known = ", ".join(f"{n}{'...' if n.endswith(':') else ''}" for n in sorted(available_generators()))
    raise GeneratorError(f"unknown generator {spec!r}; known: {known} (more come as packages with a "
                         f"{ENTRY_POINT_GROUP!r} entry point)")


def build_generator(spec: str, options: GeneratorOptions | None = None) -> Generator:
    """A generator from its spec; a bad option is a `GeneratorError` naming the generator."""
    plugin, argument = generator_class(spec)
    try:
        return plugin.build(spec, argument, options or GeneratorOptions())
    except TypeError as error:
        raise GeneratorError(f"generator {spec!r}: bad option ({error})") from None
