"""The command line's side of the settings models: the one map from a settings field to its flag, click options whose
defaults and help come from the models, and error messages turned from fields into flags.

A settings option is declared as a `Setting` (the field's path and the model that declares it); its click option
has no default of its own (``default=None``: "not given"), so the model fills in what was not given and the help's
``[default: ...]`` is read from the model. `collect` turns the given options into the model's (nested) values, which
`merged` (work/options.py) lays over those of a ``--config`` file. A `SettingsError` from the library names fields;
`flag_message` rewrites them into the flags a user typed (``chunk_overlap`` -> ``--chunk-overlap``).
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path

import click
from pydantic import BaseModel

from ..work.options import SettingsError, merged, parse_pairs
from .aliases import OldSpellings

# fields whose flag is not ``--`` + the name with dashes
RENAMED = {"ks": "--k", "retriever_options": "--retriever-option", "store_options": "--store-option",
           "generator_options": "--generator-option", "judges": "--judge", "judge_prompts": "--judge-prompt",
           "prompt_file": "--prompt", "cite_relevant": "--no-cite-relevant", "retriever_options.run": "--run",
           "retriever_options.fusion": "--fusion", "retriever_options.rrf_k": "--rrf-k",
           "retriever_options.alpha": "--alpha", "embed.query_prefix": "--query-prefix",
           "embed.passage_prefix": "--passage-prefix", "rerank.name": "--rerank", "threads": "--concurrency",
           "tags": "--tag", "model": "--embed-model"}
# the 0.2 flags of a renamed field: still read, left out of --help (on eval and sweep `--model` is shown too, as the
# one model those commands take; `Setting.show_old`)
OLD_FLAGS = {"threads": ("--threads",), "model": ("--model",)}
NESTED = {"embed": "--embed-", "rerank": "--rerank-"}  # embed.dimensions -> --embed-dimensions
KEYED = ("retriever_options", "store_options", "generator_options")  # retriever_options.k1 -> --retriever-option k1
CONTAINERS = ("retrieval.",)  # an answer run's retrieval settings take eval's flags
INVERTED = {"cite_relevant"}  # a flag that sets the field to False


def flag(path: str) -> str:
    """The flag of a settings field: ``chunk_size`` -> ``--chunk-size``, ``retrieval.ks`` -> ``--k``,
    ``retriever_options.k1`` -> ``--retriever-option k1``, ``embed.dimensions`` -> ``--embed-dimensions``."""
    for container in CONTAINERS:
        path = path.removeprefix(container)
    if path in RENAMED:
        return RENAMED[path]
    head, _, rest = path.partition(".")
    if rest and head in NESTED:
        return NESTED[head] + rest.replace("_", "-")
    if rest:
        return f"{flag(head)} {rest}"
    return "--" + path.replace("_", "-")


def flag_message(error: SettingsError) -> str:
    """The error's message with each field it names written as its flag (its first mention: a field such as
    ``generator`` is also a word of the message, `unknown generator 'gpt'`)."""
    message = str(error)
    if getattr(error, "source", None) is not None:  # a field of a file, written as the file writes it
        return message
    paths = {path: path for path in error.fields}
    for path in error.fields:  # a message names fields relative to the model that raised it
        for container in CONTAINERS:
            if path.startswith(container):
                paths.setdefault(path.removeprefix(container), path)
    for text in sorted(paths, key=len, reverse=True):
        replacement = flag(paths[text])
        message = re.sub(rf"(?<![\w.-]){re.escape(text)}(?![\w])", lambda _, r=replacement: r, message, count=1)
    return message


def comma_separated(ctx, param, values):
    """A click callback for a repeatable option: ``-m a,b -m c`` is ``-m a -m b -m c`` (empty parts dropped; values
    click already typed, such as numbers, are kept as they are)."""
    if values is None:
        return values
    parts = ([p.strip() for p in value.split(",")] if isinstance(value, str) else [value] for value in values)
    return tuple(part for group in parts for part in group if part != "")


def field_default(model: type[BaseModel], name: str):
    """The field's default; None for a field the model requires (a reranker's name: none unless given)."""
    declared = model.model_fields[name]
    return None if declared.is_required() else declared.get_default(call_default_factory=True)


def shown(value) -> str | None:
    """A default as the help shows it; None when there is nothing worth showing (unset, off, empty)."""
    if value is None or value is False or value in ({}, [], ""):
        return None
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value)


def _click_type(annotation):
    """The click type of a field: int, float, a choice of literals, a path; text otherwise."""
    if typing.get_origin(annotation) is typing.Literal:
        return click.Choice([str(v) for v in typing.get_args(annotation)])
    if typing.get_origin(annotation) in (list, dict, tuple):
        return None  # given as text (1,3,5,10), which the model reads
    options = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    if len(options) == 1:
        inner = options[0]
        if typing.get_origin(inner) is typing.Annotated:  # the bounded types of work/limits.py
            inner = typing.get_args(inner)[0]
        if typing.get_origin(inner) is typing.Literal:
            return click.Choice([str(v) for v in typing.get_args(inner)])
        if inner in (int, float):
            return inner
        if inner is Path:
            return click.Path(path_type=Path)
    return None


@dataclass(frozen=True)
class Setting:
    """A command-line option for the settings field at `path` (``chunk_size``, ``embed.base_url``,
    ``retriever_options.fusion``), declared in `model`; `extra` are click keywords (type, multiple, metavar...)."""

    path: str
    model: type[BaseModel]
    help: str | None = None
    extra: dict = field(default_factory=dict)
    show_old: bool = False

    @property
    def flag(self) -> str:
        return flag(self.path).split(" ")[0]

    @property
    def relative(self) -> str:
        """The path within the workflow's own settings (an answer run's ``retrieval.ks`` is eval's ``ks``)."""
        path = self.path
        for container in CONTAINERS:
            path = path.removeprefix(container)
        return path

    @property
    def param(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    def option(self):
        declared = self.model.model_fields[self.name]
        text = self.help or declared.description or ""
        default = None if self.name in INVERTED else shown(field_default(self.model, self.name))
        if default is not None and "[default:" not in text:
            text = f"{text} [default: {default}]"
        settings = dict(self.extra)
        if self.relative in KEYED:
            settings.setdefault("multiple", True)
            settings.setdefault("metavar", "KEY=VALUE")
        elif declared.annotation in (bool, bool | None):
            settings.setdefault("is_flag", True)
        elif "type" not in settings and (kind := _click_type(declared.annotation)) is not None:
            settings["type"] = kind
        old = OLD_FLAGS.get(self.relative, ())
        return click.option(self.flag, *old, self.param, cls=OldSpellings, old=() if self.show_old else old,
                            default=None, help=text.strip(), **settings)


def setting_options(settings: list[Setting]):
    """Decorator adding one option per setting."""

    def apply(command):
        for setting in reversed(settings):
            command = setting.option()(command)
        return command

    return apply


def _put(values: dict, path: str, value) -> None:
    head, _, rest = path.partition(".")
    if rest:
        _put(values.setdefault(head, {}), rest, value)
    elif isinstance(value, dict) and isinstance(values.get(head), dict):
        values[head] = {**values[head], **value}
    else:
        values[head] = value


def collect(settings: list[Setting], kwargs: dict) -> dict:
    """The settings given on the command line, as the model's nested values; their parameters are taken out of
    `kwargs`. Options left out are not in the result, so the model (or a ``--config`` file) decides them."""
    values: dict = {}
    for setting in settings:
        value = kwargs.pop(setting.param, None)
        if value is None or value == ():
            continue
        if setting.relative in KEYED:
            value = parse_pairs(value, setting.path)
        elif isinstance(value, Path):
            value = str(value)
        elif setting.name in INVERTED:
            value = not value
        elif setting.extra.get("multiple"):
            value = list(value)
        _put(values, setting.path, value)
    return values


def given_settings(kind: str, config_file: Path | None, given: dict, dataset: Path | None = None,
                   questions: Path | None = None, required: tuple[str, ...] = (), finish=None):
    """(settings, dataset folder, questions file) of a command: a ``--config`` file's values with the options
    given laid over them (`finish` may rework them), validated by the workflow's model; `dataset` and `questions`
    given win over the file's. Each field in `required` must be given by an option or the file."""
    from ..runs.settings_file import WORKFLOWS, RunSettings, read_settings_file
    from ..work.options import build_settings

    file = read_settings_file(config_file, kind) if config_file else RunSettings(kind)
    values = merged(file.values, given)
    for name in required:
        if name not in values:
            raise click.UsageError(f"Missing option '{flag(name)}' (or a --config file that names its {name}).")
    settings = build_settings(WORKFLOWS[kind], finish(values) if finish else values)
    dataset = dataset or (Path(file.dataset) if file.dataset else None)
    if dataset is None:
        raise click.UsageError("Missing option '--dataset' (or a --config file that names its dataset).")
    questions = questions or (Path(file.questions) if file.questions else None)
    return settings, dataset, questions


config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="TOML or YAML settings file (docs/runs.md, \"Settings files\"; `runs show RUN --config` writes one); "
         "options given here replace its values.")
