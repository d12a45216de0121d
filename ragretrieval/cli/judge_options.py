"""The judge options `answer` and `judge-answers` share (docs/answers.md, "Judges"): which judges, their endpoint
(declared once, by `llm_options` with the ``judge`` prefix), sampling and prompt files."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.judges import JudgeOptions, available_judges, judge_endpoint, judge_names
from ..answers.judges.base import DEFAULT_NUGGET_BATCH, MAX_NUGGET_BATCH
from ..llm.client import DEFAULT_KEY_ENV, DEFAULT_MODEL
from .llm_options import llm_options

JUDGE_LLM_OPTIONS = ("model", "base_url", "api_key_env", "language", "price_in", "price_out", "timeout",
                     "max_retries")


def judge_options(required: bool = False, fallbacks: str = "the generator's"):
    """Decorator adding --judge, --judge-samples, --judge-temperature, --judge-prompt, --judge-nuggets,
    --judge-nugget-batch and the judge's endpoint
    options (--judge-model, --judge-base-url, --judge-api-key-env, --judge-language, --judge-price-in,
    --judge-price-out, --judge-timeout, --judge-max-retries); `fallbacks` says where unset ones come from."""
    endpoint = llm_options("judge: ", "see docs/answers.md", names=JUDGE_LLM_OPTIONS, option_prefix="judge",
                           defaults={"model": f"[default: {fallbacks} model when it is openai:, else {DEFAULT_MODEL}]",
                                     "base_url": f"[default: {fallbacks} endpoint]",
                                     "api_key_env": f"[default: {fallbacks}, else {DEFAULT_KEY_ENV}]"})
    declared = [
        click.option("--judge", "judges", multiple=True, required=required, metavar="NAME[,NAME...]",
                     help="LLM judges: score5, correctness, groundedness, relevance_to_query, safety, "
                          "chunk_relevance, context_sufficiency, nuggets (`ragretrieval plugins` lists them)."),
        click.option("--judge-samples", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Ask each judge request N times and keep the majority (needs a temperature above 0)."),
        click.option("--judge-temperature", type=click.FloatRange(min=0), default=None,
                     help="Judge sampling temperature [default: 0, or 0.7 with --judge-samples above 1]."),
        click.option("--judge-prompt", "judge_prompts", multiple=True, metavar="[NAME=]FILE",
                     help="A prompt file replacing a judge's default; NAME= says which judge (needed with several)."),
        click.option("--judge-nuggets", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="The nuggets judge's nuggets.jsonl [default: nuggets.jsonl in the dataset's folder]."),
        click.option("--judge-nugget-batch", type=click.IntRange(1, MAX_NUGGET_BATCH), default=DEFAULT_NUGGET_BATCH,
                     show_default=True, help="Nuggets the nuggets judge asks about per request."),
    ]

    def apply(command):
        command = endpoint(command)
        for option in reversed(declared):
            command = option(command)
        return command

    return apply


def prompt_files(specs, names: list[str]) -> dict[str, Path]:
    """``--judge-prompt [NAME=]FILE`` values -> judge name -> file."""
    files: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if sep and name in available_judges() and name not in names:
            raise click.BadParameter(f"{spec!r}: judge {name!r} is not among --judge {','.join(names)}",
                                     param_hint="--judge-prompt")
        if not sep or name not in names:
            if len(names) != 1:
                raise click.BadParameter(f"{spec!r}: with several judges, say which one: NAME=FILE (judges: "
                                         f"{', '.join(names)})", param_hint="--judge-prompt")
            name, path = names[0], spec
        if name in files:
            raise click.BadParameter(f"two prompt files for judge {name!r}", param_hint="--judge-prompt")
        files[name] = Path(path)
    return files


def nuggets_file(names: list[str], given: Path | None, dataset_dir) -> Path | None:
    """The nuggets judge's file: `given`, else ``nuggets.jsonl`` in `dataset_dir`; None when no nuggets judge."""
    from ..data.nuggets import nuggets_path

    if "nuggets" not in names:
        if given is not None:
            raise click.BadParameter("it is the nuggets judge's file: add --judge nuggets",
                                     param_hint="--judge-nuggets")
        return None
    path = given or (nuggets_path(dataset_dir) if dataset_dir else None)
    if path is None or not path.is_file():
        where = f"{path} does not exist" if path else "the dataset's folder is unknown"
        raise click.UsageError(f"the nuggets judge needs nuggets: {where}; write them with `ragretrieval questions "
                               "nuggets DATASET` (or by hand), or give --judge-nuggets FILE")
    return path


def judge_settings(judges, judge_samples, judge_temperature, judge_prompts, judge_nuggets, judge_nugget_batch,
                   judge_model, judge_base_url, judge_api_key_env, judge_language, judge_price_in, judge_price_out,
                   judge_timeout, judge_max_retries, *, generator: str, base_url: str | None,
                   api_key_env: str | None, data_language: str, dataset_dir=None,
                   stop=None) -> tuple[list[str], JudgeOptions]:
    """The judges named and their options; unset endpoint options fall back to the `generator`'s model,
    `base_url` and `api_key_env` (the generator's, or the judged run's; `judge_endpoint`), `--judge-language auto`
    to the data's language (zh, else en), `--judge-nuggets` to the nuggets of `dataset_dir`."""
    names = judge_names(judges)
    if not names:
        if judge_nuggets is not None:
            nuggets_file(names, judge_nuggets, dataset_dir)  # refused: no nuggets judge
        return [], JudgeOptions()
    language = judge_language if judge_language != "auto" else ("zh" if data_language == "zh" else "en")
    return names, JudgeOptions(
        **judge_endpoint(generator, judge_model, judge_base_url, judge_api_key_env, base_url=base_url,
                         api_key_env=api_key_env), temperature=judge_temperature,
        samples=judge_samples, language=language, prompts=prompt_files(judge_prompts, names), timeout=judge_timeout,
        max_retries=judge_max_retries, price_in=judge_price_in, price_out=judge_price_out,
        nuggets=nuggets_file(names, judge_nuggets, dataset_dir), nugget_batch=judge_nugget_batch, stop=stop)
