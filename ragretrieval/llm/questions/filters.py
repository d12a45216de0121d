"""Question filters: questions that only name their document, and near-duplicates.

A question such as "红烧肉怎么做？" or "How do I make Mapo Tofu?" names its answer document and asks nothing else: a
lexical matcher finds it from the name alone, which is what file-name questions already measure. We remove the
document's names (file name, title, title without "的做法") and generic question words; if next to nothing is left,
the question is dropped.
Near-duplicates are questions about one document whose character-bigram sets overlap by `NEAR_DUPLICATE` or more
(Jaccard), and exact duplicates (after folding) anywhere in the set.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ...data.corpus import Document
from ...data.evidence import fold

NEAR_DUPLICATE = 0.8
GENERIC_ZH = ("怎么样", "怎么", "怎样", "如何", "制作", "烹饪", "烧制", "做法", "方法", "步骤", "教程", "菜谱", "食谱",
              "是什么", "什么", "哪些", "介绍", "一下", "请问", "请", "做", "的", "吗", "呢", "呀", "要", "我", "能")
GENERIC_EN = frozenset("""how do does did i you we one can could should to make made cook prepare what is are the a an
    recipe recipes for of tell me about describe explain dish way ways steps step please give""".split())
_RECIPE_SUFFIX = re.compile(r"\s*(?:的做法|做法|recipe)$")  # HowToCook titles read "红烧肉的做法"
_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]+")


def names_document_only(question: str, doc: Document) -> bool:
    text = question.casefold()
    title = doc.title.casefold()
    names = {PurePosixPath(doc.id).stem.casefold(), title, _RECIPE_SUFFIX.sub("", title)}
    found = False
    for name in sorted((n for n in names if n.strip()), key=len, reverse=True):
        if name in text:
            text, found = text.replace(name, " "), True
    if not found:
        return False
    rest = []
    for token in _WORD.findall(text):
        if token.isascii():
            if token.isalnum() and token not in GENERIC_EN:
                rest.append(token)
            continue
        for word in GENERIC_ZH:
            token = token.replace(word, "")
        rest.append(fold(token)[0])
    return len("".join(rest)) <= 1


def bigrams(text: str) -> frozenset[str]:
    folded = fold(text)[0]
    return frozenset(folded[i : i + 2] for i in range(max(len(folded) - 1, 1)))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
