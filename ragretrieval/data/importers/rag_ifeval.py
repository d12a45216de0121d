"""RAG-IFEval (OPI-PIB/rag-ifeval) as a dataset: ``documents.jsonl`` (``{"id", "contents"}`` per line) becomes the
corpus, ``samples.json`` (one JSON array of ``{"id", "question", "context", "expect"}``) the questions.

Each question keeps its id, its ``context`` (document ids in prompt order, for ``answer --contexts given``) and its
``expect`` (the benchmark's conditions, checked by ``answer``); the documents it must cite (``expect.cite``) become
its relevant documents, so the same dataset scores retrieval too (a question with nothing to cite has none and is
left out of retrieval scoring). A document's title is the first line of its contents.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...io.jsonfiles import describe
from ..corpus import Document
from ..dataset import DatasetError, Provenance, QuestionRecord, RelevantDocument
from .common import ExpectCheck, Imported, Problems, numbered_lines, read_json_file, title_of


class SourceDocument(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    contents: str

    @field_validator("id", mode="before")
    @classmethod
    def _number_ids_are_text(cls, value):
        return str(value) if isinstance(value, int) else value


class Sample(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    context: list[str] = Field(default_factory=list)
    expect: dict = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _number_ids_are_text(cls, value):
        return str(value) if isinstance(value, int) else value


def read_documents(path: Path, problems: Problems) -> list[Document]:
    documents, seen = [], {}
    for number, line in numbered_lines(path):
        try:
            record = SourceDocument.model_validate_json(line)
        except ValidationError as error:
            problem = error.errors()[0]
            detail = f"invalid JSON: {problem['ctx']['error']}" if problem["type"] == "json_invalid" else \
                describe(error)
            problems.add(f"{path}:{number}: {detail}")
            continue
        if record.id in seen:
            problems.add(f"{path}:{number}: field 'id': document {record.id!r} is listed twice (first on line "
                         f"{seen[record.id]})")
            continue
        seen[record.id] = number
        documents.append(Document(record.id, title_of(record.contents, record.id), record.contents))
    return documents


def read_samples(path: Path) -> list:
    data = read_json_file(path, " (samples.json is one JSON array, not JSON Lines)")
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected one JSON array of samples, found a {type(data).__name__}")
    return data


def import_rag_ifeval(documents_path, samples_path, strict: bool = False,
                      check_expect: ExpectCheck | None = None) -> Imported:
    documents_path, samples_path = Path(documents_path), Path(samples_path)
    problems = Problems(strict)
    documents = read_documents(documents_path, problems)
    known = {d.id for d in documents}
    questions, seen = [], set()
    for index, raw in enumerate(read_samples(samples_path)):
        where = f"{samples_path}: record {index}" + (f" (id {raw.get('id')!r})" if isinstance(raw, dict) else "")
        try:
            sample = Sample.model_validate(raw)
        except ValidationError as error:
            problems.add(f"{where}: {describe(error)}")
            continue
        missing = [d for d in sample.context if d not in known]
        cite = sample.expect.get("cite", [])
        problem = (f"field 'id': {sample.id!r} is used by an earlier record" if sample.id in seen else
                   f"field 'context': document {missing[0]!r} is not in {documents_path.name}" if missing else
                   "field 'expect.cite': expected a list of document ids" if not isinstance(cite, list) else
                   next((f"field 'expect.cite': {d!r} is not in the record's context" for d in cite
                         if d not in sample.context), None))
        if problem is None and check_expect is not None:
            try:
                check_expect(sample.expect, "field 'expect'")
            except ValueError as error:
                problem = str(error)
        if problem is None and not (sample.expect or cite):
            problem = "field 'expect': no conditions to check"
        if problem:
            problems.add(f"{where}: {problem}")
            continue
        seen.add(sample.id)
        questions.append(QuestionRecord(
            id=sample.id, text=sample.question, context=sample.context, expect=sample.expect,
            relevant=[RelevantDocument(doc_id=d) for d in dict.fromkeys(cite)],
            provenance=Provenance(generator="rag-ifeval", source=samples_path.name)))
    builder = {"format": "rag-ifeval", "documents": str(documents_path), "samples": str(samples_path),
               "strict": strict, "bad_records": len(problems.lines)}
    return Imported(documents, questions, problems.lines, [], builder)
