"""The pages in English and Chinese: which language a request gets, and the message catalogue.

- **Language.** The ``rr_lang`` cookie (set by the switch in every page's header, ``GET /language/{code}``) wins;
  without it, the browser's ``Accept-Language`` (its q-values honoured, ``zh-CN``, ``zh-TW``, ``zh-Hans`` all mean
  ``zh``); English otherwise. ``<html lang>`` is that language. The JSON API stays English.
- **Messages** are written in English in the templates (``{{ _("Question sets") }}``) and the scripts
  (``t("Deleted “{name}”.", {name})``), gettext style: the English text is the key, ``locales/zh.json`` maps it to
  Chinese, and a message without a translation shows in English. Placeholders are ``{name}``, filled by
  `str.format` after the lookup, so a value (user text) is never read as a template; the templates escape the result.
  ``tests/server/test_i18n.py`` checks that every message the pages use has its translation with the same
  placeholders, and that the catalogue holds nothing unused.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from ..answers.failures import CLASSES

HERE = Path(__file__).parent
LANGUAGES = {"en": "English", "zh": "中文"}  # code -> its own name, as the switch shows it
DEFAULT = "en"
COOKIE = "rr_lang"
# messages the templates look up through a variable (``_(status)``, the login page's ``_(error)``)
DYNAMIC_MESSAGES = ("PENDING", "RUNNING", "PAUSED", "COMPLETED", "FAILED", "The form expired: try again.",
                    "Wrong token.")
DYNAMIC_MESSAGES += CLASSES  # failure classes' names (answers/failures.py), shown by their Chinese names too
# each failure class's meaning, as the detail page's legend says it (docs/answers.md, "Failure classes")
CLASS_MEANINGS = {
    "no_answer": "The answer is empty or the request failed.",
    "correct_abstention": "The question wanted an abstention and the answer abstained.",
    "wrong_answer_instead_of_abstaining": "The question wanted an abstention; the answer answered anyway.",
    "retrieval_miss": "The answer failed and no relevant context was shown to it.",
    "wrong_abstention": "The answer abstained though the question could be answered.",
    "generation_error": "The relevant context was shown, yet the answer failed.",
    "unverified": "Nothing checks the answer's content (no rule, no judge).",
    "unsupported_correct": "The answer passed, but cites no relevant document.",
    "correct": "The answer passed its checks and judges.",
}
DYNAMIC_MESSAGES += tuple(CLASS_MEANINGS.values())
# t("...") in the scripts: a literal in double quotes, the whole message (what the catalogue is searched for)
SCRIPT_MESSAGE = re.compile(r'\bt\(\s*"((?:[^"\\]|\\.)*)"')


@lru_cache(maxsize=None)
def catalogue(language: str) -> dict[str, str]:
    """English message -> its translation (empty for English itself)."""
    path = HERE / "locales" / f"{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


@lru_cache(maxsize=None)
def script_messages() -> tuple[str, ...]:
    """The messages the scripts in static/ ask for with ``t("...")``, in the order first found."""
    found: dict[str, None] = {}
    for path in sorted((HERE / "static").glob("*.js")):
        for match in SCRIPT_MESSAGE.finditer(path.read_text(encoding="utf-8")):
            found[json.loads(f'"{match.group(1)}"')] = None
    return tuple(found)


def script_catalogue(language: str) -> dict[str, str]:
    """What a page hands its scripts: the translations of the scripts' messages (none for English)."""
    known = catalogue(language)
    return {message: known[message] for message in script_messages() if message in known}


def translate(language: str, message: str, **values) -> str:
    text = catalogue(language).get(message, message)
    return text.format(**values) if values else text


def negotiate(header: str | None) -> str:
    """The language of the pages for an ``Accept-Language`` header: the first one we have, by the browser's
    q-values (``zh-CN,zh;q=0.9,en;q=0.8`` -> ``zh``; ``fr, en;q=0.5`` -> ``en``), else English."""
    ranked = []
    for order, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        code = tag.strip().lower().split("-")[0]
        if code in LANGUAGES and quality > 0:
            ranked.append((-quality, order, code))
    return min(ranked)[2] if ranked else DEFAULT


def request_language(request) -> str:
    """The language of this request's page (cookie, then Accept-Language), worked out once per request."""
    state = request.state
    if not hasattr(state, "language"):
        chosen = request.cookies.get(COOKIE)
        state.language = chosen if chosen in LANGUAGES else negotiate(request.headers.get("accept-language"))
    return state.language
