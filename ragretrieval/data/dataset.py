"""Dataset files: ``corpus.jsonl``, ``questions.jsonl`` and ``manifest.json`` (format in docs/dataset-format.md).

Every record is a pydantic model; reading validates each line and names the file, line and field of a bad record.
Writing is atomic per file, and the manifest is written last, so a folder with a manifest is a complete dataset.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Callable, Iterable, Iterator, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import MissingInputError, RagretrievalError
from ..io.atomic import atomic_writer
from ..io.jsonfiles import describe, load_json, save_json, supported_version
from ..io.jsonlines import BOM, JsonLinesError, numbered_lines  # noqa: F401 (BOM: 0.2 name)
from ..work.limits import Integer
from ..work.options import SettingsError
from .corpus import Document, corpus_fingerprint

FORMAT_VERSION = 1
# the largest grade: a 32-bit signed integer, as pytrec_eval and ir_datasets hold grades; a grade past int64 used to
# be imported and then end the evaluation in an OverflowError
MAX_GRADE = 2**31 - 1
CORPUS_FILE, QUESTIONS_FILE, MANIFEST_FILE = "corpus.jsonl", "questions.jsonl", "manifest.json"


class DatasetError(RagretrievalError):
    """A dataset file that is missing, malformed or inconsistent."""


class NotADatasetError(DatasetError, MissingInputError):
    """A folder given as a dataset that holds none (or not the files its format needs): the command must name
    another (exit 2)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DocumentRecord(_Record):
    id: str = Field(min_length=1)
    title: str
    text: str


class RelevantDocument(_Record):
    """A relevant document: its id, a graded label (> 0 is relevant), and optional relevant character spans."""

    doc_id: str = Field(min_length=1)
    grade: Integer = Field(default=1, ge=0, le=MAX_GRADE)  # 0: judged and not relevant (as in TREC qrels)
    spans: list[tuple[int, int]] = Field(default_factory=list)

    @field_validator("spans")
    @classmethod
    def _spans_are_ranges(cls, spans):
        for start, end in spans:
            if not 0 <= start < end:
                raise ValueError(f"span [{start}, {end}) must satisfy 0 <= start < end")
        return spans


class Provenance(_Record):
    """How a question was made; generators may add fields of their own (model, prompt_hash, ...)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    generator: str = Field(min_length=1)
    template: str | None = None


ANSWER_FIELDS = ("ground_truth", "question_type", "context", "expect")  # since 0.2; written only when set
PRODUCTION = "trace"  # the generator of a production request: it has no labels, reference-free judges score it


def not_blank(text: str) -> str:
    """The one rule for a question's text wherever a question comes from (a dataset's questions.jsonl, an
    agent-evaluation record's request, a DataFrame row given to `ragretrieval.answer`, the web API's question sets):
    blank, i.e. empty or only whitespace, is no question, and is refused as a bad record."""
    if not text.strip():
        raise PydanticCustomError("blank_question", "a question must not be blank")
    return text


QuestionText = Annotated[str, AfterValidator(not_blank)]


class QuestionRecord(_Record):
    """A question and everything that judges what is found or answered for it.

    `relevant` labels retrieval; it may be empty for a question that is judged on its answer only (retrieval scoring
    skips it). A question needs a label of some kind (`relevant`, `expect`, `ground_truth`), except a production
    request imported from traces (``provenance.generator == "trace"``), which reference-free judges (groundedness,
    relevance, safety) score. The answer-side fields (docs/answers.md): `ground_truth`, the reference answer;
    `question_type`, free text (``FACTUAL``, ``fact_exact``, ...); `context`, document ids given as the question's
    context, in order (``answer --contexts given``); `expect`, the deterministic checks by condition name
    (``{"include": [...]}``)."""

    id: str = Field(min_length=1)
    text: QuestionText
    relevant: list[RelevantDocument] = Field(default_factory=list)
    provenance: Provenance
    metadata: dict = Field(default_factory=dict)
    ground_truth: str | None = None
    question_type: str | None = None
    context: list[str] = Field(default_factory=list)
    expect: dict = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _answer_fields_from_metadata(cls, data):
        """Questions built by the LLM generator before the answer fields existed keep their type and reference
        answer in `metadata` only; read them into the fields, so judges and question-set exports find them."""
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            for name in ("ground_truth", "question_type"):
                value = data["metadata"].get(name)
                if not data.get(name) and isinstance(value, str) and value:
                    data = {**data, name: value}
        return data

    @model_validator(mode="after")
    def _one_label_per_document(self):
        seen = set()
        for rel in self.relevant:
            if rel.doc_id in seen:
                raise ValueError(f"document {rel.doc_id!r} is listed twice in 'relevant'")
            seen.add(rel.doc_id)
        if not (self.relevant or self.expect or self.ground_truth or self.provenance.generator == PRODUCTION):
            raise ValueError("a question needs relevant documents ('relevant'), checks ('expect') or a reference "
                             "answer ('ground_truth'): with none of them nothing can be scored")
        return self

    @model_serializer(mode="wrap")
    def _answer_fields_only_when_set(self, handler, info: SerializationInfo):
        """Files written for retrieval only stay exactly as before 0.2 (and readable by it)."""
        data = handler(self)
        for name in ANSWER_FIELDS:
            if name in data and not data[name]:
                del data[name]
        return data


class SkippedRecord(_Record):
    path: str
    reason: str


class Manifest(_Record):
    format_version: int = FORMAT_VERSION
    corpus_fingerprint: str
    n_documents: int
    n_questions: int
    source: str | None = None
    builder: dict = Field(default_factory=dict)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    created_by: str = ""

    @field_validator("format_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("format_version", version, FORMAT_VERSION)


Model = TypeVar("Model", bound=BaseModel)


def iter_numbered_jsonl(path, model: type[Model], on_bytes: Callable[[int], None] | None = None
                        ) -> Iterator[tuple[int, Model]]:
    """(line number, record) for each non-blank line of a JSON Lines file, validated one line at a time (a file
    larger than memory streams); `on_bytes` hears how many bytes each line took (progress)."""
    path = Path(path)
    try:
        for number, line in numbered_lines(path, on_bytes):  # io/jsonlines.py: the one BOM rule
            try:
                yield number, model.model_validate_json(line)
            except ValidationError as error:
                if error.errors()[0]["type"] == "json_invalid":
                    raise DatasetError(f"{path}:{number}: invalid JSON: {error.errors()[0]['ctx']['error']}") from None
                raise DatasetError(f"{path}:{number}: {describe(error)}") from None
    except JsonLinesError as error:
        raise DatasetError(str(error)) from None


def read_numbered_jsonl(path, model: type[Model]) -> list[tuple[int, Model]]:
    """(line number, record) for each non-blank line of a JSON Lines file, validated."""
    return list(iter_numbered_jsonl(path, model))


def read_keyed_jsonl(path, model: type[Model], key: Callable[[Model], str], twice: str
                     ) -> dict[str, tuple[int, Model]]:
    """Key -> (line number, record) of a JSON Lines file whose records each hold one key; a key met twice raises
    `DatasetError` naming both lines (`twice` says what, with ``{key}``: ``"query id {key} is used twice"``)."""
    found: dict[str, tuple[int, Model]] = {}
    for number, record in iter_numbered_jsonl(path, model):
        name = key(record)
        if name in found:
            raise DatasetError(f"{path}:{number}: {twice.format(key=repr(name))} (first on line {found[name][0]})")
        found[name] = (number, record)
    return found


def read_jsonl(path, model: type[Model]) -> list[Model]:
    """Read and validate a JSON Lines file; blank lines are allowed."""
    return [record for _, record in iter_numbered_jsonl(path, model)]


def unique_documents(numbered: Iterable[tuple[int, DocumentRecord]], path) -> tuple[Document, ...]:
    """The documents of (line number, record) pairs, each id once; records are consumed one by one, so a streamed
    corpus is held once, as documents."""
    first_line: dict[str, int] = {}
    documents = []
    for number, record in numbered:
        if record.id in first_line:
            raise DatasetError(f"{path}:{number}: document id {record.id!r} is used twice (first on line "
                               f"{first_line[record.id]})")
        first_line[record.id] = number
        documents.append(Document(record.id, record.title, record.text))
    return tuple(documents)


def write_jsonl(path, records: Iterable[BaseModel]) -> None:
    with atomic_writer(path) as f:
        for record in records:
            f.write(record.model_dump_json(exclude_defaults=False) + "\n")


@dataclass(frozen=True)
class Dataset:
    """A loaded, validated dataset."""

    path: Path
    documents: tuple[Document, ...]
    questions: tuple[QuestionRecord, ...]
    manifest: Manifest
    questions_path: Path | None = None  # the file the questions came from

    @property
    def fingerprint(self) -> str:
        return self.manifest.corpus_fingerprint

    @property
    def folder(self) -> str:
        """The dataset's folder as an absolute path: what a report records, so that the run's settings file (``runs
        show RUN --config``) replays from any folder."""
        return os.path.abspath(self.path)

    @property
    def other_questions(self) -> str | None:
        """The questions file (absolute), when it is not the dataset's own questions.jsonl (what ``--questions``
        named)."""
        own = Path(self.path) / QUESTIONS_FILE
        if self.questions_path is None or Path(self.questions_path) == own:
            return None
        return os.path.abspath(self.questions_path)


def labels_fingerprint(questions: Iterable[QuestionRecord], chunk_labels=None) -> str:
    """sha256 over every label of every question (id, text, relevant documents with grades and spans) and, when
    chunk labels replace them, the labels' own fingerprint (a judgements file's content): part of a run's identity."""
    labels = [[q.id, q.text, [[r.doc_id, r.grade, [list(s) for s in r.spans]] for r in q.relevant]]
              for q in questions]
    judged = getattr(chunk_labels, "fingerprint", None) if chunk_labels is not None else None
    text = json.dumps({"questions": labels, "chunk_labels": judged}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def questions_fingerprint(questions: Iterable[tuple[str, str, Iterable[str]]]) -> str:
    """sha256 over (id, text, relevant document ids) of each question, in order: computable from a stored report."""
    text = json.dumps([[qid, text, list(relevant)] for qid, text, relevant in questions], sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def answer_labels_fingerprint(questions: Iterable[QuestionRecord]) -> str:
    """sha256 over what judges an answer: each question's id, text, ground truth, type, context and checks."""
    labels = [[q.id, q.text, q.ground_truth, q.question_type, q.context, q.expect] for q in questions]
    text = json.dumps(labels, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def retrieval_questions(dataset: "Dataset") -> tuple["Dataset", int]:
    """The dataset with only the questions that have relevant documents (retrieval can be scored on them), and how
    many were left out."""
    kept = tuple(q for q in dataset.questions if q.relevant)
    if len(kept) == len(dataset.questions):
        return dataset, 0
    return replace(dataset, questions=kept), len(dataset.questions) - len(kept)


def check_questions(questions: Iterable[QuestionRecord], documents: Iterable[Document], source: str) -> None:
    """Unique question ids; every relevant and context document exists and every span lies inside it."""
    length = {doc.id: len(doc.text) for doc in documents}
    seen: set[str] = set()
    for question in questions:
        if question.id in seen:
            raise DatasetError(f"{source}: question id {question.id!r} is used twice")
        seen.add(question.id)
        for rel in question.relevant:
            if rel.doc_id not in length:
                raise DatasetError(
                    f"{source}: question {question.id!r} refers to document {rel.doc_id!r}, which is not in the corpus"
                )
            for start, end in rel.spans:
                if end > length[rel.doc_id]:
                    raise DatasetError(
                        f"{source}: question {question.id!r}: span [{start}, {end}) lies past the end of "
                        f"{rel.doc_id!r} ({length[rel.doc_id]} characters)"
                    )
        missing = [doc_id for doc_id in question.context if doc_id not in length]
        if missing:
            raise DatasetError(f"{source}: question {question.id!r}: context document {missing[0]!r} is not in the "
                               "corpus")


def load_dataset(path, questions_file=None) -> Dataset:
    """Load a dataset folder; `questions_file` replaces its ``questions.jsonl`` (another question set, same corpus)."""
    path = Path(path)
    manifest_path = path / MANIFEST_FILE
    if not manifest_path.is_file():
        raise NotADatasetError(f"{path}: not a dataset folder ({MANIFEST_FILE} not found); "
                           "build one with `ragretrieval dataset build`")
    manifest = load_json(Manifest, manifest_path, DatasetError, "not a dataset manifest", "manifest")
    documents = unique_documents(iter_numbered_jsonl(path / CORPUS_FILE, DocumentRecord), path / CORPUS_FILE)
    fingerprint = corpus_fingerprint(documents)
    if fingerprint != manifest.corpus_fingerprint:
        raise DatasetError(
            f"{path / CORPUS_FILE}: contents do not match the fingerprint in {MANIFEST_FILE} "
            "(was corpus.jsonl edited?); rebuild the dataset with `ragretrieval dataset build`"
        )
    questions_path = Path(questions_file) if questions_file else path / QUESTIONS_FILE
    questions = tuple(read_jsonl(questions_path, QuestionRecord))
    check_questions(questions, documents, str(questions_path))
    return Dataset(path, documents, questions, manifest, questions_path)


def check_writable(path, force: bool) -> None:
    """Refuse to replace an existing dataset unless `force`: a user's hand-edited question set is not ours to lose."""
    existing = [name for name in (CORPUS_FILE, QUESTIONS_FILE, MANIFEST_FILE) if (Path(path) / name).exists()]
    if existing and not force:
        raise SettingsError(f"{path}: already holds a dataset ({', '.join(existing)}); replace it with force",
                            ["force"])


def write_dataset(path, documents, questions, manifest: Manifest, force: bool = False) -> None:
    """Write the three files atomically, the manifest last; refuse to replace an existing dataset unless `force`."""
    path = Path(path)
    check_writable(path, force)
    check_questions(questions, documents, str(path / QUESTIONS_FILE))
    if force and (path / MANIFEST_FILE).exists():
        (path / MANIFEST_FILE).unlink()  # a half-replaced folder must not look complete
    write_jsonl(path / CORPUS_FILE, (DocumentRecord(id=d.id, title=d.title, text=d.text) for d in documents))
    write_jsonl(path / QUESTIONS_FILE, questions)
    save_json(manifest, path / MANIFEST_FILE)
