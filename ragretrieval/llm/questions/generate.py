"""The LLM question builder: per document, ask for N questions with verbatim evidence, keep those whose evidence is
found in the document, and turn them into `QuestionRecord`s whose spans label chunks under any chunking.

Each finished document is journaled (`Journal`) before the next result is taken, and every answer is in the answer
cache, so a killed run resumes without asking again for finished documents. Filtering across documents (duplicates)
runs after all documents are done, in corpus order, so the result does not depend on the order answers arrived in.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from ...data.corpus import Document
from ...data.dataset import Provenance, QuestionRecord, RelevantDocument
from ...data.evidence import Locator, fold
from ...data.filename_questions import question_id
from ...work.pool import parallel_map
from ...work.progress import as_progress
from ...work.stop import StopToken
from ..client import LLM_CALLS, ChatClient, LLMError
from ..journal import Journal
from ..prompts import Prompt
from ..replies import QUESTION_TYPES, ask, parse_questions
from .filters import NEAR_DUPLICATE, bigrams, names_document_only, similarity

JOURNAL_NAME = ".llm-questions.journal.jsonl"
JOURNAL_VERSION = 1
TYPE_JOINER = {"zh": "、", "en": ", "}  # between the allowed types in the prompt, per language
# Why generated questions are not kept; counted and written to the manifest.
EVIDENCE_NOT_FOUND, NO_EVIDENCE, TYPE_NOT_ASKED, NAMES_ONLY = ("evidence not found", "no evidence",
                                                               "type not asked for", "names its document only")
EXTRA, DUPLICATE, SAME_TEXT = "more than --per-doc", "near duplicate", "same text as an earlier question"


@dataclass(frozen=True)
class GenerationPlan:
    """What decides the questions, apart from the documents: a change here means new requests."""

    prompt: Prompt
    language: str
    model: str
    per_doc: int  # QuestionOptions.per_doc (build.py) declares its default
    types: tuple[str, ...] = QUESTION_TYPES

    @property
    def key(self) -> str:
        parts = [self.model, self.prompt.hash, str(self.per_doc), ",".join(self.types)]
        return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


class KeptQuestion(BaseModel):
    question_type: str
    question_text: str
    ground_truth: str
    evidence: list[str]
    spans: list[tuple[int, int]]


class DocumentResult(BaseModel):
    """One journal line: the outcome for one document under one plan."""

    journal_version: int = JOURNAL_VERSION
    plan: str
    doc_id: str
    doc_sha256: str
    ok: bool = True
    error: str | None = None
    questions: list[KeptQuestion] = Field(default_factory=list)
    dropped: dict[str, int] = Field(default_factory=dict)
    generated: int = 0


@dataclass
class GenerationResult:
    questions: list[QuestionRecord]
    counts: Counter = field(default_factory=Counter)
    failed: list[dict] = field(default_factory=list)  # documents whose answer stayed malformed


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pick_documents(documents, max_docs: int | None) -> list[Document]:
    """`max_docs` documents spread evenly over the corpus (it is sorted by folder), or all of them."""
    documents = list(documents)
    if not max_docs or max_docs >= len(documents):
        return documents
    return [documents[i * len(documents) // max_docs] for i in range(max_docs)]


def document_messages(doc: Document, plan: GenerationPlan) -> list[dict]:
    """The one request asked about `doc`."""
    content = plan.prompt.fill(n=plan.per_doc, types=TYPE_JOINER[plan.language].join(plan.types),
                               title=doc.title, document=doc.text)
    return [{"role": "user", "content": content}]


def questions_for_document(doc: Document, plan: GenerationPlan, client: ChatClient) -> DocumentResult:
    result = DocumentResult(plan=plan.key, doc_id=doc.id, doc_sha256=text_sha256(doc.text))
    generated, error = ask(client, document_messages(doc, plan), parse_questions, plan.language)
    if generated is None:
        return result.model_copy(update={"ok": False, "error": error})
    locator, dropped, kept, grams = Locator(doc.text), Counter(), [], []
    for question in generated:
        spans = locator.find_all(question.evidence) if question.evidence else None
        mine = bigrams(question.question_text)
        reason = (TYPE_NOT_ASKED if question.question_type not in plan.types
                  else NO_EVIDENCE if not question.evidence
                  else EVIDENCE_NOT_FOUND if spans is None
                  else NAMES_ONLY if names_document_only(question.question_text, doc)
                  else DUPLICATE if any(similarity(mine, other) >= NEAR_DUPLICATE for other in grams)
                  else EXTRA if len(kept) >= plan.per_doc else None)
        if reason:
            dropped[reason] += 1
        else:
            kept.append(KeptQuestion(**question.model_dump(), spans=spans))
            grams.append(mine)
    return result.model_copy(update={"questions": kept, "dropped": dict(dropped), "generated": len(generated)})


def journaled_documents(documents: list[Document], plan: GenerationPlan, journal: Journal, retry_failed: bool = True
                        ) -> tuple[dict[str, DocumentResult], int]:
    """The journal's results for these documents under this plan (failures left out when `retry_failed`), and how
    many failures are to be asked again."""
    wanted = {doc.id: text_sha256(doc.text) for doc in documents}
    done: dict[str, DocumentResult] = {}
    for entry in journal.load():  # later lines win: a retried document's new result replaces its failure
        if entry.journal_version == JOURNAL_VERSION and entry.plan == plan.key and wanted.get(entry.doc_id) == \
                entry.doc_sha256:
            done[entry.doc_id] = entry
    retrying = [doc_id for doc_id, entry in done.items() if not entry.ok] if retry_failed else []
    for doc_id in retrying:
        del done[doc_id]
    return done, len(retrying)


class GenerationInterrupted(LLMError):
    """The endpoint failed partway; the message says where the finished documents are saved and how to continue
    (the command line's words), `failure` is the endpoint's own error (for a caller with other readers)."""

    def __init__(self, message: str, failure: LLMError):
        super().__init__(message, failure.status)
        self.failure = failure


def run_documents(documents: list[Document], plan: GenerationPlan, client: ChatClient, journal: Journal,
                  concurrency: int = LLM_CALLS.concurrency, progress=None, retry_failed: bool = True,
                  stop: StopToken | None = None) -> dict[str, DocumentResult]:
    """Results for every document, from the journal when it has them; new results are journaled as they arrive.

    A document whose answer stayed malformed is journaled as failed and, unless `retry_failed` is False, asked again
    by the next run (its malformed answers are not cached as good, so it really is asked again)."""
    progress = as_progress(progress)
    done, retrying = journaled_documents(documents, plan, journal, retry_failed)
    if retrying:
        progress.note(f"asking again about {retrying} documents whose answers failed last time "
                      "(retry_failed off keeps their failures)")
    todo = [doc for doc in documents if doc.id not in done]
    kept = sum(len(r.questions) for r in done.values())
    progress.stage("questions", total=len(todo), unit="doc")
    try:
        for _, result in parallel_map(lambda doc: questions_for_document(doc, plan, client), todo, concurrency,
                                          stop=stop, name="ragretrieval-questions"):
            journal.append(result)
            done[result.doc_id] = result
            kept += len(result.questions)
            progress.advance(1, f"kept {kept}, {client.usage.status()}")
    except LLMError as failure:
        raise GenerationInterrupted(f"{failure}\n{len(done)} of {len(documents)} documents are done and saved in "
                                    f"{journal.path}; run the same command again to continue", failure) from None
    return done


def to_records(documents: list[Document], results: dict[str, DocumentResult], plan: GenerationPlan,
               taken: set[str] = frozenset()) -> GenerationResult:
    """Question records in corpus order, without exact duplicates (of each other, or of `taken` folded texts);
    near-duplicates within a document were dropped with the document's result."""
    output = GenerationResult([])
    seen = set(taken)
    provenance = Provenance(generator="llm", model=plan.model, prompt_hash=plan.prompt.hash)
    for doc in documents:
        result = results[doc.id]
        output.counts["documents"] += 1
        output.counts["generated"] += result.generated
        output.counts.update(result.dropped)
        if not result.ok:
            output.failed.append({"doc_id": doc.id, "reason": result.error})
            continue
        for question in result.questions:
            exact = exact_key(question.question_text)
            if exact in seen:
                output.counts[SAME_TEXT] += 1
                continue
            seen.add(exact)
            output.questions.append(QuestionRecord(
                id=question_id(question.question_text, namespace=doc.id),
                text=question.question_text,
                relevant=[RelevantDocument(doc_id=doc.id, grade=1, spans=question.spans)],
                provenance=provenance, question_type=question.question_type,
                ground_truth=question.ground_truth or None,
                metadata={"question_type": question.question_type, "ground_truth": question.ground_truth,
                          "evidence": question.evidence},
            ))
    output.counts["kept"] = len(output.questions)
    output.counts["failed documents"] = len(output.failed)
    return output


def exact_key(text: str) -> str:
    """Two questions are the same question when their folded texts are equal (also used for other generators')."""
    return fold(text)[0]


def journal_for(out_dir) -> Journal:
    return Journal(Path(out_dir) / JOURNAL_NAME, DocumentResult,
                   elsewhere="build the dataset (--out) in a folder on another disk: its journal is kept in the "
                             "dataset's folder")
