"""The judge options `answer` and `judge-answers` share (docs/answers/judge.md, "Judges"): which judges, their endpoint,
sampling and prompt files, each an `AnswerSettings` field (its default and help come from there)."""

from __future__ import annotations

from pathlib import Path

import click

from ..answers.judges import available_judges
from ..answers.settings import AnswerSettings
from ..work.plugins import JUDGES
from .fields import Setting

ENDPOINT = ("judge_model", "judge_base_url", "judge_api_key_env")  # unset: the generator's (or the judged run's)


def judge_settings(fallbacks: str = "the generator's") -> list[Setting]:
    """--judge, --judge-samples, --judge-temperature, --judge-prompt, --judge-nuggets, --judge-nugget-batch and the
    judges' endpoint (--judge-model,
    --judge-base-url, --judge-api-key-env, --judge-language, --judge-price-in, --judge-price-out, --judge-timeout,
    --judge-max-retries); `fallbacks` says whose endpoint an unset one is."""
    described = {
        "judges": ("LLM judges (repeatable, or NAME,NAME): " + ", ".join(entry.name for entry in JUDGES.built_in)
                   + " (`ragretrieval plugins` lists them).",
                   {"multiple": True, "metavar": "NAME[,NAME...]"}),
        "judge_prompts": ("A prompt file replacing a judge's default; NAME= says which judge (needed with several).",
                          {"multiple": True, "metavar": "[NAME=]FILE"}),
        "judge_model": (f"Judges' model [default: {fallbacks} model when it is openai:, else gpt-4o-mini].", {}),
        "judge_base_url": (f"Judges' endpoint [default: {fallbacks} endpoint].", {}),
        "judge_api_key_env": (f"Judges' API key variable [default: {fallbacks}, else OPENAI_API_KEY].", {}),
    }
    names = ("judges", "judge_samples", "judge_temperature", "judge_prompts", "judge_nuggets", "judge_nugget_batch",
             "judge_model", "judge_base_url",
             "judge_api_key_env", "judge_language", "judge_price_in", "judge_price_out", "judge_timeout",
             "judge_max_retries")
    return [Setting(name, AnswerSettings, *described.get(name, (None, {}))) for name in names]


def prompt_files(specs, names: list[str]) -> dict[str, str]:
    """``--judge-prompt [NAME=]FILE`` values -> judge name -> file."""
    files: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if sep and name in available_judges() and name not in names:
            raise click.BadParameter(f"{spec!r}: judge {name!r} is not among --judge {','.join(names)}",
                                     param_hint="--judge-prompt")
        if not sep or name not in names:
            if len(names) != 1:
                raise click.BadParameter(f"{spec!r}: with several judges, say which one: NAME=FILE (judges: "
                                         f"{', '.join(names) or 'none'})", param_hint="--judge-prompt")
            name, path = names[0], spec
        if name in files:
            raise click.BadParameter(f"two prompt files for judge {name!r}", param_hint="--judge-prompt")
        files[name] = str(Path(path))
    return files


def with_prompt_files(values: dict) -> dict:
    """The settings' values with ``--judge-prompt`` texts (``[NAME=]FILE``, a list) as judge name -> file."""
    if not isinstance(values.get("judge_prompts"), list):
        return values
    from ..answers.judges import judge_names

    names = judge_names(values.get("judges") or [])
    return {**values, "judge_prompts": prompt_files(values["judge_prompts"], names)}
