"""The options every command that talks to an LLM shares (`build-dataset --generator llm`, `judge`), declared once."""

from __future__ import annotations

from pathlib import Path

import click

from ..llm.client import DEFAULT_MODEL, LLMSettings

_HELP = {
    "model": f"model name [default: {DEFAULT_MODEL}].",
    "base_url": "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.",
    "api_key_env": "environment variable that holds the API key (the key itself is never written anywhere).",
    "concurrency": "requests in flight.",
    "prompt": "prompt file replacing the default ({placeholders}).",
    "language": "language of the default prompt; auto looks at the corpus.",
    "price_in": "price per million input tokens, for the cost shown.",
    "price_out": "price per million output tokens.",
    "timeout": "seconds per request.",
    "max_retries": "retries on 429, 5xx, timeouts.",
}


def llm_options(prefix: str, prompt_placeholders: str, names: tuple[str, ...] | None = None,
                languages: tuple[str, ...] = ("zh", "en"), max_retries: int = 4):
    """Decorator adding --model, --base-url, --api-key-env, --concurrency, --prompt, --language, --price-in,
    --price-out, --timeout and --max-retries (or only the options in `names`, by parameter name); `prefix` (e.g.
    ``"llm: "``) marks them where the LLM is not the command's main job."""

    def say(name: str) -> str:
        text = _HELP[name].format(placeholders=prompt_placeholders)
        return prefix + text if prefix else text[0].upper() + text[1:]

    options = {
        "model": click.option("--model", default=None, help=say("model")),
        "base_url": click.option("--base-url", default=None, help=say("base_url")),
        "api_key_env": click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
                                    help=say("api_key_env")),
        "concurrency": click.option("--concurrency", type=int, default=4, show_default=True,
                                    help=say("concurrency")),
        "prompt_file": click.option("--prompt", "prompt_file", type=click.Path(dir_okay=False, path_type=Path),
                                    default=None, help=say("prompt")),
        "language": click.option("--language", type=click.Choice(["auto", *languages]), default="auto",
                                 show_default=True, help=say("language")),
        "price_in": click.option("--price-in", type=float, default=0.0, help=say("price_in")),
        "price_out": click.option("--price-out", type=float, default=0.0, help=say("price_out")),
        "timeout": click.option("--timeout", type=float, default=120.0, show_default=True, help=say("timeout")),
        "max_retries": click.option("--max-retries", type=int, default=max_retries, show_default=True,
                                    help=say("max_retries")),
    }
    chosen = [options[name] for name in (names or options)]

    def apply(command):
        for option in reversed(chosen):
            command = option(command)
        return command

    return apply


def llm_settings(model, base_url, api_key_env, timeout, max_retries, price_in, price_out) -> LLMSettings:
    return LLMSettings(model=model or DEFAULT_MODEL, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                       max_retries=max_retries, price_in=price_in, price_out=price_out)
