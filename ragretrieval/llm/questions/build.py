"""`build-dataset --generator llm`: settings in, question records and a manifest entry out.

The CLI calls `llm_questions`; it owns the prompt, the client, the journal and the bookkeeping written to the
manifest (model, endpoint without credentials, prompt hash, counts, tokens, cost).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...data.corpus import Document
from ...errors import RagretrievalError
from ...work.options import SettingsError
from ..client import LLM_CALLS, ChatClient, LLMSettings
from ..plan import CostPlan
from ..prompts import guess_language, load_prompt
from ..replies import QUESTION_TYPES
from .generate import (
    GenerationPlan,
    GenerationResult,
    document_messages,
    journal_for,
    journaled_documents,
    pick_documents,
    run_documents,
    to_records,
)

REPLY_TOKENS_PER_QUESTION = 100  # a question, its answer and a verbatim quote, as JSON


class OptionError(RagretrievalError, ValueError):
    """A generator option that cannot work."""


@dataclass(frozen=True)
class QuestionOptions:
    per_doc: int = 3
    types: tuple[str, ...] = QUESTION_TYPES
    concurrency: int = LLM_CALLS.concurrency
    max_docs: int | None = None
    prompt_file: str | None = None
    language: str = "auto"
    retry_failed: bool = True  # ask again about documents whose answers failed in an earlier run


def parse_types(text: str) -> tuple[str, ...]:
    types = tuple(dict.fromkeys(part.strip().upper() for part in text.split(",") if part.strip()))
    unknown = [t for t in types if t not in QUESTION_TYPES]
    if unknown or not types:
        raise OptionError(f"question types must be among {', '.join(t.lower() for t in QUESTION_TYPES)}; got {text!r}")
    return types


def _plan(documents, settings: LLMSettings, options: QuestionOptions) -> GenerationPlan:
    if options.per_doc <= 0 or options.concurrency <= 0 or (options.max_docs is not None and options.max_docs <= 0):
        raise SettingsError("per_doc, concurrency and max_docs must be positive integers",
                            ["per_doc", "concurrency", "max_docs"])
    language = guess_language(d.text for d in documents) if options.language == "auto" else options.language
    prompt = load_prompt("questions", language, options.prompt_file)
    return GenerationPlan(prompt, language, settings.model, options.per_doc, options.types)


def plan_llm_questions(documents: list[Document], out_dir, settings: LLMSettings, options: QuestionOptions
                       ) -> CostPlan:
    """What `llm_questions` would send (one request per document not in the journal), with nothing sent."""
    plan = _plan(documents, settings, options)
    client = ChatClient(settings)
    chosen = pick_documents(documents, options.max_docs)
    done, _ = journaled_documents(chosen, plan, journal_for(out_dir), options.retry_failed)
    costs = CostPlan(notes=[f"{len(done)} documents are in the journal and are not asked again"] if done else [])
    for doc in chosen:
        if doc.id not in done:
            costs.add(client, "questions", doc.id, document_messages(doc, plan),
                      output_tokens=REPLY_TOKENS_PER_QUESTION * options.per_doc)
    return costs


def llm_questions(documents: list[Document], out_dir, settings: LLMSettings, options: QuestionOptions,
                  taken: set[str] = frozenset(), progress=None, stop=None,
                  budget=None) -> tuple[GenerationResult, dict]:
    """Questions for `options.max_docs` documents (all by default) and the manifest's record of how they were made.

    The journal in `out_dir` is left in place; remove it once the dataset is written."""
    plan = _plan(documents, settings, options)
    prompt, language = plan.prompt, plan.language
    client = ChatClient(settings, stop=stop, budget=budget)
    chosen = pick_documents(documents, options.max_docs)
    results = run_documents(chosen, plan, client, journal_for(out_dir), options.concurrency, progress,
                            options.retry_failed, stop)
    result = to_records(chosen, results, plan, taken)
    info = {
        **settings.public(),
        "prompt": prompt.source,
        "prompt_hash": prompt.hash,
        "language": language,
        "per_doc": options.per_doc,
        "types": list(options.types),
        "documents": len(chosen),
        "counts": dict(result.counts),
        "usage": client.usage.as_dict(),
        "failed_documents": result.failed,
    }
    return result, info
