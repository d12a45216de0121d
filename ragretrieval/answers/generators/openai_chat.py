"""`openai:<model>`: answers from any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...) through the client every
LLM feature shares (ragretrieval/llm/client.py): the answer cache (an identical request is never paid twice, so a run
killed halfway and started again sends no request twice), retries with backoff (``--max-retries``, first wait
``--sleep-time``), and the bill (``--price-in``, ``--price-out``).

The user message is the Jinja prompt (prompt.py) filled with the question and its contexts; ``--system-message``
comes first when set (the language's default otherwise; ``--system-message ""`` sends none), then the earlier turns
of a multi-turn question (`conversation_history`), as they were, before the prompt. ``--text-completion``
sends the messages joined as one prompt to ``/completions`` instead of ``/chat/completions``.

An endpoint that refuses one request (HTTP 400, 413, 422: a context too long, say), or a reply without text (content
null or empty, only a refusal or tool calls: llm/client.py), fails that question only, with the reason; any
other error that outlasts the retries (a bad key, a server that stays down) stops the run, whose finished questions
are kept.
"""

from __future__ import annotations

from typing import ClassVar

from ...llm.client import ChatClient, LLMError, LLMSettings, price
from ...work.options import NoOptions, PluginOptions, SettingsError
from ..prompt import SYSTEM_MESSAGES, AnswerPrompt
from .base import (
    Generated,
    GenerationFailed,
    GenerationRequest,
    GeneratorOptions,
    context_documents,
    conversation_history,
)


class OpenAIGenerator:
    needs_contexts: ClassVar[bool] = True
    provides_contexts = False
    Options: ClassVar[type[PluginOptions]] = NoOptions  # its settings are the answer run's (base_url, ...)

    def __init__(self, spec: str, settings: LLMSettings, prompt: AnswerPrompt, system_message: str | None,
                 stop=None, budget=None):
        self.spec, self.settings, self.prompt, self.system_message = spec, settings, prompt, system_message
        self.client = ChatClient(settings, stop=stop, budget=budget)

    @classmethod
    def build(cls, spec: str, argument: str, options: GeneratorOptions) -> "OpenAIGenerator":
        if options.options:
            raise SettingsError(f"{spec}: takes no generator_options (got {sorted(options.options)[0]!r}); its "
                                "settings are base_url, temperature, max_tokens, ...", ["generator_options"])
        settings = LLMSettings(model=argument, base_url=options.base_url, api_key_env=options.api_key_env,
                               timeout=options.timeout, max_retries=options.max_retries, backoff=options.sleep_time,
                               temperature=options.temperature, max_tokens=options.max_tokens,
                               text_completion=options.text_completion, price_in=options.price_in,
                               price_out=options.price_out)
        system = options.system_message
        if system is None:
            system = SYSTEM_MESSAGES.get(options.language, SYSTEM_MESSAGES["en"])
        return cls(spec, settings, AnswerPrompt.load(options.language, options.prompt_file), system or None,
                   options.stop, options.budget)

    def messages(self, request: GenerationRequest) -> list[dict]:
        user = self.prompt.render(request.question.text, context_documents(request.contexts),
                                  request.refusal_message)
        system = [{"role": "system", "content": self.system_message}] if self.system_message else []
        return system + conversation_history(request.question) + [{"role": "user", "content": user}]

    def generate(self, request: GenerationRequest) -> Generated:
        try:
            answer = self.client.complete(self.messages(request))
        except LLMError as error:
            if error.per_request:  # this request is refused (too long, ...) or has no text; others may pass
                raise GenerationFailed(str(error)) from None
            raise
        return Generated(answer.text, input_tokens=answer.prompt_tokens, output_tokens=answer.completion_tokens,
                         latency=answer.latency, cost=price(answer, self.settings), cached=answer.cached)

    def info(self) -> dict:
        return {**self.settings.public(), "prompt": self.prompt.source, "prompt_hash": self.prompt.hash,
                "system_message": self.system_message}

    @property
    def usage(self):
        return self.client.usage
