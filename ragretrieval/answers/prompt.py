"""Answer prompts: Jinja2 templates, our defaults in Chinese, English and Polish shipped as package data
(``ragretrieval/answers/prompts/answer_{zh,en,pl}.jinja``), or the user's file (``--prompt FILE``).

A template sees four variables: ``question`` (its text), ``docs`` (the context texts, in the order shown, numbered
from 0 for citations), ``documents`` (the same contexts as objects with ``id``, ``title`` and ``text``) and
``refusal_message``. Templates run in Jinja's sandbox with strict undefined variables, so a misspelt variable is an
error naming it, and a template handed to us cannot reach Python objects. The template's hash (of its text) is part of
an answer run's identity.

The language of the defaults comes from the data (`pick_language`: the one detector, `text.detect_language`) unless
given: Chinese when at least a fifth of the letters are CJK ideographs, Polish when Polish-only letters (ą ć ę ł ń ś
ź ż) are at least 1% of them, else English. The refusal message and system message follow the language: Polish
uses RAG-IFEval's refusal phrase.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import RagretrievalError
from ..text import detect_language
from .checks.rules import DEFAULT_REFUSAL

LANGUAGES = ("zh", "en", "pl")
VARIABLES = ("question", "docs", "documents", "refusal_message")
REFUSALS = {"pl": DEFAULT_REFUSAL, "zh": "根据所给文档无法回答这个问题",
            "en": "I could not find the answer in the documents"}
SYSTEM_MESSAGES = {"pl": "Odpowiadasz rzeczowo, po polsku, na podstawie podanych dokumentów.",
                   "zh": "你是一个严谨的助手，只根据给定的文档用中文回答。",
                   "en": "You are a careful assistant who answers in English from the given documents only."}


class AnswerPromptError(RagretrievalError, ValueError):
    """An answer prompt template (Jinja) that cannot be read, parsed or filled (llm.prompts.PromptError is the
    judges' and question writer's templates')."""


PromptError = AnswerPromptError  # its name before 0.3


def pick_language(texts) -> str:
    """The answer prompts' language of `texts`: zh, pl or en (`text.detect_language`)."""
    return detect_language(texts, LANGUAGES)


@dataclass(frozen=True)
class AnswerPrompt:
    text: str
    source: str  # "default:answer_pl" or the file's path

    @property
    def hash(self) -> str:
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    @classmethod
    def load(cls, language: str, path=None) -> "AnswerPrompt":
        if path is None:
            if language not in LANGUAGES:
                raise AnswerPromptError(f"no default prompt in language {language!r} (have {', '.join(LANGUAGES)}); "
                                  "give one (prompt_file)")
            text = resources.files(__package__).joinpath("prompts", f"answer_{language}.jinja").read_text("utf-8")
            prompt = cls(text, f"default:answer_{language}")
        else:
            try:
                prompt = cls(Path(path).read_text(encoding="utf-8"), str(path))
            except (OSError, UnicodeDecodeError) as error:
                raise AnswerPromptError(f"{path}: cannot read the prompt template ({error})") from None
        _compile(prompt.text, prompt.source)  # now: a broken template fails before any question is asked
        return prompt

    @property
    def template(self):
        return _compile(self.text, self.source)

    def render(self, question: str, documents: list[dict], refusal_message: str) -> str:
        try:
            return self.template.render(question=question, docs=[d["text"] for d in documents], documents=documents,
                                        refusal_message=refusal_message)
        except Exception as error:  # jinja2's UndefinedError, SecurityError, TypeError in a filter, ...
            raise AnswerPromptError(f"{self.source}: the template failed: {type(error).__name__}: {error}") from None


_COMPILED: dict[tuple[str, str], object] = {}


def _compile(text: str, source: str):
    """One compiled template per text (compiling takes milliseconds; rendering microseconds)."""
    key = (text, source)
    if key not in _COMPILED:
        import jinja2
        from jinja2.sandbox import SandboxedEnvironment

        environment = SandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                           autoescape=False)
        try:
            template = environment.from_string(text)
        except jinja2.TemplateSyntaxError as error:
            raise AnswerPromptError(f"{source}:{error.lineno}: not a Jinja template: {error.message}") from None
        used = _free_variables(environment, text)
        unknown = sorted(used - set(VARIABLES) - set(environment.globals))
        if unknown:
            raise AnswerPromptError(f"{source}: unknown variable {unknown[0]!r} (a template sees "
                              f"{', '.join(VARIABLES)})")
        if "question" not in used or not used & {"docs", "documents"}:
            raise AnswerPromptError(f"{source}: the template must use question and docs (or documents)")
        _COMPILED[key] = template
    return _COMPILED[key]


def _free_variables(environment, text: str) -> set[str]:
    from jinja2 import meta

    return set(meta.find_undeclared_variables(environment.parse(text)))
