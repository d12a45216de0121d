"""`AnswerSettings`: everything an answer run takes besides its dataset, and the one place where the answer
workflow's defaults and rules live. ``ragretrieval answer``'s options, ``--config`` files, the web API's evaluation
``options`` and `ragretrieval.answer`'s keyword arguments all build one; docs/answers.md lists each field.

The fields are flat, named as the command line and the web API name them (``context_k``, ``temperature``,
``judge_samples``), with the retrieval settings nested as an `EvalConfig` in ``retrieval``; a retrieval setting
given at the top level (``chunk_size``, ``retriever``, ``ks``) is taken as ``retrieval``'s, so the web API's flat
``options`` and Python's keyword arguments read the same. Contexts are retrieved ``context_k`` deep, and the
retrieval metrics are scored at ``retrieval.ks`` and at ``context_k``.

`generator_options` are validated through the generator's options model, `judges` against the judge registry;
bad values are a `SettingsError` naming the field.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..evaluation.report import EvalConfig
from ..llm.client import DEFAULT_KEY_ENV, LLM_CALLS
from ..work.limits import Concurrency, Integer, Price, Retries, Timeout, Wait
from ..work.options import SettingsError, SettingsModel, plugin_options
from ..work.plugins import GENERATORS, JUDGES

RETRIEVAL = "retrieval"
MAX_NUGGETS_PER_REQUEST = 100
SPEED_ONLY = ("threads",)  # change how fast a run goes, never a number
# a generator retries once more than the judges: a question without an answer costs its judges' verdicts too
GENERATOR_CALLS = LLM_CALLS.but(retries=5)
JUDGE_CALLS = LLM_CALLS


class AnswerSettings(SettingsModel):
    """An answer run's settings (docs/answers.md lists each one with its ``ragretrieval answer`` option)."""

    model_config = ConfigDict(extra="forbid")
    generator: str = Field("extractive", min_length=1,
                           description="Where answers come from: extractive | openai:MODEL | http:URL | file:PATH "
                                       "(`ragretrieval plugins` lists them)")
    generator_options: dict = Field({},
                                    description="The generator's options, e.g. sentences=3 (extractive), "
                                                "request=messages (http:)")
    contexts: Literal["retrieved", "given"] = Field(
        "retrieved", description="The retriever's top chunks, or the documents each question lists in 'context'")
    context_k: Integer = Field(5, ge=1, le=1000, description="Retrieved chunks shown to the generator")
    shuffle_context: bool = Field(False, description="Shuffle given contexts per question (seeded)")
    seed: Integer = Field(0, description="Seed of shuffle_context")
    retrieval: EvalConfig = Field(default_factory=EvalConfig, description="How contexts are retrieved: eval's "
                                                                          "settings")
    language: Literal["auto", "zh", "en", "pl"] = Field("auto", description="Language of the default prompt, "
                                                                            "messages and lemmas; auto: the data's")
    lemmatizer: str = Field("none", min_length=1, max_length=500,
                            description="none | simplemma[:LANG] | fst:PREFIX (PREFIX.fst and PREFIX_lemmas.bin)")
    match: Literal["substring", "words"] = Field("substring", description="include/exclude: substrings (the "
                                                                          "benchmark's rule) or whole words")
    refusal_message: str | None = Field(None, max_length=1000,
                                        description="The phrase that counts as a refusal (and that the prompt asks "
                                                    "for) [default: the language's; Polish: RAG-IFEval's]")
    unsafe_words: Path | None = Field(None, description="One unsafe word per line, for the safe check")
    citation_pattern: str | None = Field(None, max_length=500,
                                         description="Regular expression whose first group holds a citation "
                                                     "[default: [0], [0, 2], [doc id]]")
    cite_relevant: bool = Field(True, description="Expect questions without expect.cite to cite their relevant "
                                                  "documents")
    # the generator's endpoint (openai:) and sampling
    base_url: str | None = Field(None, max_length=2000,
                                 description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 "
                                             "[default: OpenAI's]")
    api_key_env: str = Field(DEFAULT_KEY_ENV, min_length=1, description="Environment variable that holds the API "
                                                                        "key (the key itself is never written)")
    prompt_file: Path | None = Field(None, description="Prompt file replacing the default (question, docs, "
                                                       "documents, refusal_message)")
    system_message: str | None = Field(None, max_length=20_000,
                                       description="System message [default: the language's; \"\" sends none]")
    temperature: float = Field(0.0, ge=0, le=2, allow_inf_nan=False,
                               description="Sampling temperature of the generator")
    max_tokens: Integer | None = Field(None, ge=1, description="Most tokens per answer")
    max_retries: Retries = GENERATOR_CALLS.field("retries", "Retries on 429, 5xx, timeouts")
    sleep_time: Wait = GENERATOR_CALLS.field("backoff", "Seconds before the first retry (doubling, with jitter)")
    timeout: Timeout = GENERATOR_CALLS.field("timeout", "Seconds per request")
    text_completion: bool = Field(False, description="Use /completions instead of /chat/completions")
    price_in: Price = Field(0.0, description="Price per million input tokens, for the cost shown")
    price_out: Price = Field(0.0, description="Price per million output tokens")
    # LLM judges (answers/judges): which, their endpoint (unset: the generator's), sampling and prompts
    judges: list[str] = Field([], description="LLM judges: " + ", ".join(entry.name for entry in JUDGES.built_in)
                              + ", or an installed plug-in's")
    judge_samples: Integer = Field(1, ge=1, le=9, description="Ask each judge request N times and keep the majority "
                                                          "(needs a temperature above 0)")
    judge_temperature: float | None = Field(None, ge=0, le=2, allow_inf_nan=False,
                                            description="Judge sampling temperature [default: 0, or 0.7 with "
                                                        "judge_samples above 1]")
    judge_prompts: dict[str, Path] = Field({}, description="Judge name -> a prompt file "
                                                                             "replacing its default")
    judge_model: str | None = Field(None, max_length=200,
                                    description="Judges' model [default: the generator's model when it is "
                                                "openai:, else gpt-4o-mini]")
    judge_base_url: str | None = Field(None, max_length=2000, description="Judges' endpoint [default: the "
                                                                          "generator's endpoint]")
    judge_api_key_env: str | None = Field(None, description="Judges' API key variable [default: the generator's, "
                                                            "else OPENAI_API_KEY]")
    judge_language: Literal["auto", "zh", "en"] = Field("auto", description="Language of the judges' prompts; "
                                                                            "auto: zh for Chinese data, else en")
    judge_nuggets: Path | None = Field(None, description="The nuggets judge's nuggets.jsonl [default: nuggets.jsonl "
                                                         "in the dataset's folder]")
    # as the TREC 2024 RAG track's AutoNuggetizer: ten nuggets per request
    judge_nugget_batch: Integer = Field(10, ge=1, le=MAX_NUGGETS_PER_REQUEST,
                                    description="Nuggets the nuggets judge asks about per request")
    judge_price_in: Price = Field(0.0, description="Judges' price per million input tokens")
    judge_price_out: Price = Field(0.0, description="Judges' price per million output tokens")
    judge_timeout: Timeout = JUDGE_CALLS.field("timeout", "Judges' seconds per request")
    judge_max_retries: Retries = JUDGE_CALLS.field("retries", "Judges' retries on 429, 5xx, timeouts")
    threads: Concurrency = GENERATOR_CALLS.field("concurrency", "Questions answered at once (speed only)")
    max_cost: float | None = Field(None, ge=0, allow_inf_nan=False,
                                   description="Stop before the spend at the given prices (generator and judges) "
                                               "would pass this many dollars; 0: only answers already in the cache")

    @model_validator(mode="before")
    @classmethod
    def _retrieval_settings_at_the_top(cls, values):
        """``chunk_size=200`` beside the answer settings is ``retrieval.chunk_size`` (web options, Python
        keyword arguments); a `GeneratorOptions` given as ``generator_options`` (0.2) is spread into the fields."""
        if not isinstance(values, dict):
            return values
        values = dict(values)
        found = {name: values.pop(name) for name in list(values)
                 if name in EvalConfig.model_fields and name not in cls.model_fields}
        if found:
            retrieval = values.get(RETRIEVAL, {})
            if isinstance(retrieval, EvalConfig):
                retrieval = retrieval.model_dump(exclude_unset=True)
            clash = sorted(set(found) & set(retrieval))
            if clash:
                raise SettingsError(f"{clash[0]} is given twice: at the top and in retrieval", [clash[0]])
            values[RETRIEVAL] = {**retrieval, **found}
        legacy = values.get("generator_options")
        if legacy is not None and not isinstance(legacy, dict):
            warnings.warn("AnswerSettings(generator_options=GeneratorOptions(...)) is the 0.2 form; give the "
                          "settings as fields (base_url=..., generator_options={...})", DeprecationWarning,
                          stacklevel=4)
            spread = {name: getattr(legacy, name) for name in GENERATION_FIELDS if hasattr(legacy, name)}
            values = {**spread, **values, "generator_options": dict(legacy.options)}
        return values

    @field_validator("judges", mode="before")
    @classmethod
    def _judge_names(cls, value):
        """``"score5,correctness"`` or a list of such texts; each name once, in order, each one known."""
        try:
            return JUDGES.names(value)
        except ValueError as error:
            raise SettingsError(f"judges: {error}", ["judges"]) from None

    @field_validator("citation_pattern")
    @classmethod
    def _citation_pattern(cls, pattern):
        if pattern is not None:
            try:
                groups = re.compile(pattern).groups
            except re.error as error:
                raise SettingsError(f"citation_pattern is not a regular expression: {error}",
                                    ["citation_pattern"]) from None
            if groups < 1:
                raise SettingsError(r"citation_pattern needs a group holding the citation, e.g. '\(source (\d+)\)'",
                                    ["citation_pattern"])
        return pattern

    @field_validator("unsafe_words", "prompt_file")
    @classmethod
    def _a_file(cls, path, info):
        if path is not None and not Path(path).is_file():
            raise SettingsError(f"{info.field_name}: {path} is not a file", [info.field_name])
        return path

    @model_validator(mode="after")
    def _consistent(self):
        try:
            plugin = GENERATORS.load(self.generator)  # by name: the generators' module imports this one
        except ValueError as error:
            raise SettingsError(f"generator: {error}", ["generator"]) from None
        self.generator_options = plugin_options(getattr(plugin, "Options", None), self.generator_options,
                                                f"generator {self.generator}", "generator_options")
        if self.judge_samples > 1 and self.judge_temperature is not None and self.judge_temperature <= 0:
            raise SettingsError("judge_samples above 1 needs judge_temperature above 0 (identical requests at "
                                "temperature 0 give identical verdicts); leave judge_temperature out or raise it",
                                ["judge_samples", "judge_temperature"])
        if self.judge_nuggets is not None and "nuggets" not in self.judges:
            raise SettingsError("judge_nuggets is the nuggets judge's file: add judges nuggets",
                                ["judge_nuggets", "judges"])
        stray = sorted(set(self.judge_prompts) - set(self.judges))
        if stray:
            raise SettingsError(f"judge_prompts names judge {stray[0]!r}, which is not among judges "
                                f"{','.join(self.judges) or '(none)'}", ["judge_prompts", "judges"])
        if self.max_cost is not None and not any((self.price_in, self.price_out, self.judge_price_in,
                                                   self.judge_price_out)):
            raise SettingsError("max_cost needs the prices of the models asked (price_in, price_out, judge_price_in, "
                                "judge_price_out): without them every request costs $0",
                                ["max_cost", "price_in", "price_out", "judge_price_in", "judge_price_out"])
        if self.retrieval.top_k != self.context_k:  # the retrieval metrics of the ranking the contexts came from
            self.retrieval = EvalConfig.model_validate({**self.retrieval.model_dump(), "top_k": self.context_k})
        return self

    def nuggets_file(self, dataset_dir) -> Path | None:
        """The nuggets judge's file: judge_nuggets, else nuggets.jsonl in the dataset's folder; None without the
        nuggets judge. A file that is not there is a `SettingsError` saying how to write one."""
        if "nuggets" not in self.judges:
            return None
        from ..data.nuggets import NUGGETS_FILE  # where a dataset keeps its nuggets

        path = self.judge_nuggets or (Path(dataset_dir) / NUGGETS_FILE if dataset_dir else None)
        if path is None or not Path(path).is_file():
            where = f"{path} does not exist" if path else "the dataset's folder is unknown"
            raise SettingsError(f"the nuggets judge needs nuggets: {where}; write them with `ragretrieval questions "
                                "nuggets DATASET` (or by hand), or give judge_nuggets FILE", ["judge_nuggets"])
        return Path(path)

    def judge_language_for(self, data_language: str) -> str:
        """The judges' prompt language: judge_language, or for auto zh for Chinese data and en otherwise."""
        if self.judge_language != "auto":
            return self.judge_language
        return "zh" if data_language == "zh" else "en"

    def recorded(self) -> dict:
        """What a run keeps of its settings (``runs show --config``): every field but those that change only
        speed; never a secret (keys stay in environment variables, which only the variables' names point to)."""
        return self.model_dump(mode="json", exclude=set(SPEED_ONLY))


GENERATION_FIELDS = ("base_url", "api_key_env", "prompt_file", "system_message", "temperature", "max_tokens",
                     "max_retries", "sleep_time", "timeout", "text_completion", "price_in", "price_out")


def default(name: str):
    """An `AnswerSettings` field's default, for code that takes the same setting (`GeneratorOptions`)."""
    return AnswerSettings.model_fields[name].get_default(call_default_factory=True)
