"""Writing nuggets with a model (``ragretrieval questions nuggets DATASET``; docs/answers/nuggets.md).

Per question, one request shows the question, its reference answer and its relevant passages (the spans of its
relevant documents when it has spans, else the documents, each cut to `NuggetOptions.passage_chars` characters) and
asks for at most `max_nuggets` nuggets, each ``vital`` or ``okay``. A question with neither a reference answer nor
relevant documents has nothing to write from and is left out (counted). The reply must be
``{"nuggets": [{"text": ..., "importance": "vital" | "okay"}, ...]}``; a malformed one gets one repair request, then
the question fails (counted, asked again next time: malformed answers are not cached as good). Duplicate nuggets
(same folded text) are dropped; beyond `max_nuggets`, vital ones are kept first.

Questions that already have nuggets in the output file keep them, hand-written or not, unless `force` is set. Each
finished question is journaled beside the output file and every answer is in the answer cache, so a killed run
resumes without asking again; the file is written atomically at the end, then the journal is removed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..data.dataset import Dataset, QuestionRecord
from ..data.evidence import fold
from ..data.nuggets import MODEL_WRITTEN, Nugget, QuestionNuggets, read_nuggets, write_nuggets
from ..errors import RagretrievalError
from ..io.jsonfiles import describe
from ..work.pool import parallel_map
from ..work.progress import as_progress
from .client import LLM_CALLS, ChatClient, LLMError, LLMSettings
from .journal import Journal
from .prompts import Prompt, guess_language, load_prompt
from .replies import MalformedAnswer, ask, check_failures, extract_json

JOURNAL_NAME = ".nuggets.journal.jsonl"
JOURNAL_VERSION = 1
DEFAULT_MAX_NUGGETS = 20  # the TREC 2024 RAG track scores at most 20 nuggets per question
MAX_NUGGETS = 100
DEFAULT_PASSAGE_CHARS = 4000
NOTHING_TO_WRITE_FROM = "no reference answer and no relevant documents"


class NuggetOptionError(RagretrievalError, ValueError):
    """A nugget-writing option that cannot work."""


@dataclass(frozen=True)
class NuggetOptions:
    max_nuggets: int = DEFAULT_MAX_NUGGETS
    passage_chars: int = DEFAULT_PASSAGE_CHARS  # of each relevant passage shown
    concurrency: int = LLM_CALLS.concurrency
    language: str = "auto"  # of the default prompt: zh, en, or auto (from the questions)
    prompt_file: Path | None = None
    force: bool = False  # write every question's nuggets again, hand-written ones included

    def check(self) -> None:
        for name, low, high in (("max_nuggets", 1, MAX_NUGGETS), ("passage_chars", 100, 1_000_000),
                                ("concurrency", 1, 256)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise NuggetOptionError(f"{name} must be a whole number from {low} to {high}; got {value!r}")
        if self.language not in ("auto", "zh", "en"):
            raise NuggetOptionError(f"language must be auto, zh or en; got {self.language!r}")


class WrittenNuggets(BaseModel):
    """One journal line: what the model wrote for one question under one plan (or why it failed)."""

    model_config = ConfigDict(extra="forbid")
    journal_version: Literal[1] = JOURNAL_VERSION
    plan: str
    question_id: str
    source_sha256: str
    nuggets: list[Nugget] = Field(default_factory=list)
    error: str | None = None
    dropped: dict[str, int] = Field(default_factory=dict)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    nuggets: list[Nugget]


@dataclass
class NuggetResult:
    """What `write_question_nuggets` did: the records written, and the counts and failures to report."""

    records: list[QuestionNuggets]
    counts: Counter = field(default_factory=Counter)
    failed: list[dict] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # model-written nuggets whose question or sources changed since
    usage: dict = field(default_factory=dict)


def passages(question: QuestionRecord, documents: dict, limit: int) -> list[str]:
    """The question's relevant passages: its spans' text when it has spans, else each relevant document, each cut
    to `limit` characters."""
    found = []
    for relevant in question.relevant:
        document = documents.get(relevant.doc_id)
        if document is None or relevant.grade <= 0:
            continue
        text = " … ".join(document.text[start:end] for start, end in relevant.spans) if relevant.spans \
            else document.text
        found.append(text[:limit])
    return found


def source_sha256(question: QuestionRecord, shown: list[str]) -> str:
    """What nuggets are written from: the question, its reference answer and the passages shown."""
    text = "\0".join([question.text, question.ground_truth or "", *shown])
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def parse_nuggets(text: str) -> list[Nugget]:
    data = extract_json(text)
    if isinstance(data, list):
        data = {"nuggets": data}
    if not isinstance(data, dict):
        raise MalformedAnswer('expected one JSON object {"nuggets": [{"text": "...", "importance": "vital" or '
                              '"okay"}, ...]}')
    try:
        return _Reply.model_validate(data).nuggets
    except ValidationError as error:
        raise MalformedAnswer(describe(error, "answer")) from None


def kept_nuggets(written: list[Nugget], limit: int) -> tuple[list[Nugget], Counter]:
    """Written nuggets without repeats (same folded text), at most `limit`, vital ones first when there are more."""
    dropped, seen, unique = Counter(), set(), []
    for nugget in written:
        key = fold(nugget.text)[0]
        if key in seen:
            dropped["repeated"] += 1
            continue
        seen.add(key)
        unique.append(nugget)
    if len(unique) > limit:
        dropped["beyond max_nuggets"] += len(unique) - limit
        chosen = set(sorted(range(len(unique)), key=lambda i: (unique[i].importance != "vital", i))[:limit])
        unique = [nugget for i, nugget in enumerate(unique) if i in chosen]
    return unique, dropped


@dataclass(frozen=True)
class _Plan:
    prompt: Prompt
    language: str
    model: str
    options: NuggetOptions

    @property
    def key(self) -> str:
        parts = [self.model, self.prompt.hash, str(self.options.max_nuggets), str(self.options.passage_chars)]
        return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:16]


def _write_one(question: QuestionRecord, shown: list[str], plan: _Plan, client: ChatClient) -> WrittenNuggets:
    none = {"zh": "（无）", "en": "(none)"}[plan.language]
    content = plan.prompt.fill(question=question.text, ground_truth=question.ground_truth or none,
                               passages="\n\n".join(f"[{i}] {text}" for i, text in enumerate(shown)) or none,
                               max_nuggets=plan.options.max_nuggets)
    result = WrittenNuggets(plan=plan.key, question_id=question.id, source_sha256=source_sha256(question, shown))
    written, error = ask(client, [{"role": "user", "content": content}], parse_nuggets, plan.language)
    if written is None:
        return result.model_copy(update={"error": error})
    kept, dropped = kept_nuggets(written, plan.options.max_nuggets)
    return result.model_copy(update={"nuggets": kept, "dropped": dict(dropped)})


def write_question_nuggets(dataset: Dataset, out, settings: LLMSettings, options: NuggetOptions = NuggetOptions(),
                           progress=None, stop=None) -> NuggetResult:
    """Nuggets for the questions of `dataset` that have none in `out` (every question with `options.force`),
    written to `out` with the ones kept; see the module's text. Raises `TooManyFailures` (nothing written, the
    journal kept) when more than half of the questions asked got no usable answer."""
    options.check()
    progress = as_progress(progress)
    out = Path(out)
    existing = read_nuggets(out) if out.is_file() else {}
    language = (guess_language(q.text for q in dataset.questions) if options.language == "auto"
                else options.language)
    plan = _Plan(load_prompt("nuggets", language, options.prompt_file), language, settings.model, options)
    documents = {d.id: d for d in dataset.documents}
    result = NuggetResult([])
    todo: list[tuple[QuestionRecord, list[str]]] = []
    for question in dataset.questions:
        shown = passages(question, documents, options.passage_chars)
        before = existing.get(question.id)
        if before is not None and not options.force:
            result.counts["kept by hand" if before.by_hand else "kept"] += 1
            if not before.by_hand and before.source_sha256 not in (None, source_sha256(question, shown)):
                result.stale.append(question.id)
        elif not shown and not (question.ground_truth or "").strip():
            result.counts[NOTHING_TO_WRITE_FROM] += 1
        else:
            todo.append((question, shown))
    journal = Journal(out.parent / JOURNAL_NAME, WrittenNuggets,
                      elsewhere="write the nuggets file (--out) to a folder on another disk: its journal is kept "
                                "beside it")
    sources = {q.id: source_sha256(q, shown) for q, shown in todo}
    done = {e.question_id: e for e in journal.load()  # later lines win; failures are asked again
            if e.plan == plan.key and e.error is None and sources.get(e.question_id) == e.source_sha256}
    if done:
        progress.note(f"resuming: {len(done)} questions' nuggets were written before (journal {journal.path})")
    asking = [(q, shown) for q, shown in todo if q.id not in done]
    if asking:  # a run with nothing to ask needs no endpoint (nor a key)
        client = ChatClient(settings, stop=stop)
        progress.stage("nuggets", total=len(asking), unit="question")
        try:
            for _, written in parallel_map(lambda item: _write_one(*item, plan, client), asking,
                                           options.concurrency, stop=stop, name="ragretrieval-nuggets"):
                journal.append(written)
                done[written.question_id] = written
                progress.advance(1, client.usage.status())
        except LLMError as failure:
            raise LLMError(f"{failure}\n{len(done)} of {len(todo)} questions' nuggets are saved in {journal.path}; "
                           "run the same command again to continue") from None
        result.usage = client.usage.as_dict()
    result.failed = [{"question_id": q.id, "reason": done[q.id].error} for q, _ in todo if done[q.id].error]
    check_failures([f["reason"] for f in result.failed], len(todo), "questions",
                   f"nothing written; the finished questions are kept in {journal.path}")
    new = {}
    for question, _ in todo:
        written = done[question.id]
        if written.error is None:
            result.counts.update(written.dropped)
            result.counts["written"] += 1
            new[question.id] = QuestionNuggets(question_id=question.id, nuggets=written.nuggets,
                                               written_by=MODEL_WRITTEN, model=settings.model,
                                               prompt_hash=plan.prompt.hash, source_sha256=written.source_sha256)
    asked = {q.id for q in dataset.questions}
    order = [q.id for q in dataset.questions] + [qid for qid in existing if qid not in asked]
    result.records = [new.get(qid) or existing[qid] for qid in order if qid in new or qid in existing]
    result.counts["failed"] = len(result.failed)
    write_nuggets(out, result.records)
    journal.remove()
    return result
