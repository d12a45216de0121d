"""Question builders. `filename_questions` turns each document's file name into a question with a template.

Documents whose questions come out with the same text share ONE question, with all of them relevant: HowToCook has
``soup/陈皮排骨汤.md`` and ``soup/陈皮排骨汤/陈皮排骨汤.md``, which both ask ``如何做陈皮排骨汤？``.
"""

from __future__ import annotations

import hashlib
import string
from pathlib import PurePosixPath
from typing import Iterable

from ..errors import RagretrievalError
from .corpus import Document
from .dataset import Provenance, QuestionRecord, RelevantDocument

DEFAULT_TEMPLATE = "如何做{name}？"
PLACEHOLDERS = {
    "name": "the file name without its extension",
    "title": "the document title (first H1, else the file name)",
    "folder": "the name of the folder that holds the file",
}


class TemplateError(RagretrievalError, ValueError):
    """A question template with an unknown or malformed placeholder."""


def question_id(text: str, namespace: str = "") -> str:
    """A stable id derived from the question text (and a namespace such as the source document)."""
    return "q-" + hashlib.sha1(f"{namespace}\0{text}".encode("utf-8")).hexdigest()[:12]


def check_template(template: str) -> None:
    try:
        fields = [name for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        raise TemplateError(f"template {template!r} is malformed: {error}") from None
    known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
    for name in fields:
        if name not in PLACEHOLDERS:
            raise TemplateError(f"unknown placeholder {{{name}}} in template {template!r}; known: {known}")
    if not fields:
        raise TemplateError(f"template {template!r} has no placeholder; known: {known}")


def template_fields(doc: Document) -> dict[str, str]:
    path = PurePosixPath(doc.id)
    return {"name": path.stem, "title": doc.title, "folder": path.parent.name}


def filename_questions(documents: Iterable[Document], template: str = DEFAULT_TEMPLATE) -> list[QuestionRecord]:
    """One question per distinct filled-in template, in corpus order, relevant to every document that gave it."""
    check_template(template)
    by_text: dict[str, list[str]] = {}
    for doc in documents:
        by_text.setdefault(template.format(**template_fields(doc)), []).append(doc.id)
    provenance = Provenance(generator="filename", template=template)
    return [
        QuestionRecord(
            id=question_id(text),
            text=text,
            relevant=[RelevantDocument(doc_id=d, grade=1) for d in doc_ids],
            provenance=provenance,
        )
        for text, doc_ids in by_text.items()
    ]
