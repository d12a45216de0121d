"""Settings files: one run's settings as TOML or YAML (``eval --config``, ``answer --config``; ``runs show RUN
--config`` writes one from a stored run, and running it again gives the same configuration key).

The file holds its format's version, the workflow (``kind``: retrieval or answer), the dataset folder and an
optional questions file (relative paths are relative to the file's folder; ``runs show --config`` writes them
absolute), and the workflow's settings: the fields of `EvalConfig` (retrieval) or of `AnswerSettings` (answer, with
the retrieval settings in a ``[retrieval]`` table). docs/runs.md, "Settings files", has an example of each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..answers.settings import AnswerSettings
from ..evaluation.report import EvalConfig
from ..io.jsonfiles import describe
from ..io.mappings import MappingFileError, dump_mapping, read_mapping
from ..work.options import SettingsError, build_settings

SETTINGS_VERSION = 1
WORKFLOWS = {"retrieval": EvalConfig, "answer": AnswerSettings}
COMMANDS = {"retrieval": "eval", "answer": "answer"}


class SettingsHeader(BaseModel):
    """The fields of a settings file that are not settings; every other field is the workflow's."""

    model_config = ConfigDict(extra="allow")
    settings_version: Literal[1] = SETTINGS_VERSION
    kind: Literal["retrieval", "answer"] | None = None
    dataset: str | None = None
    questions: str | None = None


@dataclass
class RunSettings:
    """What a settings file asks for: the workflow, the data, and the settings' values (not yet merged with the
    command line's)."""

    kind: str
    dataset: str | None = None
    questions: str | None = None
    values: dict = field(default_factory=dict)


def read_settings_file(path, kind: str) -> RunSettings:
    """A settings file for the `kind` workflow; its settings are checked now, so a bad value names the file."""
    path = Path(path)
    try:
        data = read_mapping(path, "settings file")
        header = SettingsHeader.model_validate(data)
    except MappingFileError as error:
        raise SettingsError(str(error)) from None
    except ValidationError as error:
        raise SettingsError(f"{path}: {describe(error, 'settings file')}") from None
    if header.kind is not None and header.kind != kind:
        raise SettingsError(f"{path}: holds {header.kind} settings (kind = {header.kind!r}): run them with "
                            f"`ragretrieval {COMMANDS[header.kind]} --config`")
    values = {k: v for k, v in data.items() if k not in SettingsHeader.model_fields}
    try:
        build_settings(WORKFLOWS[kind], values)
    except SettingsError as error:  # the file's fields are named as the file names them, not as flags
        raise SettingsError(f"{path}: {error}") from None
    located = {name: str(path.parent / value) if value and not Path(value).is_absolute() else value
               for name, value in (("dataset", header.dataset), ("questions", header.questions))}
    return RunSettings(kind, values=values, **located)


def run_settings(report) -> RunSettings:
    """The settings a stored run was made with (an `EvalReport` or `AnswerReport`)."""
    if report.kind == "answer":
        if report.settings is None:
            raise SettingsError("this answer run was stored before runs kept their settings (ragretrieval 0.3); "
                                "its configuration is shown by `ragretrieval runs show RUN`")
        values = dict(report.settings)
    else:
        values = report.config.model_dump(mode="json")
    dataset, questions = report.dataset.path, report.dataset.questions
    return RunSettings(report.kind, _absolute(dataset), _absolute(questions), values)


def _absolute(path: str | None) -> str | None:
    """A stored run's path, absolute, so that its settings file replays from any folder. Runs record absolute paths;
    one stored before did not, and its path is relative to the folder it ran in: the current folder is the best
    guess (the default runs history lives in that folder)."""
    return os.path.abspath(path) if path else path


def settings_text(settings: RunSettings, kind: str = "toml") -> str:
    """A settings file's text (TOML or YAML); unset values are left out (their defaults apply)."""
    head = {"settings_version": SETTINGS_VERSION, "kind": settings.kind, "dataset": settings.dataset,
            "questions": settings.questions}
    return dump_mapping({**head, **settings.values}, kind)
