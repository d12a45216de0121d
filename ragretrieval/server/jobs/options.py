"""What an evaluation may ask of the built-in engine: its ``options`` are `AnswerSettings` fields, the settings of
`ragretrieval answer` under the same names (docs/answers.md), with the retrieval settings (``chunk_size``,
``model``, ``ks``, ``retriever_options``, ...) at the top level, as `ragretrieval.answer`'s keyword arguments are.
Their defaults and rules are the model's; `EvaluationOptions` is the part that is safe to take from a web page (its
fields are copied from the models, so the API's OpenAPI description shows the same defaults).

Left out on purpose: anything that reads a file on the server (``prompt_file``, ``unsafe_words``, ``judge_prompts``,
``--lemmatizer fst:``, an http mapping file), anything that names an environment variable (``api_key_env``,
``embed.api_key_env``, http ``header.*`` values with ``${VAR}``: a page could have the server send any of its
variables to a URL of its choosing), ``file:`` answers, and retrievers that call or read something outside
ragretrieval (``http``, ``run-file``, ``rerank``). Those stay with the command line.

Models. A model name can be a folder or a Hugging Face id, which the server would read from its disk (and whose
errors would tell a client whether a path exists), so ``options.model`` must be a fixed name of the embedders'
registry (``m3e-small``, ``e5-small-q4``, ...: `registered_models`) or a name the operator allowed (``serve
--allow-model NAME``, repeatable); anything else is refused with one message that never depends on the name or on
the server's disk.

Checked when the evaluation is created (`check_evaluation`: a bad value is refused at once, naming its field, not a
FAILED evaluation later) and turned into `AnswerSettings` by `answer_settings` when a worker prepares it.
"""

from __future__ import annotations

import copy
import re

from pydantic import ConfigDict, create_model, field_validator

from ...answers.generators import generator_class
from ...answers.settings import AnswerSettings
from ...embedders.registry import family_of, registered_models
from ...evaluation.report import EvalConfig
from ...retrieval.registry import available_retrievers, retriever_class
from ...stores import BUILT_IN
from ...work.options import SettingsError, build_settings
from .contract import EngineError, EvaluationSettings
from .judging import check_judges

# evaluations created before 0.3 left `retriever` empty, which meant bm25 then (the default is EvalConfig's now);
# new evaluations store the retriever they run with
RETRIEVER_BEFORE_0_3 = "bm25"
ANSWER_OPTIONS = ("contexts", "context_k", "shuffle_context", "seed", "language", "lemmatizer", "match",
                  "refusal_message", "system_message", "citation_pattern", "cite_relevant", "temperature",
                  "max_tokens", "max_retries", "sleep_time", "timeout", "text_completion", "price_in", "price_out",
                  "judge_samples", "judge_temperature", "judge_language", "judge_price_in", "judge_price_out",
                  "judge_timeout", "judge_max_retries", "judge_nugget_batch", "generator_options")
RETRIEVAL_OPTIONS = ("model", "store", "store_options", "retriever_options", "embed", "chunk_size", "chunk_overlap",
                     "ks", "rel_level", "search_concurrency")
HTTP_OPTIONS = {"request", "wrap", "answer", "source_id", "source_text", "timeout", "retries"}


def _copied(model, names) -> dict:
    """The fields as `model` declares them: type, default, limits and help."""
    return {name: (model.model_fields[name].annotation, copy.copy(model.model_fields[name])) for name in names}


def _no_files(cls, value: str) -> str:
    if value != "none" and value.partition(":")[0] != "simplemma":
        raise ValueError("must be none or simplemma[:LANG] (fst: reads files on the server: use "
                         "`ragretrieval answer` for it)")
    return value


def _http_mapping_only(cls, value: dict) -> dict:
    for name in value:
        if name not in HTTP_OPTIONS:
            raise ValueError(f"{name!r} is not allowed here (allowed: {', '.join(sorted(HTTP_OPTIONS))}; "
                             "headers and mapping files stay with `ragretrieval answer`)")
    return value


def _no_key_variable(cls, value: dict | None) -> dict | None:
    if value and "api_key_env" in value:
        raise ValueError("api_key_env names a variable of the server's environment: keys are the worker's")
    return value


EvaluationOptions = create_model(
    "EvaluationOptions", __config__=ConfigDict(extra="forbid"),
    __doc__="An evaluation's `options`: `ragretrieval answer`'s settings of the same names (docs/answers.md).",
    __validators__={"lemmatizer_on_the_web": field_validator("lemmatizer")(classmethod(_no_files)),
                    "generator_options_on_the_web": field_validator("generator_options")(
                        classmethod(_http_mapping_only)),
                    "embed_on_the_web": field_validator("embed")(classmethod(_no_key_variable))},
    **_copied(AnswerSettings, ANSWER_OPTIONS), **_copied(EvalConfig, RETRIEVAL_OPTIONS))


def offered_models(allowed=()) -> list[str]:
    """The model names a web evaluation may use: the registry's fixed names, then those the operator allowed."""
    return list(dict.fromkeys([*registered_models(), *allowed]))


def offered(model, allowed=()) -> bool:
    """Whether a web evaluation may name `model`: a fixed name, one the operator allowed, or a name of a family
    that reads nothing (``hashing-64``: feature hashing, its width in the name; `EmbedderFamily.self_contained`)."""
    if model in offered_models(allowed):
        return True
    return (isinstance(model, str) and family_of(model).self_contained
            and re.fullmatch(r"[\w.@-]{1,100}", model) is not None)


def check_model(model, allowed=()) -> None:
    """``options.model`` must be offered (see the module's text); the refusal never depends on the server's disk."""
    if model is not None and not offered(model, allowed):
        raise EngineError(f"options.model: not a model this server offers (it offers "
                          f"{', '.join(offered_models(allowed))}; the server's operator can offer others with "
                          "serve --allow-model NAME)")


def check_store_options(store, options) -> None:
    """An engine store's options name a folder or a server (lancedb ``path``, milvus ``uri``, qdrant ``url``,
    chroma ``host``): a web evaluation may use such a store with its defaults (embedded, in a temporary folder), and
    options only for the built-in ones (faiss ``kind``, ...)."""
    if options and store not in (None, *BUILT_IN):
        raise SettingsError(f"options.store_options: store {store!r} takes its options (a folder, a server) from the "
                            f"command line only; here it runs with its defaults (options for: "
                            f"{', '.join(BUILT_IN)})", ["options.store_options"])


def web_retrievers() -> list[str]:
    """The retrievers an evaluation may name: those that need nothing outside ragretrieval."""
    return sorted(name for name in available_retrievers() if retriever_class(name).sweepable)


def default_retriever() -> str:
    return EvalConfig.model_fields["retriever"].default


def answer_settings(evaluation: EvaluationSettings, api_key_env: str) -> AnswerSettings:
    """`ragretrieval answer`'s settings for the evaluation: its generator, retriever, judges and options, and the
    API key's variable of the worker (never one the evaluation names). A bad value is a `SettingsError` whose fields
    are the request's (``options.chunk_size``, ``retriever``)."""
    values = {**evaluation.options, "generator": evaluation.generator, "base_url": evaluation.base_url,
              "api_key_env": api_key_env, "retriever": evaluation.retriever or RETRIEVER_BEFORE_0_3,
              "judges": evaluation.judge or [], "judge_model": evaluation.judge_model,
              "judge_base_url": evaluation.judge_base_url}
    try:
        return build_settings(AnswerSettings, values)
    except SettingsError as error:
        raise SettingsError(str(error), [request_field(f) for f in error.fields]) from None


BODY_FIELDS = {"generator": "generator", "base_url": "base_url", "retrieval.retriever": "retriever",
               "judges": "judge", "judge_model": "judge_model", "judge_base_url": "judge_base_url"}


def request_field(path: str) -> str:
    """Where a settings field sits in an evaluation request: a body field, or one of its ``options``."""
    if path in BODY_FIELDS:
        return BODY_FIELDS[path]
    return "options." + path.removeprefix("retrieval.")


def retrieval_config(retriever: str | None, options: dict) -> EvalConfig:
    """The evaluation's `EvalConfig`; a setting that cannot work is a `SettingsError` naming the request's field
    (``retriever``, ``options.ks``), and an option that is not a retrieval setting is refused by name."""
    other = sorted(set(options) - set(RETRIEVAL_OPTIONS))
    if other:
        raise SettingsError(f"{', '.join('options.' + name for name in other)}: a retrieval evaluation takes only "
                            f"the retrieval settings ({', '.join(RETRIEVAL_OPTIONS)})",
                            [f"options.{name}" for name in other])
    values = dict(options)
    if retriever:
        values["retriever"] = retriever
    try:
        return build_settings(EvalConfig, values)
    except SettingsError as error:
        raise SettingsError(str(error), [request_field(f) for f in error.fields]) from None


def check_retrieval(retriever: str | None, options: dict, allowed_models=()) -> None:
    """A new retrieval evaluation: a retriever the web may run, a model and store options the web may use (as for
    an answer evaluation), and `EvalConfig` settings that work."""
    if retriever and retriever not in web_retrievers():
        raise EngineError(f"unknown retriever {retriever!r}; known: {', '.join(web_retrievers())}")
    check_model(options.get("model"), allowed_models)
    check_store_options(options.get("store"), options.get("store_options"))
    retrieval_config(retriever or default_retriever(), options)


def check_evaluation(generator: str, retriever: str | None, judge: str | None, options: dict,
                     allowed_models=()) -> None:
    """Everything about a new evaluation that can be checked before a worker prepares it; `EngineError` names the
    body field, a `SettingsError` the settings' fields as the request names them. `allowed_models` are the models
    the operator offers besides the registry's (``serve --allow-model``)."""
    if generator.startswith("file:"):
        raise EngineError("generator file: reads answers from a file on the server; use `ragretrieval answer "
                          "--generator file:PATH` for answers already produced")
    try:
        generator_class(generator)
    except ValueError as error:
        raise EngineError(f"generator: {error}") from None
    if retriever and retriever not in web_retrievers():
        known = available_retrievers()
        if retriever in known:
            raise EngineError(f"retriever {retriever!r} is not offered here: it reads a file or needs settings that "
                              f"stay with the command line (answer --retriever {retriever}); offered: "
                              f"{', '.join(web_retrievers())}")
        raise EngineError(f"unknown retriever {retriever!r}; known: {', '.join(web_retrievers())}")
    check_judges(judge)
    check_model(options.get("model"), allowed_models)
    check_store_options(options.get("store"), options.get("store_options"))
    if options.get("generator_options") and not generator.startswith("http:"):
        raise SettingsError("options.generator_options: only an http: generator takes them",
                            ["options.generator_options"])
    if not judge and {"judge_samples", "judge_temperature"} & set(options):
        raise SettingsError("options.judge_samples, options.judge_temperature: they need a judge",
                            ["options.judge_samples", "options.judge_temperature"])
    answer_settings(EvaluationSettings(id="new", name="new", dataset="", dataset_path=None, question_set_id="",
                                       generator=generator, retriever=retriever or default_retriever(),
                                       judge=judge, options=options), "OPENAI_API_KEY")
