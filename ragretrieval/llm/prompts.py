"""Prompt files: the defaults ship in ``ragretrieval/llm/prompts/`` and any of them can be replaced by a user's file.

A prompt is a text with ``$name`` placeholders (Python `string.Template`; write ``$$`` for a literal dollar sign). Its
hash is recorded with every question and keys every judgement, so changing a prompt never mixes old and new answers.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import RagretrievalError
from ..text import detect_language

LANGUAGES = ("zh", "en")
PLACEHOLDERS = {
    "questions": ("n", "types", "title", "document"),
    "judge": ("question", "passage"),
    "nuggets": ("question", "ground_truth", "passages", "max_nuggets"),
}
REPAIR = {
    "zh": "你的回答不是合规的 JSON（{error}）。请按要求的格式重新回答，只输出 JSON。",
    "en": "Your answer was not valid JSON in the requested shape ({error}). Answer again with only the JSON.",
}


class PromptError(RagretrievalError, ValueError):
    """A prompt file that cannot be read or uses unknown placeholders."""


@dataclass(frozen=True)
class Prompt:
    kind: str
    text: str
    source: str

    @property
    def hash(self) -> str:
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def fill(self, **values) -> str:
        return string.Template(self.text).substitute({k: str(v) for k, v in values.items()})


@dataclass(frozen=True)
class PromptSpec:
    """Where a kind of prompt's defaults live and what it may say: ``$name`` placeholders it knows, and those it
    must contain. Prompts of other rooms (the answer judges) describe themselves with one of these."""

    kind: str
    package: str  # the package whose folder holds the defaults, as ``{folder}/{kind}_{language}.md``
    folder: str
    known: tuple[str, ...]
    required: tuple[str, ...]
    languages: tuple[str, ...] = LANGUAGES


SPECS = {
    "questions": PromptSpec("questions", __package__, "prompts", PLACEHOLDERS["questions"], ("document",)),
    "judge": PromptSpec("judge", __package__, "prompts", PLACEHOLDERS["judge"], ("question", "passage")),
    "nuggets": PromptSpec("nuggets", __package__, "prompts", PLACEHOLDERS["nuggets"], ("question",)),
}


def load_prompt(kind: str, language: str, path=None) -> Prompt:
    """The user's prompt file if `path` is given, else the shipped default for `language`."""
    return load_template(SPECS[kind], language, path)


def load_template(spec: PromptSpec, language: str, path=None) -> Prompt:
    """The prompt file at `path` (its placeholders checked against `spec`), else the default for `language`."""
    if language not in spec.languages:
        raise PromptError(f"language must be one of {', '.join(spec.languages)}; got {language!r}")
    if path is None:
        name = f"{spec.kind}_{language}.md"
        text = resources.files(spec.package).joinpath(spec.folder, name).read_text(encoding="utf-8")
        return Prompt(spec.kind, text, f"default:{spec.kind}_{language}")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PromptError(f"{path}: cannot read the prompt file ({error})") from None
    check_placeholders(spec, text, str(path))
    return Prompt(spec.kind, text, str(path))


def check_placeholders(spec: PromptSpec, text: str, source: str) -> None:
    template = string.Template(text)
    if not template.is_valid():
        raise PromptError(f"{source}: a '$' that is not a placeholder; write $$ for a dollar sign")
    names = set(template.get_identifiers())
    unknown = sorted(names - set(spec.known))
    if unknown:
        known = ", ".join("$" + k for k in spec.known)
        raise PromptError(f"{source}: unknown placeholder ${unknown[0]}; known: {known}")
    missing = [k for k in spec.required if k not in names]
    if missing:
        raise PromptError(f"{source}: the prompt must contain ${missing[0]}")


def guess_language(texts) -> str:
    """The judges' and question writer's prompt language of `texts`: zh or en (`text.detect_language`)."""
    return detect_language(texts, ("zh", "en"))
