"""Finding the model's evidence quotes in the document, as [start, end) character spans of the original text.

Models copy quotes imperfectly: they drop Markdown bullets, change full-width punctuation to ASCII, re-wrap lines. So
a quote is looked up exactly first, then in a folded form of both texts (NFKC, case-folded, without whitespace,
punctuation or symbols) whose characters each remember their offset in the original, and a quote with an ellipsis is
looked up piece by piece, in order. A quote that is found nowhere is not evidence: the question is dropped.
"""

from __future__ import annotations

import re
import unicodedata

MIN_FOLDED = 2  # a quote that folds to fewer characters matches too much to mean anything
# markup OCR leaves in Markdown transcripts: LaTeX commands (their braces and $ fold away anyway) and HTML tags
OCR_MARKUP = re.compile(r"\\[A-Za-z]+|<[^<>\n]{1,80}>")
_ELLIPSIS = re.compile(r"\.{3,}|…+|⋯+")


def fold_char(ch: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKC", ch).casefold():
        if not (c.isspace() or unicodedata.category(c)[0] in "PSZC"):
            out.append(c)
    return "".join(out)


def fold(text: str, ignore: re.Pattern | None = None) -> tuple[str, list[int]]:
    """The folded text and, for each of its characters, the offset of the original character it came from;
    characters inside matches of `ignore` (markup such as LaTeX commands) are left out."""
    skipped = bytearray(len(text))
    for match in ignore.finditer(text) if ignore is not None else ():
        skipped[match.start():match.end()] = b"\x01" * (match.end() - match.start())
    chars, origin = [], []
    for i, ch in enumerate(text):
        if skipped[i]:
            continue
        for c in fold_char(ch):
            chars.append(c)
            origin.append(i)
    return "".join(chars), origin


class Locator:
    """Locates quotes in one document; folds the document once (leaving out what `ignore` matches)."""

    def __init__(self, text: str, ignore: re.Pattern | None = None):
        self.text = text
        self.folded, self.origin = fold(text, ignore)

    def find(self, quote: str) -> list[tuple[int, int]] | None:
        """Spans covering the quote, or None when it is not in the document."""
        quote = quote.strip()
        if not quote:
            return None
        start = self.text.find(quote)
        if start >= 0:
            return [(start, start + len(quote))]
        pieces = [p for p in _ELLIPSIS.split(quote) if p.strip()]
        spans, position = [], 0
        for piece in pieces:
            folded, _ = fold(piece)
            if len(folded) < MIN_FOLDED:
                continue
            at = self.folded.find(folded, position)
            if at < 0:
                return None
            position = at + len(folded)
            spans.append((self.origin[at], self.origin[position - 1] + 1))
        return spans or None

    def find_all(self, quotes: list[str]) -> list[tuple[int, int]] | None:
        """Merged spans of every quote, or None when any quote is missing (one invented quote discredits the rest)."""
        spans = []
        for quote in quotes:
            found = self.find(quote)
            if found is None:
                return None
            spans.extend(found)
        return merge_spans(spans) or None


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]
