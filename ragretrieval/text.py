"""Words for lexical matching: the one tokenizer of BM25, the hashing embedder and every lexical feature; and the
one guess of a text's language that picks default prompts.

Chinese (and other CJK ideographs) has no spaces, so a run of ideographs becomes its character unigrams and bigrams;
other text becomes lower-cased words.
"""

from __future__ import annotations

import re

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"([{_CJK}]+)|((?:(?![{_CJK}])\\w)+)")


def tokenize(text: str) -> list[str]:
    """Chinese as character unigrams and bigrams, other text as lower-cased words."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        if run := match.group(1):
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            tokens.append(match.group(2))
    return tokens


CJK_SHARE = 0.2  # Chinese when at least a fifth of the letters are CJK ideographs
POLISH_SHARE = 0.01  # Polish when Polish-only letters are at least 1% of them
_POLISH = set("ąćęłńśźżĄĆĘŁŃŚŹŻ")


def detect_language(texts, languages=("zh", "pl", "en")) -> str:
    """The language of a sample of `texts` (the first 2000 characters of the first 50), among `languages` (the ones
    the caller has prompts in; English is the fallback): ``zh`` when at least a fifth of the letters are CJK
    ideographs, ``pl`` when Polish-only letters (ą ć ę ł ń ś ź ż) are at least 1% of them, else ``en``."""
    sample = "".join(text[:2000] for text in list(texts)[:50])
    letters = [ch for ch in sample if ch.isalpha()]
    if not letters:
        return "en"
    if "zh" in languages and sum("\u4e00" <= ch <= "\u9fff" for ch in letters) / len(letters) >= CJK_SHARE:
        return "zh"
    if "pl" in languages and sum(ch in _POLISH for ch in letters) / len(letters) >= POLISH_SHARE:
        return "pl"
    return "en"
