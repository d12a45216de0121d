"""`RemoteCall`: how a call to another service is made (the seconds one request may take, the retries, the first
wait before a retry, the requests at once), as ragas' ``RunConfig`` holds them. Every remote caller takes one: the
LLM client (`LLMSettings`), the generators and judges (`AnswerSettings`), the http retriever (`HttpMapping`), the
rerankers (`RerankSettings`), the embeddings API (`EmbedSettings`) and the Dask executor.

Each caller declares its defaults once, as one `RemoteCall` beside its settings model (``LLM_CALLS``,
``EMBED_CALLS``, ...), where a value differs on purpose (an embeddings batch queued on a CPU server takes minutes:
300 s; a chat completion 120 s). The settings models' fields keep the names their surfaces already use (``timeout``,
``max_retries`` or ``retries``, ``sleep_time`` or ``backoff``, ``threads`` or ``concurrency``) and take their
default, bounds and help from it through `RemoteCall.field`, so a default is written in one place and a test
(tests/work/test_declared_once.py) finds any other.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, ConfigDict, Field, model_validator
from pydantic.fields import FieldInfo

from .limits import MAX_CONCURRENCY, Concurrency, Retries, Timeout, Wait
from .options import SettingsError, SettingsModel

PARTS = ("timeout", "retries", "backoff", "concurrency")
ALIASES = {"max_retries": "retries", "sleep_time": "backoff"}  # the names the settings models' fields already use
_HELP = {"timeout": "Seconds per request", "retries": "Retries on 429, 5xx and timeouts",
         "backoff": "Seconds before the first retry (doubling, with jitter)", "concurrency": "Requests at once"}


class RemoteCall(SettingsModel):
    """Timeout, retries, first wait and requests at once of one kind of remote call. ``sleep_time`` is read as
    ``backoff`` (the answer settings' name for it) and ``max_retries`` as ``retries``; a part given under both its
    names is refused (pydantic would keep one silently). A bad value is a `SettingsError` naming the field."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    timeout: Timeout = Field(description=_HELP["timeout"])
    retries: Retries = Field(validation_alias=AliasChoices("retries", "max_retries"), description=_HELP["retries"])
    backoff: Wait = Field(validation_alias=AliasChoices("backoff", "sleep_time"), description=_HELP["backoff"])
    concurrency: Concurrency = Field(description=_HELP["concurrency"])

    @model_validator(mode="before")
    @classmethod
    def _one_name_per_part(cls, data):
        if isinstance(data, dict):
            for alias, part in ALIASES.items():
                if alias in data and part in data:
                    raise SettingsError(f"{part} is given twice, as {part} and as {alias}: give one", [part])
        return data

    def field(self, part: str, description: str | None = None, **more: Any) -> FieldInfo:
        """A settings model's field for one part (``timeout``, ...): this call's default, the part's bounds (the
        field's annotation carries them: `Timeout`, `Retries`, `Wait`, `Concurrency`) and its help."""
        if part not in PARTS:
            raise ValueError(f"{part!r} is not a part of a remote call ({', '.join(PARTS)})")
        return Field(getattr(self, part), description=description or _HELP[part], **more)

    def retry_args(self) -> dict:
        """``retries=``, ``backoff=`` for `with_retries` (work/retry.py)."""
        return {"retries": self.retries, "backoff": self.backoff}

    def but(self, **parts) -> "RemoteCall":
        """This call with some parts replaced (a caller's own default, a setting given; ``max_retries`` and
        ``sleep_time`` name theirs too), validated: a bad value is a `SettingsError` naming the field."""
        values = self.model_dump()
        for name in parts:
            values.pop(ALIASES.get(name, name), None)  # given as sleep_time: replaces backoff, and is named so
        return RemoteCall(**values, **parts)


__all__ = ["ALIASES", "MAX_CONCURRENCY", "PARTS", "RemoteCall"]
