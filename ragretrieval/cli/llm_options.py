"""The options every command that talks to an LLM shares (`dataset build --generator llm`, `questions generate`,
`judge chunks`), declared once: the ``--llm-*`` endpoint family (docs/cli.md, "One vocabulary")."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..llm.client import DEFAULT_MODEL, LLM_CALLS, LLMSettings
from ..work.limits import MAX_CONCURRENCY
from .aliases import renamed_option
from .bounds import PRICE, RETRIES, SECONDS

_HELP = {
    "model": f"model name [default: {DEFAULT_MODEL}].",
    "base_url": "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.",
    "api_key_env": "environment variable that holds the API key (the key itself is never written anywhere).",
    "concurrency": "requests in flight.",
    "prompt_file": "prompt file replacing the default ({placeholders}).",
    "language": "language of the default prompt; auto looks at the corpus.",
    "price_in": "price per million input tokens, for the cost shown.",
    "price_out": "price per million output tokens.",
    "timeout": "seconds per request.",
    "max_retries": "retries on 429, 5xx, timeouts.",
}


def llm_options(prefix: str, prompt_placeholders: str, names: tuple[str, ...] | None = None,
                languages: tuple[str, ...] = ("zh", "en"), max_retries: int = LLM_CALLS.retries,
                option_prefix: str = "", defaults: dict | None = None, old_prefix: str = ""):
    """Decorator adding --llm-model, --llm-base-url, --llm-api-key-env, --concurrency, --llm-prompt, --llm-language,
    --llm-price-in, --llm-price-out, --llm-timeout and --llm-max-retries (0.2's --model, --base-url ... still read),
    or only the options in `names`, by parameter name; `prefix` (e.g.
    ``"llm: "``) marks them where the LLM is not the command's main job. With `option_prefix` (``"judge"``) the same
    options are declared for a second endpoint: ``--judge-model`` ... with parameters ``judge_model`` ...;
    `defaults` replaces defaults by parameter name (None: fall back to the command's own, as its help says).
    `old_prefix` (``"nuggets"``): the flags are the ``--llm-*`` family, and 0.2's ``--nuggets-*`` are still read;
    the parameters keep the old prefix."""
    defaults = defaults or {}

    def say(name: str) -> str:
        text = _HELP[name].format(placeholders=prompt_placeholders)
        if name in defaults and isinstance(defaults[name], str) and defaults[name].startswith("["):
            text = re.sub(r"\s*\[default: [^\]]*\]", "", text).rstrip(".") + f" {defaults[name]}."
        return prefix + text if prefix else text[0].upper() + text[1:]

    def option(name: str, flag: str, **settings):
        param = f"{option_prefix}_{name}" if option_prefix else name
        if name in defaults:
            shown = defaults[name]
            settings.update(default=None if isinstance(shown, str) and shown.startswith("[") else shown,
                            show_default=False)
        if old_prefix:
            param = f"{old_prefix}_{name}"
        elif option_prefix:
            return click.option(f"--{option_prefix}-{flag}", param, help=say(name), **settings)
        old = f"--{old_prefix}-{flag}" if old_prefix else f"--{flag}"
        if name == "concurrency":  # one word for requests at once, on every command
            return renamed_option("--concurrency", *([old] if old_prefix else []), param, help=say(name), **settings)
        # the model's endpoint family is --llm-*; 0.2's spellings (--model, --nuggets-model ...) still read (hidden)
        return renamed_option(f"--llm-{flag}", old, param, help=say(name), **settings)

    options = {
        "model": option("model", "model", default=None),
        "base_url": option("base_url", "base-url", default=None),
        "api_key_env": option("api_key_env", "api-key-env", default="OPENAI_API_KEY", show_default=True),
        "concurrency": option("concurrency", "concurrency", type=click.IntRange(1, MAX_CONCURRENCY),
                              default=LLM_CALLS.concurrency, show_default=True),
        "prompt_file": option("prompt_file", "prompt", type=click.Path(dir_okay=False, path_type=Path),
                              default=None),
        "language": option("language", "language", type=click.Choice(["auto", *languages]), default="auto",
                           show_default=True),
        "price_in": option("price_in", "price-in", type=PRICE, default=0.0),
        "price_out": option("price_out", "price-out", type=PRICE, default=0.0),
        "timeout": option("timeout", "timeout", type=SECONDS, default=LLM_CALLS.timeout, show_default=True),
        "max_retries": option("max_retries", "max-retries", type=RETRIES, default=max_retries, show_default=True),
    }
    chosen = [options[name] for name in (names or options)]

    def apply(command):
        for declared in reversed(chosen):
            command = declared(command)
        return command

    return apply


def llm_settings(model, base_url, api_key_env, timeout, max_retries, price_in, price_out) -> LLMSettings:
    return LLMSettings(model=model or DEFAULT_MODEL, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                       max_retries=max_retries, price_in=price_in, price_out=price_out)
