"""Where answers come from: the `Generator` protocol (base.py), its registry (registry.py) and the built-in
generators, one small module each: ``extractive`` (no model), ``openai:`` (any OpenAI-compatible endpoint), ``http:``
(your own RAG service) and ``file:`` (answers already produced)."""

from .base import Generated, GenerationFailed, GenerationRequest, Generator, GeneratorError, GeneratorOptions
from .registry import available_generators, build_generator, generator_class

__all__ = ["Generated", "GenerationFailed", "GenerationRequest", "Generator", "GeneratorError", "GeneratorOptions",
           "available_generators", "build_generator", "generator_class"]
