"""A legal RAG benchmark (seed 000's layout) as a dataset: the benchmark folder's JSON files (each ``{benchmark_type,
description, document, questions, evaluation_criteria}``) become questions over a corpus of the OCR'd Markdown
transcripts given as ``--source``.

- The folder is read as the benchmark lays it out: its ``*.json`` and its ``questions/*.json``; a JSON Schema among
  them (the benchmark's ``schema.json``) is skipped. Every value the formulas read is checked (``check_expect``,
  answers/checks/legal_spec.py); a question that fails is skipped with ``file: question ID: field: problem``.

- The corpus holds one document per source file, its id the file name. A benchmark file's ``document`` names its
  source (by file name or stem); with one source, every file uses it.
- A question's type is its ``type``, else the file's ``benchmark_type`` (``conflict_gap`` items carry none). Its
  ``expect`` is ``{type: {expected, required_evidence, scoring, should_abstain, required_quote,
  additional_quotes}}`` (the fields present), which ``answer`` scores with the benchmark's formulas; its context is
  the source (for ``answer --contexts given``), its ``ground_truth`` a readable form of ``expected`` (the key points;
  the expected behaviour of a gap question).
- Every ``must_include``, ``required_quote`` and ``additional_quotes`` string is located in the source as character
  spans, whatever the page label says (they are often off by one or two): exactly first, then folded (NFKC, case,
  whitespace, punctuation and quotes ignored) with OCR markup left out, i.e. LaTeX commands (``\\underline``,
  ``\\text``: the braces and ``$`` fold away) and HTML tags. The spans label the source as relevant to the question,
  so ``eval`` gets chunk-level labels under any chunking. A string that cannot be located is listed (a warning line
  and the manifest's ``builder.unlocated``), never dropped: it still counts in the checks.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..corpus import Document
from ..dataset import DatasetError, Provenance, QuestionRecord, RelevantDocument
from ..evidence import OCR_MARKUP, Locator, merge_spans
from .common import ExpectCheck, Imported, Problems, read_json_file, title_of

TYPES = ("fact_exact", "evidence_set", "conflict_gap")
SPEC_FIELDS = ("expected", "required_evidence", "scoring", "should_abstain", "required_quote", "additional_quotes")
METADATA_FIELDS = ("metadata", "evidence_location", "expected_behavior", "hallucination_penalty")


def read_sources(paths) -> list[Document]:
    documents = []
    for path in map(Path, paths):
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise DatasetError(f"{path}: cannot read the source ({error})") from None
        documents.append(Document(path.name, title_of(text, path.stem), text))
    if len({d.id for d in documents}) != len(documents):
        raise DatasetError("two --source files have the same name; the corpus names documents by file name")
    return documents


def source_for(document_name, documents: list[Document], where: str) -> Document:
    if len(documents) == 1:
        return documents[0]
    name = str(document_name or "")
    for document in documents:
        if name in (document.id, Path(document.id).stem) or Path(name).stem == Path(document.id).stem:
            return document
    raise DatasetError(f"{where}: field 'document': {name!r} names none of the --source files "
                       f"({', '.join(d.id for d in documents)})")


def ground_truth(kind: str, item: dict) -> str | None:
    expected = item.get("expected") or {}
    if kind == "evidence_set" and expected.get("key_points"):
        return "; ".join(map(str, expected["key_points"]))
    if kind == "conflict_gap":
        return item.get("expected_behavior") or item.get("required_quote")
    if expected:
        return "; ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in expected.items())
    return None


def evidence_strings(item: dict) -> list[str]:
    strings = [e.get("must_include") for e in item.get("required_evidence") or [] if isinstance(e, dict)]
    strings += [item.get("required_quote")] + list(item.get("additional_quotes") or [])
    return [s for s in dict.fromkeys(strings) if isinstance(s, str) and s.strip()]


SCHEMA_KEYS = ("$schema", "$defs", "definitions", "properties")


def is_json_schema(data) -> bool:
    """A JSON Schema file (the benchmark folder's ``schema.json``), not a file of questions."""
    return isinstance(data, dict) and not isinstance(data.get("questions"), list) and any(k in data for k in
                                                                                          SCHEMA_KEYS)


def benchmark_files(benchmark: Path) -> list[Path]:
    """The JSON files of a benchmark: the file itself, or a folder's ``*.json`` and its ``questions/*.json`` (the
    benchmark's own layout puts ``schema.json`` beside ``questions/``)."""
    if not benchmark.is_dir():
        return [benchmark]
    files = sorted(benchmark.glob("*.json")) + sorted((benchmark / "questions").glob("*.json"))
    if not files:
        raise DatasetError(f"{benchmark}: no benchmark .json files found (looked in it and in its questions/ "
                           "folder)")
    return files


def question_where(path: Path, index: int, item) -> str:
    """``file: question q12`` (its id), or ``file: questions[3]`` when it has none."""
    qid = item.get("id") if isinstance(item, dict) else None
    return f"{path}: question {qid}" if isinstance(qid, (str, int)) and str(qid).strip() else \
        f"{path}: questions[{index}]"


def item_problem(item, kind, seen: dict, check_expect: ExpectCheck | None) -> str | None:
    """What makes one question unusable, in the file's own field names, or None."""
    if not isinstance(item, dict):
        return f"must be an object, got {type(item).__name__}"
    if not isinstance(item.get("id"), (str, int)) or isinstance(item.get("id"), bool) or not str(item["id"]).strip():
        return "id: missing"
    if not isinstance(item.get("question"), str) or not item["question"].strip():
        return "question: missing"
    if kind not in TYPES:
        return f"type: {kind!r} is not one of {', '.join(TYPES)}"
    if str(item["id"]) in seen:
        return f"id: {item['id']!r} is used by {seen[str(item['id'])]}"
    if check_expect is not None:
        try:
            check_expect({kind: {k: item[k] for k in SPEC_FIELDS if k in item}}, "")
        except ValueError as error:
            return str(error).removeprefix(f"{kind}: ")  # the file names no type per field: its own path is clearer
    return None


def import_legal_rag(benchmark_dir, sources, strict: bool = False,
                     check_expect: ExpectCheck | None = None) -> Imported:
    benchmark_dir = Path(benchmark_dir)
    files = benchmark_files(benchmark_dir)
    documents = read_sources(sources)
    locators = {d.id: Locator(d.text, OCR_MARKUP) for d in documents}
    problems, questions, warnings, unlocated, seen, schemas = Problems(strict), [], [], [], {}, []
    for path in files:
        data = read_json_file(path)
        if is_json_schema(data):
            schemas.append(path.name)
            continue
        if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
            raise DatasetError(f"{path}: expected an object with a 'questions' list (the benchmark file layout)")
        source = source_for(data.get("document"), documents, str(path))
        for index, item in enumerate(data["questions"]):
            where = question_where(path, index, item)
            kind = item.get("type") or data.get("benchmark_type") if isinstance(item, dict) else None
            problem = item_problem(item, kind, seen, check_expect)
            if problem:
                problems.add(f"{where}: {problem}")
                continue
            spec = {k: item[k] for k in SPEC_FIELDS if k in item}
            qid = str(item["id"])
            seen[qid] = where
            spans, missing = [], []
            for text in evidence_strings(item):
                found = locators[source.id].find(text)
                if found:
                    spans.extend(found)
                else:
                    missing.append(text)
                    warnings.append(f"{where}: {text!r} not found in {source.id}")
                    unlocated.append({"question": qid, "text": text})
            metadata = {k: item[k] for k in METADATA_FIELDS if k in item} | {"benchmark_file": path.name}
            if missing:
                metadata["unlocated"] = missing
            questions.append(QuestionRecord(
                id=qid, text=str(item["question"]).strip(), question_type=kind, expect={kind: spec},
                context=[source.id], ground_truth=ground_truth(kind, item),
                relevant=[RelevantDocument(doc_id=source.id, spans=merge_spans(spans))],
                provenance=Provenance(generator="legal-rag", source=path.name), metadata=metadata))
    builder = {"format": "legal-rag", "benchmark": str(benchmark_dir), "sources": [str(s) for s in sources],
               "strict": strict, "bad_records": len(problems.lines), "unlocated": unlocated,
               "schemas_skipped": schemas}
    return Imported(documents, questions, problems.lines, warnings, builder)
