"""`http`: evaluate any running retrieval service, given its URL and a small request/response mapping.

Every question is one request (bounded concurrency, a timeout, retries with exponential backoff on connection
errors, timeouts, 429 and 5xx); the hits are read from the response with dotted paths (see paths.py). Header values
may name environment variables (``Bearer ${MY_TOKEN}``): they are expanded only into the request, so a key never
reaches the report, which records the mapping as written. The mapping format is in docs/bring-your-own.md.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, ClassVar, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from ...data.dataset import QuestionRecord
from ...io.http import HttpError, request_json
from ...io.jsonfiles import describe
from ...work.limits import Concurrency, Retries, Timeout, Wait
from ...work.options import PluginOptions, SettingsError, plugin_options
from ...work.pool import parallel_map
from ...work.progress import as_progress
from ...work.remote import RemoteCall
from ..base import Hit, Ranking, RetrieverSpec, SimpleRetriever
from ..hits import ChunkLookup, ranking_from_hits
from . import ExternalRetrieverError
from .paths import HitPath, follow, hit_list

MAPPING_VERSION = 1
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


# a search answers in well under a second: a request still waiting after 30 s is lost, and asked again soon
SEARCH_CALLS = RemoteCall(timeout=30.0, retries=3, backoff=0.5, concurrency=4)


class HttpMapping(BaseModel):
    """How to ask the service and where the hits are in its answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1] = Field(MAPPING_VERSION, description="the mapping format's version")
    url: str = Field(description="the service's URL")
    method: Literal["POST", "GET"] = Field("POST", description="POST a JSON body, or GET with query parameters")
    headers: dict[str, str] = Field(default_factory=dict, description="request headers (JSON); ${VAR} is read from "
                                                                      "the environment when sent")
    # POST: the JSON body; GET: the query parameters. Strings may hold {question}, {k} and {id}; a string that is
    # exactly "{k}" becomes the number k.
    body: Any = Field(default_factory=lambda: {"query": "{question}", "k": "{k}"},
                      description="the request (JSON) with {question}, {k}, {id} filled in")
    chunk_id: str | None = Field(None, description="path of each hit's chunk id, e.g. results[].id")
    parent_id: str | None = Field(None, description="path of each hit's document id, e.g. results[].metadata.doc")
    score: str | None = Field(None, description="path of each hit's score")
    text: str | None = Field(None, description="path of each hit's text")
    concurrency: Concurrency = SEARCH_CALLS.field("concurrency", "requests in flight")
    timeout: Timeout = SEARCH_CALLS.field("timeout", "seconds per request")
    retries: Retries = SEARCH_CALLS.field("retries", "retries on errors, timeouts, 429 and 5xx")
    backoff: Wait = SEARCH_CALLS.field("backoff", "seconds before the first retry (doubling)")

    @property
    def calls(self) -> RemoteCall:
        return RemoteCall(timeout=self.timeout, retries=self.retries, backoff=self.backoff,
                          concurrency=self.concurrency)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        return url

    @model_validator(mode="after")
    def _paths(self):
        if self.chunk_id is None and self.parent_id is None:
            raise ValueError("give chunk_id or parent_id (or both): a dotted path such as 'results[].id'")
        lists = {HitPath.parse(path, name).to_list for name, path in self.paths().items()}
        if len(lists) > 1:
            raise ValueError(f"all paths must share one list of hits; got {sorted('.'.join(p) for p in lists)}")
        return self

    def paths(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in ("chunk_id", "parent_id", "score", "text")
                if getattr(self, name) is not None}


def _with_default(field) -> str:
    """A mapping field's help with its default (as an option it is unset unless given: the mapping decides)."""
    if field.is_required():
        return f"{field.description} (required, here or in the mapping)"
    default = field.get_default(call_default_factory=True)
    return field.description if default is None else f"{field.description} [default: {json.dumps(default)}]"


HttpOptions = create_model(  # every mapping field may be given as an option (options win over the mapping file)
    "HttpOptions", __base__=PluginOptions, __doc__="`http`'s options: a mapping file and/or its fields.",
    mapping=(str | None, Field(None, description="YAML or JSON file holding the mapping's fields")),
    **{name: (field.annotation | None, Field(None, description=_with_default(field)))
       for name, field in HttpMapping.model_fields.items() if name != "version"})


def load_mapping(options: dict) -> HttpMapping:
    """From ``mapping=FILE`` (YAML or JSON) and/or single fields given as options; options win over the file."""
    options = dict(options)
    source, fields = "retriever_options", {}
    if "mapping" in options:
        source = str(options.pop("mapping"))
        try:
            import yaml

            fields = yaml.safe_load(Path(source).read_text(encoding="utf-8")) or {}
        except OSError as error:
            raise ExternalRetrieverError(f"{source}: cannot read the mapping: {error.strerror or error}") from None
        except yaml.YAMLError as error:
            raise ExternalRetrieverError(f"{source}: not valid YAML/JSON: {error}") from None
        if not isinstance(fields, dict):
            raise ExternalRetrieverError(f"{source}: the mapping must be an object of fields")
    for key in ("body", "headers"):
        if isinstance(options.get(key), str):
            try:
                options[key] = json.loads(options[key])
            except json.JSONDecodeError as error:
                raise SettingsError(f"retriever_options.{key}: not valid JSON: {error}",
                                    [f"retriever_options.{key}"]) from None
    try:
        return HttpMapping.model_validate({**fields, **options})
    except ValidationError as error:
        raise ExternalRetrieverError(f"{source}: {describe(error, 'mapping')}") from None
    except ExternalRetrieverError as error:
        raise ExternalRetrieverError(f"{source}: {error}") from None


def fill(template, question: QuestionRecord, k: int):
    """The request template with {question}, {k} and {id} filled in."""
    if isinstance(template, dict):
        return {key: fill(value, question, k) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, question, k) for value in template]
    if template == "{k}":
        return k
    if isinstance(template, str):
        return template.replace("{question}", question.text).replace("{k}", str(k)).replace("{id}", question.id)
    return template


def expand_env(value: str) -> str:
    def lookup(match):
        if match.group(1) not in os.environ:
            raise ExternalRetrieverError(f"header value names ${{{match.group(1)}}}, which is not set in the "
                                         "environment")
        return os.environ[match.group(1)]

    return _ENV.sub(lookup, value)


class HttpRetriever(SimpleRetriever):
    """Sends each question to the service and reads the hits it names (hits.py maps them to our chunks)."""

    config_fields: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[PluginOptions]] = HttpOptions

    def __init__(self, mapping: HttpMapping, progress=None, stop=None):
        self.mapping, self.progress, self.stop = mapping, as_progress(progress), stop
        self.paths = {name: HitPath.parse(path, name) for name, path in mapping.paths().items()}
        self.timings: dict[str, float] = {}
        self.requests = 0
        self._chunks = ChunkLookup(())

    @classmethod
    def build(cls, spec: RetrieverSpec, context) -> "HttpRetriever":
        options = plugin_options(cls.Options, spec.options, "retriever http", "retriever_options")
        return cls(load_mapping(options), progress=context.progress, stop=context.stop)

    def index(self, chunks) -> None:
        """Nothing to index (the service holds its own index); learn our chunk ids to recognise them in hits."""
        self._chunks = ChunkLookup(chunks)

    def search(self, questions: Sequence[QuestionRecord], depth: int) -> Ranking:
        return ranking_from_hits(self.search_ids(questions, depth), self._chunks)

    def search_ids(self, questions: Sequence[QuestionRecord], depth: int) -> list[list[Hit]]:
        headers = {key: expand_env(value) for key, value in self.mapping.headers.items()}
        hits: list[list[Hit] | None] = [None] * len(questions)
        self.progress.stage(f"asking {self.mapping.url}", total=len(questions), unit="question")
        for index, found in parallel_map(lambda q: self._ask(q, depth, headers), questions,
                                         self.mapping.concurrency, stop=self.stop, name="ragretrieval-http"):
            hits[index] = found
            self.progress.advance()
        return hits

    def _request(self, question: QuestionRecord, depth: int, headers: dict) -> urllib.request.Request:
        filled = fill(self.mapping.body, question, depth)
        headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        if self.mapping.method == "GET":
            query = urllib.parse.urlencode(filled, doseq=True) if isinstance(filled, dict) else ""
            separator = "&" if urllib.parse.urlsplit(self.mapping.url).query else "?"
            return urllib.request.Request(self.mapping.url + (separator + query if query else ""), headers=headers)
        return urllib.request.Request(self.mapping.url, data=json.dumps(filled, ensure_ascii=False).encode("utf-8"),
                                      headers=headers, method="POST")

    def _ask(self, question: QuestionRecord, depth: int, headers: dict) -> list[Hit]:
        where = f"{self.mapping.method} {self.mapping.url} (question {question.id})"
        try:
            calls = self.mapping.calls
            answer = request_json(self._request(question, depth, headers), where=where, timeout=calls.timeout,
                                  **calls.retry_args(), stop=self.stop)
        except HttpError as error:
            raise ExternalRetrieverError(str(error)) from None
        self.requests += 1
        return self.read_hits(answer, where)

    def read_hits(self, answer, where: str) -> list[Hit]:
        items = hit_list(answer, next(iter(self.paths.values())), where)
        hits = []
        for rank, item in enumerate(items):
            values = {name: follow(item, path.in_hit, path.text, f"{where}, hit {rank}")
                      for name, path in self.paths.items()}
            for name in ("chunk_id", "parent_id", "text"):
                if name in values and not isinstance(values[name], (str, int)):
                    raise ExternalRetrieverError(f"{where}, hit {rank}: path {self.paths[name].text!r}: expected a "
                                                 f"string, found {type(values[name]).__name__}")
            score = values.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
                raise ExternalRetrieverError(f"{where}, hit {rank}: path {self.paths['score'].text!r}: expected a "
                                             f"number, found {score!r}")
            hits.append(Hit(**{name: str(v) if name != "score" else float(v) for name, v in values.items()}))
        return hits
