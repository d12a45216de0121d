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
from ..llm.client import LLM_CALLS, EndpointFailed, LLMError, LLMSettings
from ..llm.questions.build import QuestionOptions, llm_questions
from ..llm.questions.generate import GenerationInterrupted
from .corpora import ServedCorpus, question_fields
from .schemas import GenerateIn, GenerateOut, QuestionIn

# someone waits at the dialog: two retries, then the page says what the endpoint did
DIALOG_CALLS = LLM_CALLS.but(retries=2)


def generate_questions(corpus: ServedCorpus, request: GenerateIn, api_key_env: str) -> GenerateOut:
    dataset = load_dataset(corpus.path)
    settings = LLMSettings(model=request.model, base_url=request.base_url, api_key_env=api_key_env,
                           timeout=DIALOG_CALLS.timeout, max_retries=DIALOG_CALLS.retries)
    with tempfile.TemporaryDirectory(prefix="rr-generate-") as work:  # the builder's journal, dropped after
        prompt_file = None
        if request.prompt:
            prompt_file = Path(work) / "prompt.md"
            prompt_file.write_text(request.prompt, encoding="utf-8")
        options = QuestionOptions(per_doc=request.per_doc, types=tuple(request.question_types),
                                  concurrency=DIALOG_CALLS.concurrency,
                                  max_docs=math.ceil(request.count / request.per_doc),
                                  prompt_file=str(prompt_file) if prompt_file else None, language=request.language)
        try:
            result, info = llm_questions(list(dataset.documents), work, settings, options)
        except LLMError as error:
            raise LLMError(web_message(error), error.status) from None
    kept = [QuestionIn(**question_fields(record)) for record in result.questions[: request.count]]
    return GenerateOut(questions=kept, counts=info["counts"], usage=info["usage"],
                       failed_documents=info["failed_documents"])


RETRY_LATER = frozenset({408, 409, 425, 429})


def web_message(error: LLMError) -> str:
    """The failure in the dialog's words: what the model endpoint did and what to do in the page. No server path
    (the builder's journal is a temporary folder, dropped) and no command-line advice."""
    failure = error.failure if isinstance(error, GenerationInterrupted) else error
    if not isinstance(failure, EndpointFailed):  # not asked at all: the server's own setting (its API key)
        return str(failure)
    if failure.answered is None:
        did = {"timeout": "did not answer in time", "NotACompletion": "answered something that is not a "
               "completion"}.get(failure.kind, "could not be reached")
        return f"the model endpoint {did}; check the base URL and model, then try again"
    if failure.answered >= 500 or failure.answered in RETRY_LATER:
        return f"the model endpoint answered {failure.answered}; try again"
    if failure.answered in (401, 403):
        return (f"the model endpoint answered {failure.answered}: it refused the server's API key; the server's "
                "operator sets the key")
    return f"the model endpoint answered {failure.answered}; check the model and the base URL"


def default_prompt(language: str) -> str:
    """The builder's default prompt text, for the dialog's editable prompt."""
    from ..llm.prompts import load_prompt

    return load_prompt("questions", language).text
