"""`http:<url>`: your own RAG service answers. Each question is POSTed as JSON, in one of the request shapes agent
evaluation sets use, and the answer and its sources are read from the JSON reply with dotted paths.

Options (``--generator-option key=value``, or ``mapping=FILE`` with the same keys in YAML/JSON; options win):

- ``request``: ``query`` (default: ``{"query": ..., "history": [...]}``), ``messages`` (``{"messages": [...history,
  {"role": "user", "content": ...}]}``) or ``text`` (the question as a JSON string). ``history`` comes from the
  question's ``metadata.history`` (agent-evaluation imports keep it there). ``wrap=KEY`` sends ``{KEY: <request>}``.
- ``answer``: the path of the answer text (default: the first of ``response``, ``answer``, ``output``, ``text`` that
  the reply has, or the reply itself when it is a string), e.g. ``data.answer`` or ``choices.0.message.content``.
- ``source_id``, ``source_text``: paths of each source's document id and text, with ``[]`` marking the list, e.g.
  ``retrieved_context[].doc_uri`` and ``retrieved_context[].content`` (the defaults, used when the reply has that
  list). Sources become the answer's contexts, in order; ids naming corpus documents are resolved to them.
- ``header.NAME=VALUE``: a request header; ``${VAR}`` in a value is read from the environment when the request is
  sent, so a token never reaches the report. ``timeout`` (seconds per request) and ``retries``: their defaults are
  `SERVICE_CALLS`'s.

Credentials in the URL: ``https://user:password@host/ask`` is sent as HTTP basic authentication (the user info is
taken out of the URL; a ``header.Authorization`` option wins), and a token in the query string is sent as given.
Neither is written down: the run records the URL as `io.redact.public_url` writes it (no user info, ``token=***``), and
every message names it so. A header naming an environment variable keeps the token off the command line too.

A reply whose answer is empty (or only white space) fails the question ("the answer is empty"): an empty string is
no answer to score.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from pathlib import Path
from typing import ClassVar, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import ConfigDict, Field, model_validator

from ...data.importers.agent_jsonl import DocumentUris
from ...io.http import HttpError, request_json
from ...io.redact import public_url
from ...retrieval.external import ExternalRetrieverError
from ...retrieval.external.http import expand_env
from ...retrieval.external.paths import HitPath, follow, hit_list
from ...work.limits import Retries, Timeout
from ...work.options import PluginOptions, SettingsError, plugin_options
from ..report import ContextUsed
from ..settings import GENERATOR_CALLS
from .base import (
    Generated,
    GenerationFailed,
    GenerationRequest,
    GeneratorError,
    GeneratorOptions,
    conversation_history,
)

REQUEST_SHAPES = ("query", "messages", "text")
ANSWER_KEYS = ("response", "answer", "output", "text")
DEFAULT_SOURCES = ("retrieved_context[].doc_uri", "retrieved_context[].content")
HEADER = "header."  # header.NAME=VALUE options: a request header each


# a RAG service answers within a minute and is asked again soon; questions at once: the answer run's `threads`
SERVICE_CALLS = GENERATOR_CALLS.but(timeout=60.0, retries=3, backoff=0.5)


class HttpGeneratorOptions(PluginOptions):
    """`http:`'s options, and ``header.NAME`` for each request header."""

    model_config = ConfigDict(extra="allow", frozen=True)
    request: Literal["query", "messages", "text"] = Field("query", description="the request's shape")
    wrap: str | None = Field(None, description="send {WRAP: <request>}")
    answer: str | None = Field(None, description="path of the answer text [default: response, answer, output or "
                                                 "text]")
    source_id: str | None = Field(None, description="path of each source's document id, e.g. "
                                                    "retrieved_context[].doc_uri")
    source_text: str | None = Field(None, description="path of each source's text")
    timeout: Timeout = SERVICE_CALLS.field("timeout", "seconds per request")
    retries: Retries = SERVICE_CALLS.field("retries", "retries on errors, timeouts, 429 and 5xx")
    mapping: str | None = Field(None, description="YAML or JSON file holding these options")

    @model_validator(mode="before")
    @classmethod
    def _headers_only(cls, values):
        if isinstance(values, dict):
            unknown = sorted(k for k in values if k not in cls.model_fields and not str(k).startswith(HEADER))
            if unknown:
                raise SettingsError(f"unknown option {unknown[0]!r} (known: {', '.join(cls.model_fields)}, "
                                    f"{HEADER}NAME)", [unknown[0]])
        return values


def load_options(options: dict) -> dict:
    """The options given, over those of a ``mapping=FILE``, validated (`HttpGeneratorOptions`)."""
    options = dict(options)
    if "mapping" in options:
        import yaml

        source = str(options.pop("mapping"))
        try:
            fields = yaml.safe_load(Path(source).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as error:
            raise GeneratorError(f"{source}: cannot read the generator mapping ({error})") from None
        if not isinstance(fields, dict):
            raise GeneratorError(f"{source}: the mapping must be an object of options")
        options = {**fields, **options}
    return plugin_options(HttpGeneratorOptions, options, "generator http:", "generator_options")


def basic_auth(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its user info, and the basic-authentication header that user info stands for (none: {})."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])), {"Authorization": f"Basic {token}"}


class HttpGenerator:
    needs_contexts: ClassVar[bool] = False
    provides_contexts = True
    Options: ClassVar[type[PluginOptions]] = HttpGeneratorOptions

    def __init__(self, spec: str, url: str, options: dict, documents: dict, stop=None):
        self.spec, self.stop = spec, stop
        self.url, self.auth = basic_auth(url)
        self.shown_url = public_url(url)  # what messages and the report name
        self.shape = options.get("request", "query")
        self.wrap = options.get("wrap")
        self.answer_path = str(options["answer"]).split(".") if options.get("answer") else None
        self.headers = {k.removeprefix(HEADER): str(v) for k, v in options.items() if k.startswith(HEADER)}
        self.calls = SERVICE_CALLS.but(**{part: options[part] for part in ("timeout", "retries") if part in options})
        self.timeout, self.retries = self.calls.timeout, self.calls.retries
        explicit = "source_id" in options or "source_text" in options
        paths = (options.get("source_id"), options.get("source_text")) if explicit else DEFAULT_SOURCES
        try:
            self.source_paths = [HitPath.parse(p, n) if p else None for p, n in zip(paths, ("source_id",
                                                                                            "source_text"))]
        except ExternalRetrieverError as error:
            raise GeneratorError(f"http: {error}") from None
        self.sources_required = explicit
        self.documents, self.uris = documents, DocumentUris(documents)
        self.options = {k: v for k, v in options.items() if not k.startswith(HEADER)}

    @classmethod
    def build(cls, spec: str, argument: str, options: GeneratorOptions) -> "HttpGenerator":
        if not argument.startswith(("http://", "https://")):
            raise GeneratorError(f"{spec}: expected http:<url> with an http:// or https:// URL")
        return cls(spec, argument, load_options(options.options), options.documents, options.stop)

    def body(self, request: GenerationRequest):
        question = request.question
        history = conversation_history(question)
        if self.shape == "text":
            body = question.text
        elif self.shape == "messages":
            body = {"messages": history + [{"role": "user", "content": question.text}]}
        else:
            body = {"query": question.text, "history": history}
        return {self.wrap: body} if self.wrap else body

    def generate(self, request: GenerationRequest) -> Generated:
        where = f"POST {self.shown_url} (question {request.question.id})"
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.auth,
                   **{k: expand_env(v) for k, v in self.headers.items()}}
        data = json.dumps(self.body(request), ensure_ascii=False).encode("utf-8")
        started = time.perf_counter()
        try:
            reply = request_json(urllib.request.Request(self.url, data=data, headers=headers, method="POST"),
                                 where=where, timeout=self.calls.timeout, **self.calls.retry_args(), stop=self.stop)
        except HttpError as error:
            raise GenerationFailed(str(error)) from None
        latency = time.perf_counter() - started
        try:
            return Generated(self.answer(reply, where), self.sources(reply, where), latency=latency)
        except ExternalRetrieverError as error:
            raise GenerationFailed(str(error)) from None

    def answer(self, reply, where: str) -> str:
        if self.answer_path:
            value = follow(reply, self.answer_path, ".".join(self.answer_path), where)
        elif isinstance(reply, str):
            value = reply
        else:
            key = next((k for k in ANSWER_KEYS if isinstance(reply, dict) and k in reply), None)
            if key is None:
                raise ExternalRetrieverError(f"{where}: no answer in the reply (looked for {', '.join(ANSWER_KEYS)}; "
                                             "set generator_options answer=PATH)")
            value = reply[key]
        if not isinstance(value, str):
            raise ExternalRetrieverError(f"{where}: the answer is a {type(value).__name__}, not a string")
        if not value.strip():
            raise ExternalRetrieverError(f"{where}: the answer is empty")
        return value

    def sources(self, reply, where: str) -> list[ContextUsed] | None:
        id_path, text_path = self.source_paths
        first = id_path or text_path
        if first is None:
            return None
        try:
            items = hit_list(reply, first, where)
        except ExternalRetrieverError:
            if self.sources_required:
                raise
            return None  # the default paths are only a guess
        contexts = []
        for rank, item in enumerate(items):
            name = follow(item, id_path.in_hit, id_path.text, f"{where}, source {rank}") if id_path else None
            text = follow(item, text_path.in_hit, text_path.text, f"{where}, source {rank}") if text_path else None
            doc_id = self.uris.resolve(str(name)) if name is not None else None
            document = self.documents.get(doc_id) if doc_id else None
            contexts.append(ContextUsed(doc_id=doc_id or (str(name) if name is not None else None),
                                        title=document.title if document else "",
                                        text=str(text) if text is not None else (document.text if document else "")))
        return contexts

    def info(self) -> dict:
        return {"url": self.shown_url, **self.options}
