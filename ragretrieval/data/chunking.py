"""Markdown-aware chunking: split at headings, merge small neighbouring sections, cut long ones by size with overlap.

Sizes count characters, so Chinese text chunks as well as English. Every chunk is an exact slice of its parent's
text (``text == parent.text[start:end]``), which is what lets character spans label chunks under any chunking.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterable

from ..errors import RagretrievalError
from .corpus import Document

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"[。！？；.!?;]")


class ChunkingError(RagretrievalError, ValueError):
    """Chunk settings that cannot work."""


@dataclass(frozen=True)
class ChunkPolicy:
    """`size`: the most characters in a chunk; `overlap`: characters shared by consecutive cuts of one section."""

    size: int = 300  # EvalConfig.chunk_size's default
    overlap: int = 50  # EvalConfig.chunk_overlap's default

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise ChunkingError(f"chunk_size must be positive, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ChunkingError(f"chunk_overlap must be >= 0 and smaller than chunk_size ({self.size}), "
                                f"got {self.overlap}")

    @property
    def key(self) -> str:
        return f"markdown:size={self.size}:overlap={self.overlap}"


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    parent_id: str
    start: int
    end: int
    heading_path: tuple[str, ...]
    text: str


def sections(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, heading path) of each heading-delimited section; text before the first heading has path ()."""
    bounds: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    stack: list[tuple[int, str]] = []
    offset, in_fence = 0, False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _HEADING.match(line.rstrip("\r\n"))):
            level = len(match.group(1))
            stack = [(lv, title) for lv, title in stack if lv < level] + [(level, match.group(2))]
            bounds.append((offset, tuple(title for _, title in stack)))
        offset += len(line)
    ends = [start for start, _ in bounds[1:]] + [len(text)]
    spans = [(start, end, path) for (start, path), end in zip(bounds, ends)]
    return [s for s in spans if text[s[0] : s[1]].strip()]


def _cut_point(text: str, start: int, limit: int) -> int:
    """Where a chunk starting at `start` should end, at most `limit`: a line end, else a sentence end, else `limit`."""
    floor = start + (limit - start) // 2
    newline = text.rfind("\n", floor, limit)
    if newline >= 0:
        return newline + 1
    sentence_ends = [m.end() for m in _SENTENCE_END.finditer(text, floor, limit)]
    return sentence_ends[-1] if sentence_ends else limit


def _windows(text: str, start: int, end: int, policy: ChunkPolicy) -> Iterable[tuple[int, int]]:
    while end - start > policy.size:
        cut = _cut_point(text, start, start + policy.size)
        yield start, cut
        start = max(cut - policy.overlap, start + 1)
    yield start, end


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def chunk_document(doc: Document, policy: ChunkPolicy = ChunkPolicy()) -> list[Chunk]:
    merged: list[list] = []
    for start, end, path in sections(doc.text):
        if merged and end - merged[-1][0] <= policy.size:
            merged[-1][1] = end
        else:
            merged.append([start, end, path])
    chunks = []
    for start, end, path in merged:
        for lo, hi in _windows(doc.text, start, end, policy):
            lo, hi = _trimmed(doc.text, lo, hi)
            if hi > lo:
                chunks.append(Chunk(f"{doc.id}#{len(chunks)}", doc.id, lo, hi, path, doc.text[lo:hi]))
    return chunks


def chunk_corpus(documents: Iterable[Document], policy: ChunkPolicy = ChunkPolicy()) -> list[Chunk]:
    return [chunk for doc in documents for chunk in chunk_document(doc, policy)]


def chunks_fingerprint(chunks: Iterable[Chunk]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(f"{chunk.chunk_id}\0{chunk.start}\0{chunk.end}\0".encode("utf-8"))
    return "sha256:" + digest.hexdigest()
