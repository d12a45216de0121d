"""Store options as sweep axes: a grid's ``stores`` entry with options whose values are lists gives a cell per value,
for that store (and kind) only.

In a grid file::

    stores:
      - numpy
      - {name: faiss, options: {kind: hnsw, ef_search: [8, 16, 32]}}
      - {name: faiss, options: {kind: ivf, nprobe: [1, 4, 16]}}

On the command line, repeatable: ``--store-grid faiss:kind=hnsw:ef_search=8,16,32``. A key the store does not declare
(its options model, or for an engine without one the parameters of its constructor) is refused before any cell runs;
the values themselves are checked by the store's options model when each cell's `EvalConfig` is built.
"""

from __future__ import annotations

import inspect
import itertools
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import RagretrievalError
from ..work.options import SettingsError

# a ':' starts the next option only before "key=", so that values may hold one (uri=http://127.0.0.1:19530)
_NEXT_OPTION = re.compile(r":(?=[A-Za-z_][A-Za-z0-9_]*=)")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class StoreAxis(BaseModel):
    """One ``stores`` entry with options: each option a value, or a list of values (a cell per value)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    options: dict = Field(default_factory=dict)

    def settings(self) -> list[dict]:
        """Every combination of the listed values, in the order written."""
        keys = list(self.options)
        values = [v if isinstance(v, list) else [v] for v in self.options.values()]
        return [dict(zip(keys, combination)) for combination in itertools.product(*values)]


def as_store_axis(entry, position: int):
    """A grid's ``stores`` entry: a name stays one; a mapping becomes a `StoreAxis`, a problem naming its field."""
    if not isinstance(entry, dict):
        return entry
    try:
        return StoreAxis.model_validate(entry)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = "unknown field (known: name, options)" if first["type"] == "extra_forbidden" else first["msg"]
        raise ValueError(f"entry {position}: {where}: {message}") from None


def declared_options(store_cls) -> list[str] | None:
    """The option names a store declares: its options model's fields, else its constructor's parameters (None:
    it takes anything, ``**options``)."""
    model = getattr(store_cls, "Options", None)
    if model is not None:
        return list(model.model_fields)
    parameters = inspect.signature(store_cls.__init__).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.name != "self"]


def check_axis(axis: StoreAxis, store_cls, where: str) -> None:
    """Refuse options the store does not declare and empty value lists, naming the field."""
    declared = declared_options(store_cls)
    for key, value in axis.options.items():
        if declared is not None and key not in declared:
            raise SettingsError(f"{where}.options: store {axis.name} does not declare option {key!r} (declared: "
                                f"{', '.join(declared) or 'none'})", [f"{where}.options.{key}"])
        if isinstance(value, list) and not value:
            raise SettingsError(f"{where}.options.{key}: an empty list of values gives no cell",
                                [f"{where}.options.{key}"])
        if isinstance(value, (dict, list)) and any(isinstance(v, (dict, list)) for v in _as_list(value)):
            raise SettingsError(f"{where}.options.{key}: each value must be a number, text or boolean",
                                [f"{where}.options.{key}"])


def _as_list(value):
    return value if isinstance(value, list) else [value]


def store_settings(stores: list, shared: dict, store_class) -> list[tuple[str, dict]]:
    """(store name, its options) of every store cell of a grid: a plain name takes the grid's shared
    ``store_options``; an axis the shared options with its own laid over them, one per combination."""
    cells: list[tuple[str, dict]] = []
    for i, entry in enumerate(stores):
        if isinstance(entry, str):
            cells.append((entry, dict(shared)))
            continue
        try:
            store_cls = store_class(entry.name)
        except RagretrievalError as error:
            raise SettingsError(f"stores.{i}.name: {error}", [f"stores.{i}.name"]) from None
        check_axis(entry, store_cls, f"stores.{i}")
        cells += [(entry.name, {**shared, **options}) for options in entry.settings()]
    return cells


def parse_store_grid(text: str) -> StoreAxis | str:
    """``faiss:kind=hnsw:ef_search=8,16,32`` -> the axis (``8,16,32``: a list, one cell per value); ``faiss`` alone
    -> the store's name. A problem is a `SettingsError` naming ``stores`` and quoting the text."""
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not name or not _NAME.fullmatch(name):
        raise SettingsError(f"stores: expected STORE[:key=value[,value...]]..., got {text!r}", ["stores"])
    if not sep:
        return name
    options: dict = {}
    for pair in _NEXT_OPTION.split(rest):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SettingsError(f"stores: expected key=value after {name}:, got {pair!r} in {text!r}", ["stores"])
        if key in options:
            raise SettingsError(f"stores: option {key!r} given twice in {text!r}", ["stores"])
        values = [v.strip() for v in value.split(",")]
        if any(not v for v in values):
            raise SettingsError(f"stores: option {key!r} has an empty value in {text!r}", ["stores"])
        options[key] = values if len(values) > 1 else values[0]
    return StoreAxis(name=name, options=options)
