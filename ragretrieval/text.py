"""Words for lexical matching: the one tokenizer of BM25, the hashing embedder and every lexical feature.

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
