"""A word-level diff of two answers for the compare page: words, spaces and punctuation are the units, and CJK text
(which has no spaces between words) is compared character by character, so a changed character is marked, not the
whole sentence it sits in."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# One CJK ideograph, kana, hangul or full-width form per token; else a run of word characters, of spaces, or one mark.
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
                    r"|[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+|\s+|.",
                    re.DOTALL)
MAX_TOKENS = 6000  # beyond this an answer is shown whole, unmarked: a diff of two books helps nobody


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def word_diff(old: str, new: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    """(the old answer's parts, the new answer's parts): each part ``(kind, text)`` with kind ``same``, ``del`` (in
    the old answer only) or ``ins`` (in the new one only); None when either is too long to compare."""
    a, b = tokens(old), tokens(new)
    if len(a) > MAX_TOKENS or len(b) > MAX_TOKENS:
        return None
    left, right = [], []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(("same", "".join(a[i1:i2])))
            right.append(("same", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            right.append(("ins", "".join(b[j1:j2])))
    return left, right
