"""The bounds every setting of remote work shares: timeouts, retries, waits and prices, declared once as pydantic
types so that each settings model (``AnswerSettings``, ``EmbedSettings``, ``HttpMapping``, the http generator's
options) and each settings dataclass a Python caller builds (``LLMSettings``, ``GeneratorOptions``,
``JudgeOptions``, ``ServeSettings``: `check_bounds`) refuses the same values with a `SettingsError` naming the
field, which the command line shows as a usage error naming its flag (exit 2; cli/bounds.py for the options that
are not settings fields).

Why these bounds: a timeout of 0 or less makes every request fail at once and be retried for half a minute; a
negative retry count made the retry loop end in an AssertionError; a negative price gives a negative bill; an
infinite or NaN value is never what was meant. The upper bounds are far above any real use (a day, a hundred
retries, a million dollars per million tokens) and keep the arithmetic finite.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from .options import SettingsError

MAX_SECONDS = 86_400.0  # a day
MAX_RETRIES = 100
MAX_PRICE = 1_000_000.0  # dollars per million tokens

Timeout = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
Wait = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Retries = Annotated[int, Field(ge=0, le=MAX_RETRIES)]
Price = Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
Port = Annotated[int, Field(ge=1, le=65_535)]

# the fields of the dataclass settings that carry these bounds, by name
BOUNDED_FIELDS: dict[str, Any] = {"timeout": Timeout, "max_retries": Retries, "retries": Retries,
                                  "backoff": Wait, "sleep_time": Wait, "price_in": Price, "price_out": Price,
                                  "port": Port}
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
