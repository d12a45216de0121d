"""``POST /api/v1/question-sets/generate``: questions written by an LLM from a corpus's documents, returned for the
user to look over and keep; nothing is stored (the answers do go to the LLM answer cache, so asking again is free).

It is the `build-dataset --generator llm` question builder (llm/questions/) run on a few documents spread over the
corpus: `count` questions from ``ceil(count / per_doc)`` documents, each question keeping its verbatim evidence as
character spans, so a set made from them keeps relevance labels for retrieval metrics. The API key is read from the
server's environment (``serve --api-key-env``, default ``OPENAI_API_KEY``); the page never sees it.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from ..data.dataset import load_dataset
from ..llm.client import LLMSettings
from ..llm.questions.build import QuestionOptions, llm_questions
from .corpora import ServedCorpus, question_fields
from .schemas import GenerateIn, GenerateOut, QuestionIn


def generate_questions(corpus: ServedCorpus, request: GenerateIn, api_key_env: str) -> GenerateOut:
    dataset = load_dataset(corpus.path)
    settings = LLMSettings(model=request.model, base_url=request.base_url, api_key_env=api_key_env, timeout=120.0,
                           max_retries=2)
    with tempfile.TemporaryDirectory(prefix="rr-generate-") as work:  # the builder's journal, dropped after
        prompt_file = None
        if request.prompt:
            prompt_file = Path(work) / "prompt.md"
            prompt_file.write_text(request.prompt, encoding="utf-8")
        options = QuestionOptions(per_doc=request.per_doc, types=tuple(request.question_types),
                                  concurrency=4, max_docs=math.ceil(request.count / request.per_doc),
                                  prompt_file=str(prompt_file) if prompt_file else None, language=request.language)
        result, info = llm_questions(list(dataset.documents), work, settings, options)
    kept = [QuestionIn(**question_fields(record)) for record in result.questions[: request.count]]
    return GenerateOut(questions=kept, counts=info["counts"], usage=info["usage"],
                       failed_documents=info["failed_documents"])


def default_prompt(language: str) -> str:
    """The builder's default prompt text, for the dialog's editable prompt."""
    from ..llm.prompts import load_prompt

    return load_prompt("questions", language).text
