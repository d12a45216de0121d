"""BEIR folders, the layout IR benchmarks (BEIR, MTEB, pyserini) exchange corpora, queries and judgements in:

```
DIR/corpus.jsonl        {"_id", "title", "text", "metadata"?} per line
DIR/queries.jsonl       {"_id", "text", "metadata"?} per line
DIR/qrels/<split>.tsv   a header line, then "query-id<TAB>corpus-id<TAB>score" per judgement (graded; 0: judged and
                        not relevant)
```

Import streams ``corpus.jsonl`` straight into the dataset's own ``corpus.jsonl`` (a temporary file, renamed only when
the whole folder has been read without error), keeping for each document only its id, its length and the sha256 of
its text: a corpus of millions of documents is never held in memory, let alone twice. A query becomes a question when
the split judges it; its judgements become its relevant documents with their grades, in file order.

The format has no version and no place for the rest of a question (provenance, character spans, reference answer,
checks), so export writes them in each query's ``metadata.ragretrieval`` (versioned, `BeirFields`); BEIR, MTEB and
pyserini read only ``_id`` and ``text``. Import reads it back, so export then import gives the same dataset.
"""

from __future__ import annotations

import array
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...io.atomic import atomic_writer
from ...io.jsonfiles import save_json
from ...io.replacing import refuse_to_replace
from ...work.options import SettingsError
from ...work.progress import as_progress
from ..corpus import fingerprint_of_digests, text_digest
from ..dataset import (
    CORPUS_FILE,
    MANIFEST_FILE,
    MAX_GRADE,
    QUESTIONS_FILE,
    DatasetError,
    DocumentRecord,
    Manifest,
    NotADatasetError,
    Provenance,
    QuestionRecord,
    RelevantDocument,
    check_writable,
    iter_numbered_jsonl,
    read_keyed_jsonl,
    write_jsonl,
)
from .agent_jsonl import RagretrievalFields
from .common import numbered_lines

QUERIES_FILE, QRELS_DIR = "queries.jsonl", "qrels"
QRELS_HEADER = ("query-id", "corpus-id", "score")
SPLIT_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


def _id_text(value):
    """BEIR ids are strings; a number written without quotes is read as its text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class BeirDocument(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    id: str = Field(alias="_id", min_length=1)
    title: str = ""
    text: str
    metadata: dict = Field(default_factory=dict)

    _ids_as_text = field_validator("id", mode="before")(_id_text)

    @field_validator("title", mode="before")
    @classmethod
    def _no_title(cls, value):
        return "" if value is None else value


class BeirFields(RagretrievalFields):
    """A question's own fields that BEIR has no place for, in its query's ``metadata.ragretrieval``."""

    ground_truth: str | None = None


class BeirQuery(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    id: str = Field(alias="_id", min_length=1)
    text: str = Field(min_length=1)
    metadata: dict = Field(default_factory=dict)

    _ids_as_text = field_validator("id", mode="before")(_id_text)

    def ours(self, where: str) -> BeirFields | None:
        extra = self.metadata.get("ragretrieval")
        if extra is None:
            return None
        try:
            return BeirFields.model_validate(extra)
        except ValueError as error:
            raise DatasetError(f"{where}: field 'metadata.ragretrieval': {error}".replace("\n", " ")) from None


@dataclass
class StreamedCorpus:
    """What import keeps of a streamed corpus, in file order: each id (and its index), the line it is on, its
    text's length and sha256."""

    index_of: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    lines: array.array = field(default_factory=lambda: array.array("q"))
    lengths: array.array = field(default_factory=lambda: array.array("q"))
    digests: bytearray = field(default_factory=bytearray)
    with_metadata: int = 0

    def add(self, doc_id: str, line: int, text: str) -> None:
        self.index_of[doc_id] = len(self.ids)
        self.ids.append(doc_id)
        self.lines.append(line)
        self.lengths.append(len(text))
        self.digests += text_digest(text)

    def fingerprint(self) -> str:
        order = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        return fingerprint_of_digests(((self.ids[i], bytes(self.digests[32 * i: 32 * i + 32])) for i in order),
                                      in_id_order=True)


@dataclass
class BeirImport:
    questions: list[QuestionRecord]
    corpus: StreamedCorpus
    unjudged_queries: int  # queries the split does not judge (other splits' queries), left out
    builder: dict


def check_split(split: str) -> str:
    """A split names a file in qrels/: letters, digits, '.', '_' and '-', not starting with a dot (no paths)."""
    if not isinstance(split, str) or not SPLIT_NAME.fullmatch(split):
        raise SettingsError(f"split {split!r} is not a plain name (letters, digits, '.', '_', '-'; e.g. test, dev)",
                            ["split"])
    return split


def find_split(folder: Path, split: str) -> Path:
    """``qrels/<split>.tsv``, or an error naming the splits there are."""
    check_split(split)
    for name in (CORPUS_FILE, QUERIES_FILE):
        if not (folder / name).is_file():
            raise NotADatasetError(f"{folder}: not a BEIR folder ({name} not found)")
    path = folder / QRELS_DIR / f"{split}.tsv"
    if not path.is_file():
        have = sorted(p.stem for p in (folder / QRELS_DIR).glob("*.tsv")) if (folder / QRELS_DIR).is_dir() else []
        raise NotADatasetError(f"{path}: split {split!r} not found (splits in {folder / QRELS_DIR}: "
                           f"{', '.join(have) or 'none'})")
    return path


def stream_corpus(path: Path, out, progress) -> StreamedCorpus:
    """Copy BEIR documents into our corpus file `out` line by line, checking ids; keep only `StreamedCorpus`."""
    corpus = StreamedCorpus()
    progress.stage(f"reading {path.name}", total=path.stat().st_size, unit="B")
    pending = [0]

    def advance(n: int) -> None:
        pending[0] += n
        if pending[0] >= 1 << 22:
            progress.advance(pending[0])
            pending[0] = 0

    for number, document in iter_numbered_jsonl(path, BeirDocument, on_bytes=advance):
        if document.id in corpus.index_of:
            raise DatasetError(f"{path}:{number}: document id {document.id!r} is used twice (first on line "
                               f"{corpus.lines[corpus.index_of[document.id]]})")
        corpus.add(document.id, number, document.text)
        corpus.with_metadata += bool(document.metadata)
        out.write(DocumentRecord(id=document.id, title=document.title, text=document.text).model_dump_json() + "\n")
    progress.advance(pending[0])
    if not corpus.ids:
        raise DatasetError(f"{path}: no documents")
    return corpus


def read_queries(path: Path) -> dict[str, tuple[int, BeirQuery]]:
    return read_keyed_jsonl(path, BeirQuery, lambda query: query.id, "query id {key} is used twice")


def _qrel_fields(line: str) -> list[str]:
    return line.rstrip("\r\n").split("\t") if "\t" in line else line.split()


def read_qrels(path: Path, queries: dict, corpus: StreamedCorpus) -> dict[str, list[RelevantDocument]]:
    """Query id -> its judged documents with their grades, in file order. The first line is a header when its
    score column is not a whole number (BEIR writes ``query-id corpus-id score``)."""
    judged: dict[str, list[RelevantDocument]] = {}
    line_of: dict[tuple[str, str], int] = {}
    for number, line in numbered_lines(path):
        cells = _qrel_fields(line)
        if len(cells) != 3:
            raise DatasetError(f"{path}:{number}: expected 3 columns (query-id, corpus-id, score), found "
                               f"{len(cells)}")
        query_id, doc_id, score = (cell.strip() for cell in cells)
        if number == 1 and not score.lstrip("-").isdigit():
            continue  # the header
        if not score.lstrip("-").isdigit():
            raise DatasetError(f"{path}:{number}: score {score!r} is not a whole number (a graded label)")
        if int(score) < 0:
            raise DatasetError(f"{path}:{number}: score {score} is negative (0 means judged and not relevant)")
        if int(score) > MAX_GRADE:
            raise DatasetError(f"{path}:{number}: score {score} is above the largest grade, {MAX_GRADE} (a 32-bit "
                               "integer)")
        if query_id not in queries:
            raise DatasetError(f"{path}:{number}: query {query_id!r} is not in {QUERIES_FILE}")
        if doc_id not in corpus.index_of:
            raise DatasetError(f"{path}:{number}: document {doc_id!r} is not in {CORPUS_FILE}")
        if (query_id, doc_id) in line_of:
            raise DatasetError(f"{path}:{number}: query {query_id!r} judges document {doc_id!r} twice (first on "
                               f"line {line_of[query_id, doc_id]})")
        line_of[query_id, doc_id] = number
        judged.setdefault(query_id, []).append(RelevantDocument(doc_id=doc_id, grade=int(score)))
    return judged


def _question(query: BeirQuery, judged: list[RelevantDocument], where: str, source: str, split: str,
              corpus: StreamedCorpus) -> QuestionRecord:
    extra = query.ours(where)
    fields: dict = {"provenance": Provenance(generator="beir", source=source, split=split)}
    relevant = judged
    if extra is not None:
        if [(r.doc_id, r.grade) for r in extra.relevant] != [(r.doc_id, r.grade) for r in judged]:
            raise DatasetError(f"{where}: field 'metadata.ragretrieval.relevant': its documents and grades differ "
                               f"from the qrels (edited after export?); remove metadata.ragretrieval to take the "
                               "qrels as they are")
        relevant = extra.relevant
        fields = {"provenance": extra.provenance, "metadata": extra.metadata, "question_type": extra.question_type,
                  "context": extra.context, "expect": extra.expect, "ground_truth": extra.ground_truth}
        for rel in relevant:
            for start, end in rel.spans:
                if end > corpus.lengths[corpus.index_of[rel.doc_id]]:
                    raise DatasetError(f"{where}: span [{start}, {end}) lies past the end of {rel.doc_id!r}")
        missing = [doc_id for doc_id in extra.context if doc_id not in corpus.index_of]
        if missing:
            raise DatasetError(f"{where}: context document {missing[0]!r} is not in {CORPUS_FILE}")
    try:
        return QuestionRecord(id=query.id, text=query.text, relevant=relevant, **fields)
    except ValueError as error:
        raise DatasetError(f"{where}: {error}".replace("\n", " ")) from None


def read_beir(folder, split: str, corpus_out, progress) -> BeirImport:
    """Read a BEIR folder's `split`, streaming its corpus into the open file `corpus_out` (our corpus.jsonl)."""
    folder = Path(folder)
    qrels_path = find_split(folder, split)
    corpus = stream_corpus(folder / CORPUS_FILE, corpus_out, progress)
    queries = read_queries(folder / QUERIES_FILE)
    judged = read_qrels(qrels_path, queries, corpus)
    questions, unjudged = [], 0
    for query_id, (number, query) in queries.items():
        where = f"{folder / QUERIES_FILE}:{number}"
        extra = query.ours(where)
        answer_only = extra is not None and not extra.relevant and (extra.ground_truth or extra.expect)
        if query_id not in judged and not answer_only:
            unjudged += 1
            continue
        questions.append(_question(query, judged.get(query_id, []), where, folder.name, split, corpus))
    if not questions:
        raise DatasetError(f"{qrels_path}: judges none of the {len(queries)} queries: no question to import")
    builder = {"format": "beir", "folder": str(folder), "split": split, "unjudged_queries": unjudged,
               "documents_with_metadata": corpus.with_metadata}
    return BeirImport(questions, corpus, unjudged, builder)


def import_beir(folder, out, split: str = "test", force: bool = False, progress=None, version: str = ""):
    """Write the dataset folder `out` from a BEIR folder; returns the `BeirImport` (counts for the summary).
    Nothing is replaced until the whole folder has been read without error; the manifest is written last."""
    out = Path(out)
    check_writable(out, force)
    find_split(Path(folder), split)  # before any work
    with atomic_writer(out / CORPUS_FILE) as corpus_out:  # replaces the old corpus only if the block succeeds
        imported = read_beir(folder, split, corpus_out, as_progress(progress))
        if force and (out / MANIFEST_FILE).exists():
            (out / MANIFEST_FILE).unlink()  # a half-replaced folder must not look complete
    write_jsonl(out / QUESTIONS_FILE, imported.questions)
    manifest = Manifest(corpus_fingerprint=imported.corpus.fingerprint(), n_documents=len(imported.corpus.ids),
                        n_questions=len(imported.questions), source=str(folder), builder=imported.builder,
                        created_by=f"ragretrieval {version}".strip())
    save_json(manifest, out / MANIFEST_FILE)
    return imported


def export_beir(dataset, out, split: str = "test", force: bool = False) -> dict:
    """Write `dataset` as a BEIR folder: its corpus, every question as a query (with `BeirFields` in its
    metadata), and the relevant documents of the questions that have them as ``qrels/<split>.tsv``."""
    out = Path(out)
    qrels_path = out / QRELS_DIR / f"{check_split(split)}.tsv"
    refuse_to_replace((out / CORPUS_FILE, out / QUERIES_FILE, qrels_path), force)
    for question in dataset.questions:
        bad = next((i for i in [question.id, *(r.doc_id for r in question.relevant)] if any(c in i for c in "\t\r\n")),
                   None)
        if bad is not None:
            raise DatasetError(f"question {question.id!r}: id {bad!r} holds a tab or line break, which a qrels line "
                               "cannot carry")
    with atomic_writer(out / CORPUS_FILE) as f:
        for document in dataset.documents:
            f.write(json.dumps({"_id": document.id, "title": document.title, "text": document.text, "metadata": {}},
                               ensure_ascii=False) + "\n")
    with atomic_writer(out / QUERIES_FILE) as f:
        for question in dataset.questions:
            ours = BeirFields(relevant=question.relevant, provenance=question.provenance, metadata=question.metadata,
                              question_type=question.question_type, context=question.context,
                              expect=question.expect, ground_truth=question.ground_truth)
            f.write(json.dumps({"_id": question.id, "text": question.text,
                                "metadata": {"ragretrieval": ours.model_dump(mode="json")}}, ensure_ascii=False)
                    + "\n")
    judgements = 0
    with atomic_writer(qrels_path) as f:
        f.write("\t".join(QRELS_HEADER) + "\n")
        for question in dataset.questions:
            for rel in question.relevant:
                f.write(f"{question.id}\t{rel.doc_id}\t{rel.grade}\n")
                judgements += 1
    return {"documents": len(dataset.documents), "queries": len(dataset.questions), "judgements": judgements,
            "qrels": str(qrels_path)}
