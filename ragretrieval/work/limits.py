"""The bounds every setting of remote work shares: timeouts, retries, waits and prices, declared once as pydantic
types so that each settings model (``AnswerSettings``, ``EmbedSettings``, ``HttpMapping``, the http generator's
options) and each settings dataclass a Python caller builds (``LLMSettings``, ``GeneratorOptions``,
``JudgeOptions``, ``ServeSettings``: `check_bounds`) refuses the same values with a `SettingsError` naming the
field, which the command line shows as a usage error naming its flag (exit 2; cli/bounds.py for the options that
are not settings fields).

The integers of every settings model are `Integer`: a boolean is refused (``chunk_size = true`` in a TOML file is not
a chunk size of 1, though pydantic reads it so), and cutoffs (``ks``, ``top_k``) are at most ``MAX_CUTOFF``.

Why these bounds: a timeout of 0 or less makes every request fail at once and be retried for half a minute; a
negative retry count made the retry loop end in an AssertionError; a negative price gives a negative bill; an
infinite or NaN value is never what was meant. The upper bounds are far above any real use (a day, a hundred
retries, a million dollars per million tokens) and keep the arithmetic finite. A cutoff is a ranking's depth: runs
are read a thousand deep at most (TREC's convention), and each cutoff costs memory per question, so ten thousand is
far above any use and `1000000000` is refused before any work instead of ending in a MemoryError.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from .options import SettingsError

MAX_SECONDS = 86_400.0  # a day
MAX_RETRIES = 100
MAX_PRICE = 1_000_000.0  # dollars per million tokens
MAX_CUTOFF = 10_000  # the deepest k scored
MAX_CONCURRENCY = 256  # requests or questions at once: threads, each holding a connection
MIB = 2**20  # bytes in a mebibyte: sizes are given and shown in MiB


def _not_a_boolean(value):
    """True and False are Python ints; as settings they are a mistake (``chunk_size = true``), never 1 or 0."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "must be an integer, got {value}", {"value": str(value).lower()})
    return value


def _a_number_not_a_boolean(value):
    if isinstance(value, bool):  # True is not a timeout of 1 second
        raise PydanticCustomError("float_type", "must be a number, got {value}", {"value": str(value).lower()})
    return value


Integer = Annotated[int, BeforeValidator(_not_a_boolean)]
_NUMBER = BeforeValidator(_a_number_not_a_boolean)  # after the bounds: it runs first, and they keep their order

Timeout = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False), _NUMBER]
Wait = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False), _NUMBER]
Retries = Annotated[Integer, Field(ge=0, le=MAX_RETRIES)]
Concurrency = Annotated[Integer, Field(ge=1, le=MAX_CONCURRENCY)]
Price = Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False), _NUMBER]
Port = Annotated[Integer, Field(ge=1, le=65_535)]

# the fields of the dataclass settings that carry these bounds, by name
BOUNDED_FIELDS: dict[str, Any] = {"timeout": Timeout, "max_retries": Retries, "retries": Retries,
                                  "backoff": Wait, "sleep_time": Wait, "price_in": Price, "price_out": Price,
                                  "port": Port, "concurrency": Concurrency}
_ADAPTERS: dict[Any, TypeAdapter] = {}


def problem_with(bounded, value) -> str | None:
    """What is wrong with `value` for the bounded type (``"must be greater than 0, got -1.0"``), or None."""
    adapter = _ADAPTERS.setdefault(bounded, TypeAdapter(bounded))
    if isinstance(value, bool):  # True is not a timeout of 1 second
        return f"must be a number, got {value!r}"
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        return f"{error.errors()[0]['msg'].replace('Input should be', 'must be')}, got {value!r}"
    return None


def cutoffs_problem(ks: list[int]) -> str | None:
    """What is wrong with a list of cutoffs (each a positive integer, at most ``MAX_CUTOFF``), or None."""
    if min(ks) <= 0:
        return f"every k must be a positive integer; got {ks}"
    if max(ks) > MAX_CUTOFF:
        return f"a cutoff above {MAX_CUTOFF:,} is refused (no ranking is read that deep); got {max(ks)}"
    return None


def checked(field: str, value, bounded=None):
    """`value` as the bounded type of `field` (``BOUNDED_FIELDS``) makes it, or a `SettingsError` naming the
    field (``timeout: must be greater than 0, got -1``)."""
    bounded = bounded or BOUNDED_FIELDS[field]
    problem = problem_with(bounded, value)
    if problem is not None:
        raise SettingsError(f"{field}: {problem}", [field])
    return _ADAPTERS[bounded].validate_python(value)


def check_bounds(settings) -> None:
    """Check every field of a dataclass `settings` named in ``BOUNDED_FIELDS`` (None means unset and passes)."""
    for field, bounded in BOUNDED_FIELDS.items():
        value = getattr(settings, field, None)
        if value is not None:
            checked(field, value, bounded)
