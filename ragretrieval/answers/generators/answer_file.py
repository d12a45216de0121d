"""`file:<path>`: answers already produced, read from JSON Lines; nothing is asked of any model.

Each line is one of two shapes (they may be mixed):

- an agent-evaluation record (``request``, ``response``, ``retrieved_context`` [{doc_uri, content}], the token
  counts ``agent/input_token_count`` and ``agent/output_token_count``, ``agent/latency_seconds``, or a ``trace``
  that gives whichever of them the record lacks; the format of data/importers/agent_jsonl.py), matched to a question
  by ``request_id`` = question id, else by question text; a record without a response fails its question;
- ours, `AnswerRecord`: ``{"question_id", "answer", "contexts": [{"doc_id"?, "content"}]?}`` with optional
  ``input_tokens``, ``output_tokens``, ``latency`` (seconds) and ``cost``.

Contexts given in the file replace the session's (retrieved or given) ones, in the file's order, so citations
``[i]`` refer to them; a ``doc_uri`` or ``doc_id`` that names a corpus document (or a path or URL ending with one)
is resolved to it, and a context without text takes the document's. A question the file does not answer is recorded
as failed ("no answer in FILE"); a record for a question that is not in the question set is counted in a note.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...data.importers.agent_jsonl import AgentRecord, DocumentUris
from ...errors import cannot_read
from ...io.jsonfiles import describe
from ...io.jsonlines import JsonLinesError, numbered_records
from ...work.options import NoOptions, PluginOptions, SettingsError
from ..report import ContextUsed
from .base import Generated, GenerationFailed, GenerationRequest, GeneratorError, GeneratorOptions


class FileContext(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str | None = None
    content: str | None = None


class AnswerRecord(BaseModel):
    """One answer in our own answers-file format."""

    model_config = ConfigDict(extra="forbid")
    format_version: Literal[1] = 1
    question_id: str = Field(min_length=1)
    answer: str
    contexts: list[FileContext] | None = None
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    latency: float = Field(default=0.0, ge=0)
    cost: float = Field(default=0.0, ge=0)


@dataclass(frozen=True)
class FileAnswer:
    line: int
    generated: Generated | None  # None: the record has no response (its trace has no output); the question fails
    where: str = ""  # file:line, or a DataFrame's row


class FileGenerator:
    needs_contexts: ClassVar[bool] = False
    provides_contexts = True
    Options: ClassVar[type[PluginOptions]] = NoOptions

    def __init__(self, spec: str, path: Path, answers: dict[str, FileAnswer], unmatched: int, sha256: str):
        self.spec, self.path, self.answers, self.unmatched, self.sha256 = spec, path, answers, unmatched, sha256

    @classmethod
    def build(cls, spec: str, argument: str, options: GeneratorOptions) -> "FileGenerator":
        if options.options:
            raise SettingsError(f"{spec}: takes no generator_options (got {sorted(options.options)[0]!r})",
                                ["generator_options"])
        path = Path(argument)
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise cannot_read(path, error, GeneratorError, "the answers file") from None
        answers, unmatched = read_answers(path, raw, options)
        return cls(spec, path, answers, unmatched, hashlib.sha256(raw).hexdigest())

    @classmethod
    def from_records(cls, name: str, records: list[tuple[str, dict]], options: GeneratorOptions) -> "FileGenerator":
        """Answers already in memory (a DataFrame's ``response`` column: `agent_records`), as (place, record)
        pairs; `name` stands for the file in the spec (``file:<name>``) and the run records their sha256."""
        items = [(i, where, record) for i, (where, record) in enumerate(records, start=1)]
        answers, unmatched = answers_from_items(items, options)
        digest = hashlib.sha256(json.dumps([r for _, r in records], sort_keys=True, ensure_ascii=False,
                                           default=str).encode("utf-8")).hexdigest()
        return cls(f"file:{name}", Path(name), answers, unmatched, digest)

    def generate(self, request: GenerationRequest) -> Generated:
        found = self.answers.get(request.question.id)
        if found is None:
            raise GenerationFailed(f"no answer in {self.path} for this question")
        if found.generated is None:
            raise GenerationFailed(f"{self.path}:{found.line}: the record has no response (nor a trace with an "
                                   "output to take it from)")
        return found.generated

    def info(self) -> dict:
        return {"file": self.path.name, "sha256": self.sha256, "answers": len(self.answers)}

    def notes(self) -> list[str]:
        return ([f"{self.unmatched} record(s) of {self.path} answer questions that are not in the question set"]
                if self.unmatched else [])


def _contexts(items, uris: DocumentUris, documents: dict) -> list[ContextUsed] | None:
    if items is None:
        return None
    contexts = []
    for item in items:
        name = getattr(item, "doc_uri", None) or getattr(item, "doc_id", None)
        doc_id = uris.resolve(name) if name else None
        document = documents.get(doc_id) if doc_id else None
        text = item.content if item.content is not None else (document.text if document else "")
        contexts.append(ContextUsed(doc_id=doc_id or name, title=document.title if document else "", text=text))
    return contexts


def read_answers(path: Path, raw: bytes, options: GeneratorOptions) -> tuple[dict[str, FileAnswer], int]:
    """Question id -> its answer; and how many records name no question of the set."""
    try:  # io/jsonlines.py: the one BOM rule, lines end at \n only
        items = [(number, f"{path}:{number}", record) for number, record in numbered_records(path, data=raw)]
    except JsonLinesError as error:
        raise GeneratorError(str(error)) from None
    return answers_from_items(items, options)


def answers_from_items(items, options: GeneratorOptions) -> tuple[dict[str, FileAnswer], int]:
    """Question id -> its answer, from (number, place, record) items (a file's lines, a DataFrame's rows); and how
    many records name no question of the set."""
    ids = {q.id for q in options.questions}
    by_text = {}
    for question in options.questions:
        by_text.setdefault(question.text.strip(), question.id)
    uris = DocumentUris(options.documents)
    answers: dict[str, FileAnswer] = {}
    unmatched = 0
    for number, where, data in items:
        if not isinstance(data, dict) or not ({"request", "trace", "question_id"} & set(data)):
            raise GeneratorError(f"{where}: expected an object with question_id and answer, or an agent-evaluation "
                                 "record with request and response (or a trace)")
        try:
            if "question_id" not in data:
                record = AgentRecord.model_validate(data)
                question_id = record.request_id if record.request_id in ids else by_text.get(record.question.strip())
                generated = None if record.response is None else Generated(
                    record.response, _contexts(record.retrieved_context, uris, options.documents),
                    record.input_tokens or 0, record.output_tokens or 0, record.latency or 0.0)
            else:
                mine = AnswerRecord.model_validate(data)
                question_id = mine.question_id if mine.question_id in ids else None
                generated = Generated(mine.answer, _contexts(mine.contexts, uris, options.documents),
                                      mine.input_tokens, mine.output_tokens, mine.latency, mine.cost)
        except ValidationError as error:
            raise GeneratorError(f"{where}: {describe(error)}") from None
        if question_id is None:
            unmatched += 1
            continue
        if question_id in answers:
            first = answers[question_id]
            place = f"on line {first.line}" if first.where.endswith(f":{first.line}") else f"in {first.where}"
            raise GeneratorError(f"{where}: a second answer for question {question_id!r} (the first is {place})")
        answers[question_id] = FileAnswer(number, generated, where)
    return answers, unmatched
