"""`EnvironmentSettings`: every setting ragretrieval reads from the environment, in one class (docs/cli.md,
"Environment variables"). Library code asks `environment()` and never reads ``os.environ`` for a setting itself;
API keys are not settings: they stay in the variable a ``*_api_key_env`` setting names, read where they are sent.

An empty variable counts as unset. A bad value is a `SettingsError` naming the variable, raised by whatever reads the
environment next (the command exits 2), rather than a failure deep inside the work (torch refusing a device name, an
engine that cannot be split into module and function).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .options import SettingsError

# torch's device names: a type and an optional index (cpu, cuda, cuda:1, mps, xpu:0)
_DEVICE = re.compile(r"[a-z][a-z0-9_]*(:\d+)?")
_ENGINE = re.compile(r"[\w.]+:[\w.]+")


def _variable(name: str) -> Any:
    """A field read from the variable `name` only (its exact spelling: environments are case-sensitive here)."""
    return AliasChoices(name)


class EnvironmentSettings(BaseSettings):
    """The ``RAGRETRIEVAL_*`` variables (and ``XDG_CACHE_HOME``), each a field; `environment()` reads them."""

    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True, populate_by_name=True)

    cache_dir: Path | None = Field(None, validation_alias=_variable("RAGRETRIEVAL_CACHE_DIR"),
                                   description="Folder of the embedding cache, the LLM answer cache and the answer "
                                               "journals [default: $XDG_CACHE_HOME/ragretrieval]")
    xdg_cache_home: Path | None = Field(None, validation_alias=_variable("XDG_CACHE_HOME"),
                                        description="The user's cache folder (freedesktop.org) [default: ~/.cache]")
    device: str = Field("cpu", validation_alias=_variable("RAGRETRIEVAL_DEVICE"),
                        description="Where sentence-transformers models and cross-encoders run: cpu, cuda, cuda:1, "
                                    "mps, ...")
    embed_base_url: str | None = Field(None, validation_alias=_variable("RAGRETRIEVAL_EMBED_BASE_URL"),
                                       description="Endpoint of openai:MODEL embedders when --embed-base-url is not "
                                                   "given [default: OpenAI's]")
    runs_url: str | None = Field(None, validation_alias=_variable("RAGRETRIEVAL_RUNS_URL"),
                                 description="The runs history when --runs-db is not given: an SQLAlchemy URL or an "
                                             "SQLite file [default: ./.ragretrieval/runs.sqlite]")
    serve_engine: str | None = Field(None, validation_alias=_variable("RAGRETRIEVAL_SERVE_ENGINE"),
                                     description="The engine of serve and worker when --engine is not given: "
                                                 "module:function [default: the built-in one]")
    serve_token: str | None = Field(None, validation_alias=_variable("RAGRETRIEVAL_SERVE_TOKEN"),
                                    description="The token serve requires when --token is not given (safer than "
                                                "--token: a command line is visible to other users)")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings  # the process environment only: no .env file, no secrets folder

    @field_validator("*", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any, info) -> Any:
        if isinstance(value, str) and not value.strip():
            return cls.model_fields[info.field_name].default
        return value

    @field_validator("device")
    @classmethod
    def _a_device(cls, value: str) -> str:
        if not _DEVICE.fullmatch(value):
            raise ValueError(f"{value!r} is not a device name (cpu, cuda, cuda:1, mps, ...)")
        return value

    @field_validator("embed_base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]", value):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @field_validator("serve_engine")
    @classmethod
    def _module_and_function(cls, value: str | None) -> str | None:
        if value is not None and not _ENGINE.fullmatch(value):
            raise ValueError(f"{value!r} must be written module:function")
        return value

    def cache_folder(self) -> Path:
        """``$RAGRETRIEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragretrieval``, else ``~/.cache/ragretrieval``."""
        if self.cache_dir is not None:
            return self.cache_dir
        return (self.xdg_cache_home or Path.home() / ".cache") / "ragretrieval"

    @classmethod
    def variable(cls, field: str) -> str:
        """The variable a field is read from: ``variable("device")`` is ``RAGRETRIEVAL_DEVICE``."""
        alias = cls.model_fields[field].validation_alias
        assert isinstance(alias, AliasChoices)
        return str(alias.choices[0])


def environment() -> EnvironmentSettings:
    """The settings as the environment holds them now (read on every call: a test or a server may change them)."""
    try:
        return EnvironmentSettings()
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            name = str(problem["loc"][0]) if problem["loc"] else "environment"
            problems.append(f"environment variable {name}: {problem['msg'].removeprefix('Value error, ')}")
        raise SettingsError("; ".join(problems), [str(p["loc"][0]) for p in error.errors() if p["loc"]],
                            source="environment") from None
