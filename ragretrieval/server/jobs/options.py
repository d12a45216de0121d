"""What an evaluation may ask of the built-in engine, checked when the evaluation is created (a bad name or value is
a 400 at once, not a FAILED evaluation later), and turned into `ragretrieval answer`'s `AnswerSettings`.

The evaluation's ``generator``, ``retriever`` and ``judge`` are checked against ragretrieval's registries (plug-ins
included); its ``options`` against `EngineOptions`, the subset of `answer`'s options that is safe to take from a web
page. Left out on purpose: anything that reads a file on the server (``--prompt``, ``--unsafe-words``,
``--lemmatizer fst:``, an http mapping file), anything that names an environment variable (``--api-key-env``, http
``header.*`` values with ``${VAR}``: a page could have the server send any of its variables to a URL of its choosing),
and ``file:`` answers. Those stay with the command line.

Models and retrievers. A model name can be a folder or a Hugging Face id, which the server would read from its disk
(and whose errors would tell a client whether a path exists), so ``options.model`` must be a fixed name of the
embedders' registry (``m3e-small``, ``e5-small-q4``, ...: `registered_models`) or a name the operator allowed
(``serve --allow-model NAME``, repeatable); anything else is refused with one message that never depends on the
name or on the server's disk. Retrievers are those that need nothing outside ragretrieval (the sweepable ones:
``bm25``, ``dense``, ``hybrid``); ``run-file`` (a file on the server), ``http`` and ``rerank`` (settings the web
does not take) are refused when the evaluation is created.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ...answers.generators import GeneratorError, GeneratorOptions, generator_class
from ...answers.judges import JudgeError, JudgeOptions
from ...answers.session import AnswerSettings
from ...embedders.registry import registered_models
from ...evaluation.report import EvalConfig
from ...retrieval.registry import available_retrievers, retriever_class
from .engine import EngineError, EvaluationSettings
from .judging import check_judges

DEFAULT_RETRIEVER = "bm25"  # no model to load: an evaluation starts at once and runs offline
DEFAULT_KS = (1, 3, 5, 10)
HTTP_OPTIONS = {"request", "wrap", "answer", "source_id", "source_text", "timeout", "retries"}


class EngineOptions(BaseModel):
    """An evaluation's ``options``: `ragretrieval answer`'s options of the same names (docs/answers.md)."""

    model_config = ConfigDict(extra="forbid")
    contexts: Literal["retrieved", "given"] = "retrieved"
    context_k: int = Field(default=5, ge=1, le=100)
    shuffle_context: bool = False
    seed: int = 0
    model: str | None = Field(default=None, max_length=500)  # a dense retriever's embedding model
    chunk_size: int = Field(default=300, ge=20, le=100_000)
    chunk_overlap: int = Field(default=50, ge=0, le=100_000)
    ks: list[int] = Field(default_factory=lambda: list(DEFAULT_KS), min_length=1, max_length=20)
    rel_level: int = Field(default=1, ge=1)
    language: Literal["auto", "zh", "en", "pl"] = "auto"
    lemmatizer: str = Field(default="none", max_length=40)
    match: Literal["substring", "words"] = "substring"
    refusal_message: str | None = Field(default=None, max_length=1000)
    system_message: str | None = Field(default=None, max_length=20_000)
    citation_pattern: str | None = Field(default=None, max_length=500)
    cite_relevant: bool = True
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    max_retries: int = Field(default=5, ge=0, le=20)
    timeout: float = Field(default=120.0, gt=0, le=3600)
    text_completion: bool = False
    price_in: float = Field(default=0.0, ge=0)  # per million tokens, as `answer --price-in`
    price_out: float = Field(default=0.0, ge=0)
    judge_samples: int = Field(default=1, ge=1, le=9)  # ask each judge request N times, keep the majority
    judge_temperature: float | None = Field(default=None, ge=0, le=2)  # None: 0, or 0.7 with several samples
    generator_options: dict[str, str | int | float | bool] = Field(default_factory=dict)  # http: request, answer, ...

    @field_validator("model")
    @classmethod
    def _offered(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked when a client creates the evaluation (a validation context names the allowed models)."""
        allowed = (info.context or {}).get("allowed_models")
        if value is not None and allowed is not None and value not in offered_models(allowed):
            raise ValueError(f"not a model this server offers (it offers {', '.join(offered_models(allowed))}; "
                             "the server's operator can offer others with serve --allow-model NAME)")
        return value

    @field_validator("lemmatizer")
    @classmethod
    def _no_files(cls, value: str) -> str:
        if value != "none" and value.partition(":")[0] != "simplemma":
            raise ValueError("must be none or simplemma[:LANG] (fst: reads files on the server: use "
                             "`ragretrieval answer` for it)")
        return value

    @field_validator("ks")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(k < 1 for k in value):
            raise ValueError("cutoffs must be at least 1")
        return sorted(set(value))

    @field_validator("generator_options")
    @classmethod
    def _http_mapping_only(cls, value: dict) -> dict:
        for name in value:
            if name not in HTTP_OPTIONS:
                raise ValueError(f"{name!r} is not allowed here (allowed: {', '.join(sorted(HTTP_OPTIONS))}; "
                                 "headers and mapping files stay with `ragretrieval answer`)")
        return value


def _problems(error: ValidationError) -> str:
    return "; ".join(f"options.{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
                     for e in error.errors())


def offered_models(allowed=()) -> list[str]:
    """The model names a web evaluation may use: the registry's fixed names, then those the operator allowed."""
    return list(dict.fromkeys([*registered_models(), *allowed]))


def web_retrievers() -> list[str]:
    """The retrievers a web evaluation may use: those that need nothing outside ragretrieval (no file, no service)."""
    return sorted(name for name in available_retrievers() if retriever_class(name).sweepable)


def engine_options(options: dict, allowed_models=None) -> EngineOptions:
    """`options` parsed; with `allowed_models` (a client creating an evaluation), ``model`` must be offered."""
    context = {"allowed_models": tuple(allowed_models)} if allowed_models is not None else None
    try:
        return EngineOptions.model_validate(options, context=context)
    except ValidationError as error:
        raise EngineError(_problems(error)) from None


def check_evaluation(generator: str, retriever: str | None, judge: str | None, options: dict,
                     allowed_models=()) -> None:
    """Everything about a new evaluation that can be checked before a worker prepares it; `EngineError` names the
    field. `allowed_models` are the models the operator offers besides the registry's (``serve --allow-model``)."""
    if generator.startswith("file:"):
        raise EngineError("generator file: reads answers from a file on the server; use `ragretrieval answer "
                          "--generator file:PATH` for answers already produced")
    try:
        generator_class(generator)
    except GeneratorError as error:
        raise EngineError(f"generator: {error}") from None
    if retriever and retriever not in available_retrievers():
        raise EngineError(f"unknown retriever {retriever!r}; known: {', '.join(web_retrievers())}")
    if retriever and retriever not in web_retrievers():
        raise EngineError(f"retriever {retriever!r} is not offered here: it reads a file or needs settings that stay "
                          f"with the command line (answer --retriever {retriever}); offered: "
                          f"{', '.join(web_retrievers())}")
    check_judges(judge)
    parsed = engine_options(options, allowed_models)
    if parsed.generator_options and not generator.startswith("http:"):
        raise EngineError("options.generator_options: only an http: generator takes them")
    sampling = judge_sampling(parsed)
    if not judge and {"judge_samples", "judge_temperature"} & set(options):
        raise EngineError("options.judge_samples, options.judge_temperature: they need a judge")
    try:
        JudgeOptions(**sampling).check()
    except JudgeError as error:
        raise EngineError(f"options.judge_samples: {error}") from None


def judge_sampling(options: EngineOptions | dict) -> dict:
    """`JudgeOptions` fields samples and temperature of an evaluation's ``options`` (``answer --judge-samples``,
    ``--judge-temperature``)."""
    o = options if isinstance(options, EngineOptions) else engine_options(options)
    return dict(samples=o.judge_samples, temperature=o.judge_temperature)


def answer_settings(evaluation: EvaluationSettings, api_key_env: str, stop=None) -> AnswerSettings:
    """`ragretrieval answer`'s settings for the evaluation: its generator, retriever and options, and the API key's
    variable of the worker (never one the evaluation names)."""
    o = engine_options(evaluation.options)
    retrieval = EvalConfig(retriever=evaluation.retriever or DEFAULT_RETRIEVER,
                           **({"model": o.model} if o.model else {}), chunk_size=o.chunk_size,
                           chunk_overlap=o.chunk_overlap, ks=sorted({*o.ks, o.context_k}), top_k=o.context_k,
                           rel_level=o.rel_level)
    generator = GeneratorOptions(
        base_url=evaluation.base_url, api_key_env=api_key_env, system_message=o.system_message,
        temperature=o.temperature, max_tokens=o.max_tokens, max_retries=o.max_retries, timeout=o.timeout,
        text_completion=o.text_completion, price_in=o.price_in, price_out=o.price_out,
        options=dict(o.generator_options), stop=stop)
    return AnswerSettings(generator=evaluation.generator, contexts=o.contexts, context_k=o.context_k,
                          shuffle_context=o.shuffle_context, seed=o.seed, retrieval=retrieval, language=o.language,
                          lemmatizer=o.lemmatizer, match=o.match, refusal_message=o.refusal_message,
                          citation_pattern=o.citation_pattern, cite_relevant=o.cite_relevant,
                          generator_options=generator)
