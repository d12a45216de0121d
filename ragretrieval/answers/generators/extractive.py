"""`extractive`: an answer with no model at all, the floor every generator must beat, and what makes ``answer``
runnable offline (the demo, the tests).

The contexts are cut into sentences (at 。！？；!?; and line ends, and at a full stop followed by a space); each
sentence scores the share of the question's distinct tokens it holds (ragretrieval.text: CJK unigrams and bigrams,
other words lower-cased). The best ``sentences`` of them (default 2; ties go to the earlier context, then the
earlier sentence) are given in context order, each followed by its citation ``[i]``. When no sentence shares a token
with the question, the answer is the refusal message. Option: ``--generator-option sentences=N``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field

from ...text import tokenize
from ...work.limits import Integer
from ...work.options import PluginOptions, plugin_options
from .base import Generated, GenerationRequest, GeneratorError, GeneratorOptions

_SENTENCE = re.compile(r"(?<=[。！？；!?;])|\n+|(?<=\.)\s+")
_MARKUP = re.compile(r"^\s*(?:#+|[-*+>]|\d+[.)、])\s*")


def sentences(text: str) -> list[str]:
    """The sentences of a context, without Markdown list and heading markers; very short pieces are dropped."""
    found = []
    for piece in _SENTENCE.split(text):
        piece = _MARKUP.sub("", piece or "").strip()
        if len(piece) >= 4:
            found.append(piece)
    return found


class ExtractiveOptions(PluginOptions):
    sentences: Integer = Field(2, ge=1, le=1000, description="sentences in each answer")


class ExtractiveGenerator:
    needs_contexts: ClassVar[bool] = True
    provides_contexts = False
    Options: ClassVar[type[PluginOptions]] = ExtractiveOptions

    def __init__(self, n_sentences: int = ExtractiveOptions.model_fields["sentences"].default):
        if n_sentences < 1:
            raise GeneratorError(f"extractive: sentences must be at least 1, got {n_sentences}")
        self.spec = "extractive"
        self.n_sentences = n_sentences

    @classmethod
    def build(cls, spec: str, argument: str, options: GeneratorOptions) -> "ExtractiveGenerator":
        own = ExtractiveOptions(**plugin_options(cls.Options, options.options, "generator extractive",
                                                 "generator_options"))
        return cls(own.sentences)

    def generate(self, request: GenerationRequest) -> Generated:
        wanted = set(tokenize(request.question.text))
        scored = []
        for position, context in enumerate(request.contexts):
            for order, sentence in enumerate(sentences(context.text)):
                shared = len(wanted & set(tokenize(sentence)))
                if shared:
                    scored.append((-shared / len(wanted), position, order, sentence))
        best = sorted(scored)[: self.n_sentences]
        if not best:
            return Generated(request.refusal_message)
        chosen = sorted((position, order, sentence) for _, position, order, sentence in best)
        separator = "" if request.language == "zh" else " "
        return Generated(separator.join(f"{sentence} [{position}]" for position, _, sentence in chosen))

    def info(self) -> dict:
        return {"sentences": self.n_sentences}
