"""What every judge is to the rest of ragretrieval: it reads one answered question (question, reference answer,
answer, contexts) and gives a verdict (`JudgeResult`), and as a session scorer (answers/scorers.py) it records that
verdict on the question.

A judge has a `name` (``score5``, ``correctness``, ...), the per-question `metric` its value is stored under in
``metrics["answer"]`` (``llm_judge_score``, ``response/llm_judged/correctness/rating``, ...), `settings()` (recorded in
the run's configuration, so in its identity; never a secret) and `judge(answered)`. `judge` is called from several
threads at once and must be safe to call so.

A verdict that could not be had is a failure (`JudgeResult.failure`: malformed JSON after one repair request, a
score outside the scale, a request the endpoint refused) and has no value: it is left out of the means and counted,
never turned into 0 or 1. A judge that does not apply (no reference answer, no contexts) says why in `skipped`.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ...errors import RagretrievalError
from ...llm.client import DEFAULT_KEY_ENV, DEFAULT_MODEL, ChatClient, LLMSettings
from ...llm.prompts import Prompt, PromptSpec, load_template
from ...work.limits import check_bounds
from ...work.options import SettingsError
from ..report import ANSWER_LEVEL, AnsweredQuestion
from ..settings import JUDGE_CALLS, MAX_NUGGETS_PER_REQUEST, default

SAMPLING_TEMPERATURE = 0.7  # --judge-samples N > 1 without --judge-temperature
LANGUAGES = ("zh", "en")  # of the shipped prompts; other languages are judged with the English ones
DEFAULT_NUGGET_BATCH = default("judge_nugget_batch")  # nuggets per request (AnswerSettings declares it)
MAX_NUGGET_BATCH = MAX_NUGGETS_PER_REQUEST
REPLY_TOKENS = 80  # a verdict with a sentence or two of reasons: the reply expected before any has come


class JudgeError(RagretrievalError, ValueError):
    """A judge that cannot be built: an unknown name, a bad option, a prompt file that does not fit."""


@dataclass
class JudgeOptions:
    """Everything judges take: the endpoint (separate from the generator's), sampling, language and prompt files.
    The API key stays in the environment variable `api_key_env`. Defaults are `AnswerSettings`' ``judge_*``
    fields' (`from_settings` makes one from them, with the endpoint fallback of `judge_endpoint`)."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    temperature: float | None = default("judge_temperature")  # None: 0 for one sample, 0.7 for several
    samples: int = default("judge_samples")  # ask N times, keep the majority
    language: str = "en"  # of the default prompts: zh or en
    prompts: dict[str, Path] = field(default_factory=dict)  # judge name -> prompt file replacing the default
    timeout: float = default("judge_timeout")
    max_retries: int = default("judge_max_retries")
    backoff: float = JUDGE_CALLS.backoff
    price_in: float = default("judge_price_in")
    price_out: float = default("judge_price_out")
    nuggets: Path | None = None  # the nuggets judge's nuggets.jsonl (data/nuggets.py)
    nugget_batch: int = DEFAULT_NUGGET_BATCH  # nuggets judged per request by the nuggets judge
    stop: Any = None  # StopToken
    budget: Any = None  # llm.budget.Budget: --max-cost, shared with the generator

    def __post_init__(self) -> None:
        check_bounds(self)  # timeout, max_retries, backoff, prices (work/limits.py)

    @classmethod
    def from_settings(cls, settings, data_language: str, stop=None, nuggets: Path | None = None, budget=None,
                      **generator) -> "JudgeOptions":
        """The judges' options of an `AnswerSettings`: its ``judge_*`` fields, the endpoint falling back to the
        generator's (`generator` replaces the settings' ``generator``, ``base_url``, ``api_key_env``: a stored run's
        when its answers are judged again), the prompt language to the data's (`data_language`), and the nuggets
        judge's file (`nuggets`: `AnswerSettings.nuggets_file`)."""
        endpoint = {"generator": settings.generator, "base_url": settings.base_url,
                    "api_key_env": settings.api_key_env, **generator}
        return cls(**judge_endpoint(endpoint.pop("generator"), settings.judge_model, settings.judge_base_url,
                                    settings.judge_api_key_env, **endpoint),
                   temperature=settings.judge_temperature, samples=settings.judge_samples,
                   language=settings.judge_language_for(data_language), prompts=dict(settings.judge_prompts),
                   timeout=settings.judge_timeout, max_retries=settings.judge_max_retries,
                   price_in=settings.judge_price_in, price_out=settings.judge_price_out, nuggets=nuggets,
                   nugget_batch=settings.judge_nugget_batch, stop=stop, budget=budget)

    @property
    def sampling_temperature(self) -> float:
        if self.temperature is not None:
            return self.temperature
        return 0.0 if self.samples == 1 else SAMPLING_TEMPERATURE

    def check(self) -> None:
        if self.samples < 1:
            raise SettingsError(f"judge_samples must be at least 1; got {self.samples}", ["judge_samples"])
        if self.samples > 1 and self.sampling_temperature <= 0:
            raise SettingsError("judge_samples above 1 needs judge_temperature above 0 (identical requests at "
                                "temperature 0 give identical verdicts); leave judge_temperature out or raise it",
                                ["judge_samples", "judge_temperature"])
        if self.language not in LANGUAGES:
            raise SettingsError(f"judge prompts come in {', '.join(LANGUAGES)}; got judge_language "
                                f"{self.language!r}", ["judge_language"])
        batch = self.nugget_batch
        if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_NUGGET_BATCH:
            raise JudgeError(f"nugget_batch must be a whole number from 1 to {MAX_NUGGET_BATCH}; got {batch!r}")

    def llm_settings(self) -> LLMSettings:
        return LLMSettings(model=self.model, base_url=self.base_url, api_key_env=self.api_key_env,
                           timeout=self.timeout, max_retries=self.max_retries, backoff=self.backoff,
                           temperature=self.sampling_temperature, price_in=self.price_in, price_out=self.price_out)


def judge_endpoint(generator: str, judge_model: str | None = None, judge_base_url: str | None = None,
                   judge_api_key_env: str | None = None, *, base_url: str | None = None,
                   api_key_env: str | None = None) -> dict:
    """Where judges ask (`JudgeOptions` fields model, base_url, api_key_env): each setting given for the judge, else
    the generator's (its model only when it is ``openai:<model>``), else the default model and key variable. The
    one rule behind ``answer --judge``, ``judge-answers`` and the web app's judged evaluations."""
    generator_model = generator.removeprefix("openai:") if generator.startswith("openai:") else None
    return dict(model=judge_model or generator_model or DEFAULT_MODEL, base_url=judge_base_url or base_url,
                api_key_env=judge_api_key_env or api_key_env or DEFAULT_KEY_ENV)


class JudgeContext:
    """What the judges of one run share: their options and one LLM client (one answer cache, one bill), made when
    the first judge that asks a model is built."""

    def __init__(self, options: JudgeOptions):
        options.check()
        self.options = options
        self._client: ChatClient | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> ChatClient:
        with self._lock:
            if self._client is None:
                self._client = ChatClient(self.options.llm_settings(), stop=self.options.stop,
                                          budget=self.options.budget, output_tokens=REPLY_TOKENS)
            return self._client

    @property
    def usage(self):
        """The judges' bill so far (None when no judge asked a model)."""
        return self._client.usage if self._client is not None else None

    def prompt(self, spec: PromptSpec) -> Prompt:
        return load_template(spec, self.options.language, self.options.prompts.get(spec.kind))


class JudgeResult(BaseModel):
    """One judge's verdict on one answered question, as stored in ``AnsweredQuestion.judges[name]``."""

    model_config = ConfigDict(extra="ignore")
    value: float | None = None  # yes/no as 1/0, a 1-5 score, a precision; None: failed or skipped
    rating: str | int | None = None  # what the judge said: "yes", "no", 4
    reasoning: str = ""
    failure: str | None = None  # why there is no verdict
    skipped: str | None = None  # why the judge does not apply to this question
    samples: list[float] = Field(default_factory=list)  # each sample's value, with --judge-samples N > 1
    disagreement: bool | None = None  # the samples did not all agree
    details: list[dict] = Field(default_factory=list)  # per-chunk (chunk_relevance) or per-nugget verdicts
    metrics: dict[str, float] = Field(default_factory=dict)  # further per-question metrics besides `value`'s
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency: float = 0.0  # seconds the requests took (for cached answers: when they were asked)
    requests: int = 0  # answers taken, repair requests and samples included
    cached: bool = False  # every answer came from the answer cache

    def stored(self) -> dict:
        """The dict kept on the question: everything that is set, and always `value`."""
        return {"value": self.value, **self.model_dump(exclude_defaults=True)}


def record(name: str, metric: str, answered: AnsweredQuestion, result: JudgeResult) -> None:
    """Put a verdict on the question: the dict in ``judges[name]`` and, when there is a value, ``metric`` (and the
    judge's further metrics, the nuggets judge's four scores). A verdict given before by the same judge goes,
    metrics and all: a failed verdict leaves no value behind."""
    before = {metric, *answered.judges.get(name, {}).get("metrics", {})}
    values = {k: v for k, v in answered.metrics.get(ANSWER_LEVEL, {}).items() if k not in before}
    answered.judges[name] = result.stored()
    if result.value is not None:
        values.update({**result.metrics, metric: result.value})
    if values or ANSWER_LEVEL in answered.metrics:
        answered.metrics[ANSWER_LEVEL] = values


@runtime_checkable
class Judge(Protocol):
    name: str
    metric: str

    def settings(self) -> dict: ...

    def judge(self, answered: AnsweredQuestion) -> JudgeResult: ...

    def score(self, question, answered: AnsweredQuestion) -> None: ...


class JudgePlugin(Protocol):
    """The class registered under a judge's name (registry.py)."""

    @classmethod
    def build(cls, context: JudgeContext) -> Judge: ...


class BaseJudge:
    """A judge as a session scorer: `score` records `judge`'s verdict; questions without an answer are not judged.
    Subclasses give `name`, `metric`, `settings` and `judge` (llm_judge.py for judges that ask a model)."""

    name: ClassVar[str]
    metric: ClassVar[str]

    def judge(self, answered: AnsweredQuestion) -> JudgeResult:
        raise NotImplementedError

    def settings(self) -> dict:
        return {}

    def score(self, question, answered: AnsweredQuestion) -> None:
        if answered.error is None:
            record(self.name, self.metric, answered, self.judge(answered))


def package_of(cls) -> str:
    """The package a judge class lives in (its templates sit there)."""
    module = importlib.import_module(cls.__module__)
    return module.__package__ or cls.__module__
