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

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from .limits import MAX_CONCURRENCY, Concurrency, Retries, Timeout, Wait

PARTS = ("timeout", "retries", "backoff", "concurrency")
_HELP = {"timeout": "Seconds per request", "retries": "Retries on 429, 5xx and timeouts",
         "backoff": "Seconds before the first retry (doubling, with jitter)", "concurrency": "Requests at once"}


class RemoteCall(BaseModel):
    """Timeout, retries, first wait and requests at once of one kind of remote call. ``sleep_time`` is read as
    ``backoff`` (the answer settings' name for it) and ``max_retries`` as ``retries``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    timeout: Timeout = Field(description=_HELP["timeout"])
    retries: Retries = Field(validation_alias=AliasChoices("retries", "max_retries"), description=_HELP["retries"])
    backoff: Wait = Field(validation_alias=AliasChoices("backoff", "sleep_time"), description=_HELP["backoff"])
    concurrency: Concurrency = Field(description=_HELP["concurrency"])

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
        """This call with some parts replaced (a caller's own default, a setting given), validated."""
        return RemoteCall.model_validate({**self.model_dump(), **parts})


__all__ = ["MAX_CONCURRENCY", "PARTS", "RemoteCall"]
