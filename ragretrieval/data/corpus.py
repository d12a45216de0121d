"""A corpus of Markdown documents: stable ids, titles, texts, and a fingerprint of the whole.

A document's id is its path relative to the corpus folder in POSIX form (``meat_dish/红烧肉/简易红烧肉.md``), so ids
stay the same across machines and runs. Files that cannot be read as text are skipped with a reason, or refused with
``strict=True``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..errors import MissingInputError, RagretrievalError

MARKDOWN_SUFFIXES = (".md", ".markdown")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


class CorpusError(RagretrievalError):
    """A corpus that cannot be loaded: no Markdown files, or a bad file under ``strict=True``."""


class NoCorpusFolder(CorpusError, MissingInputError):
    """A corpus folder that is not there: the command must name another (exit 2)."""


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class Corpus:
    root: str
    documents: tuple[Document, ...]
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def fingerprint(self) -> str:
        return corpus_fingerprint(self.documents)


def corpus_fingerprint(documents: Iterable[Document]) -> str:
    """sha256 over the sorted (id, sha256(text)) pairs: changes when any id or content changes."""
    return fingerprint_of_digests((doc.id, text_digest(doc.text)) for doc in documents)


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def fingerprint_of_digests(pairs: Iterable[tuple[str, bytes]], in_id_order: bool = False) -> str:
    """`corpus_fingerprint` from (id, `text_digest`) pairs, in any order unless `in_id_order` says they are sorted
    (a streamed corpus keeps only these, and sorts indices rather than pairs)."""
    digest = hashlib.sha256()
    for doc_id, text_sha in pairs if in_id_order else sorted(pairs, key=lambda pair: pair[0]):
        digest.update(doc_id.encode("utf-8") + b"\0" + text_sha)
    return "sha256:" + digest.hexdigest()


def markdown_title(text: str) -> str | None:
    """The first level-1 ATX heading outside code fences, or None."""
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _H1.match(line)):
            return match.group(1)
    return None


def _read_text(path: Path) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason the file is skipped)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    if b"\0" in data:
        return None, "binary file (contains NUL bytes)"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return None, f"not valid UTF-8 (bad byte at offset {error.start})"
    if not text.strip():
        return None, "empty file"
    return text, None


def find_markdown(root: Path) -> list[Path]:
    files = [
        p
        for p in root.rglob("*")
        if p.suffix.lower() in MARKDOWN_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and (p.is_file() or not p.exists())
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def load_corpus(root, strict: bool = False, on_skip: Callable[[SkippedFile], None] | None = None) -> Corpus:
    """Read every Markdown file under `root` (hidden folders excluded), sorted by id."""
    root = Path(root)
    if not root.is_dir():
        raise NoCorpusFolder(f"{root}: not a folder")
    files = find_markdown(root)
    if not files:
        raise CorpusError(f"{root}: no Markdown files (*.md) found")
    documents, skipped = [], []
    for path in files:
        doc_id = path.relative_to(root).as_posix()
        text, reason = _read_text(path)
        if reason is not None:
            if strict:
                raise CorpusError(f"{path}: {reason}")
            skipped.append(SkippedFile(doc_id, reason))
            if on_skip:
                on_skip(skipped[-1])
            continue
        documents.append(Document(doc_id, markdown_title(text) or path.stem, text))
    if not documents:
        raise CorpusError(f"{root}: none of the {len(files)} Markdown files could be read")
    return Corpus(str(root), tuple(documents), tuple(skipped))
