"""Settings and plug-in options, declared once: what every surface (the CLI, the web API, sweep grids, settings files,
Python keyword arguments) parses its values through.

- `SettingsError`: settings that cannot work, naming the *fields* (``chunk_overlap must be smaller than
  chunk_size``), never a command-line flag; the CLI turns field names into its flags in one place (cli/fields.py),
  the web API returns them as field errors.
- `build_settings(model, values)`: a workflow's settings model (`EvalConfig`, `AnswerSettings`) from plain values,
  its pydantic errors turned into one `SettingsError` that names the field.
- `PluginOptions`: the base of every plug-in's options model (a retriever's ``k1``, a store's ``kind``, a
  generator's ``sentences``), as ir_measures' measures declare their parameters: name, type, default and a one-line
  help per field. `parse_pairs` reads ``key=value`` texts, `plugin_options` validates values (text or typed) through
  a model into their canonical, typed form, so ``k1=1.2`` from the command line, ``k1: 1.2`` from a grid file and
  ``{"k1": 1.2}`` from Python or the web API are one setting with one configuration key; `option_lines` is what
  ``ragretrieval plugins -v`` prints.
- `described(help, default=...)`: a settings *dataclass*'s field with its one-line help (``ServeSettings``,
  ``WorkerSettings``), as ``Field(description=...)`` gives a model's; the generated option tables of docs/
  (cli/option_tables.py) read either.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Iterable, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import RagretrievalError

Model = TypeVar("Model", bound=BaseModel)


DESCRIPTION = "description"  # the key of a dataclass field's help in its metadata


def described(description: str, **default: Any) -> Any:
    """A settings dataclass's field (``dataclasses.field``: `default` is ``default=`` or ``default_factory=``) whose
    metadata holds its help: ``port: int = described("Port to bind (1 to 65535)", default=8000)``."""
    return dataclasses.field(metadata={DESCRIPTION: description}, **default)


def help_of(settings: type, name: str) -> str:
    """The one-line help `described` gave field `name` of a settings dataclass, as an option's help sentence."""
    field = next(f for f in dataclasses.fields(settings) if f.name == name)
    return field.metadata[DESCRIPTION] + "."


class SettingsError(RagretrievalError, ValueError):
    """Settings that cannot work. `fields` are the settings' paths the message names (the first is the one at
    fault: ``chunk_overlap``, ``retriever_options.k1``, ``judge_samples``). The command line exits with status 2 on
    it, as on any bad option."""

    exit_code = 2

    def __init__(self, message: str, fields: Iterable[str] = (), source=None):
        super().__init__(message)
        self.fields = tuple(fields)
        self.source = source  # the file the fields were read from (a grid file): named as the file writes them

    @property
    def field(self) -> str | None:
        return self.fields[0] if self.fields else None


def _path(loc) -> str:
    return ".".join(str(part) for part in loc)


def settings_error(error: ValidationError, prefix: str = "") -> SettingsError:
    """One `SettingsError` for a model's validation errors, each problem as ``field: message``. A `SettingsError`
    raised inside a validator keeps its wording; its fields (relative to the model that raised it) get the path of
    that model in front, and `prefix` goes before every path (``options.``)."""
    messages, fields = [], []
    for problem in error.errors():
        loc = tuple(str(part) for part in problem["loc"])
        inner = (problem.get("ctx") or {}).get("error")
        if isinstance(inner, SettingsError) and inner.fields:
            # a field validator's loc ends with the field its message names; a model validator's is the model's
            base = loc[:-1] if loc and inner.fields[0].split(".")[0] == loc[-1] else loc
            fields += [prefix + ".".join((*base, f)) for f in inner.fields]
            messages.append(str(inner))
            continue
        path = prefix + ".".join(loc)
        message = str(inner) if isinstance(inner, SettingsError) else problem["msg"].removeprefix("Value error, ")
        fields.append(path)
        messages.append(f"{path}: {message}" if path else message)
    return SettingsError("; ".join(dict.fromkeys(messages)), dict.fromkeys(f for f in fields if f))


def build_settings(model: type[Model], values: dict | None = None, prefix: str = "") -> Model:
    """`model` validated from `values`; problems are one `SettingsError` naming the fields."""
    try:
        return model.model_validate(values or {})
    except ValidationError as error:
        raise settings_error(error, prefix) from None


class SettingsModel(BaseModel):
    """A workflow's settings model (`EvalConfig`, `AnswerSettings`). Built directly, ``EvalConfig(chunk_size=10,
    chunk_overlap=20)``, a bad value raises `SettingsError` naming the fields, as the command line, a settings
    file, the web and ``rr.evaluate(...)`` do (they validate through `build_settings`, which never calls this)."""

    def __init__(self, /, **data):
        try:
            super().__init__(**data)
        except ValidationError as error:
            raise settings_error(error) from None


def merged(base: dict, over: dict) -> dict:
    """`over` laid on `base` (options given over a settings file, keyword arguments over ``config=``): nested
    mappings (``retriever_options``, ``retrieval``) are merged key by key."""
    result = dict(base)
    for key, value in over.items():
        inner = result.get(key)
        result[key] = merged(inner, value) if isinstance(value, dict) and isinstance(inner, dict) else value
    return result


# ------------------------------------------------------------------------------------------------ plug-in options
class PluginOptions(BaseModel):
    """A plug-in's options: one field per option, each with a default and a one-line `description`. Unknown
    options are refused with the list of known ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoOptions(PluginOptions):
    """A plug-in that takes no options."""


def parse_pairs(pairs: Iterable[str] | dict | None, field: str = "options") -> dict:
    """``["k1=1.2", "kind=hnsw"]`` -> ``{"k1": "1.2", "kind": "hnsw"}`` (texts: the options model types them); a
    dict is returned as it is."""
    if pairs is None:
        return {}
    if isinstance(pairs, dict):
        return dict(pairs)
    if isinstance(pairs, str):
        pairs = [pairs]
    options = {}
    for pair in pairs:
        key, sep, value = str(pair).partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"{field}: expected key=value, got {pair!r}", [field])
        options[key.strip()] = value
    return options


def _container(annotation) -> type | None:
    """list or dict when the field holds one (``list[int] | None`` included), else None."""
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, dict):
        return dict if origin is dict else list
    if annotation in (list, tuple, set, dict):
        return dict if annotation is dict else list
    for arg in typing.get_args(annotation):
        found = _container(arg)
        if found is not None:
            return found
    return None


def _from_text(model: type[PluginOptions], values: dict) -> dict:
    """Texts for list and dict options read as JSON (``[1, 2]``, ``{"a": 1}``), a list also as ``a,b``; every
    other text is left to the model's own (lax) conversion: ``"1.2"`` -> 1.2, ``"true"`` -> True."""
    typed = {}
    for name, value in values.items():
        field = model.model_fields.get(name)
        kind = _container(field.annotation) if field is not None else None
        if kind is not None and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                if kind is dict:
                    raise SettingsError(f"{name}: expected a JSON object, got {value!r}", [name]) from None
                value = [part.strip() for part in value.split(",") if part.strip()]
        typed[name] = value
    return typed


def known_options(model: type[PluginOptions]) -> str:
    return ", ".join(model.model_fields) or "none"


def plugin_options(model: type[PluginOptions] | None, values: dict | None, owner: str,
                   field: str = "options") -> dict:
    """`values` (texts or typed values) validated through a plug-in's options `model`, in canonical form: the
    options given (not the defaults left unset, so a configuration records what was asked), typed, JSON-ready.
    Without a model (a plug-in that declares none) the values are returned as they are. Problems are a
    `SettingsError` naming ``<field>.<option>`` and, for an unknown option, the known ones."""
    values = dict(values or {})
    if model is None:  # as before options were declared: a text of digits is an integer, anything else a text
        return {k: int(v) if isinstance(v, str) and v.lstrip("-").isdigit() else v for k, v in values.items()}
    if not values:
        return values
    try:
        parsed = model.model_validate(_from_text(model, values))
    except SettingsError as error:
        raise SettingsError(f"{owner}: {field}.{error}", [f"{field}.{f}" for f in error.fields]) from None
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            name = _path(problem["loc"]) or "options"
            message = problem["msg"].removeprefix("Value error, ")
            if problem["type"] == "extra_forbidden":
                message = f"unknown option (known: {known_options(model)})"
            problems.append((f"{field}.{name}", message))
        raise SettingsError(f"{owner}: " + "; ".join(f"{path}: {message}" for path, message in problems),
                            [path for path, _ in problems]) from None
    return parsed.model_dump(mode="json", exclude_unset=True)


def option_lines(model: type[BaseModel] | None, indent: str = "    ") -> list[str]:
    """One line per option: name, type, default, help, in aligned columns (``ragretrieval plugins -v``)."""
    if model is None:
        return [f"{indent}(options not declared: passed to the plug-in as given)"]
    rows = []
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        shown = "required" if field.is_required() else f"default {json.dumps(default, ensure_ascii=False)}"
        if "[default:" in (field.description or ""):
            shown = ""  # the help says it better ("the embedder's preferred")
        rows.append((name, type_name(field.annotation), shown, field.description or ""))
    if not rows:
        return [f"{indent}(no options)"]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [f"{indent}{'  '.join(cell.ljust(width) for cell, width in zip(row, widths))}  {row[3]}".rstrip()
            for row in rows]


def type_name(annotation: Any) -> str:
    """``float``, ``int | None``, ``rrf | weighted``: a type as a user reads it (``Integer`` is ``int``)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return " | ".join(str(arg) for arg in typing.get_args(annotation))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(type_name(arg) for arg in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return "none" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))
