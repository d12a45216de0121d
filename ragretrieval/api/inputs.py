"""What the Python face takes: a dataset (a `Dataset` or its folder), questions (a questions.jsonl file, or a pandas
DataFrame / list of dicts in the agent-evaluation shape), and settings (keyword arguments, ``config=`` as a model, a
dict or a settings file), each read into what the pipeline takes.

A DataFrame's rows are the agent-evaluation records of seed 004's schema: ``request`` (a string, ``{"messages"}``
or ``{"query", "history"}``), ``expected_retrieved_context`` (``[{doc_uri, content}]``: the relevance labels),
``expected_response`` (the reference answer), and optionally ``request_id``, ``response`` (an answer already
produced) and ``retrieved_context`` (what a retriever already found). Given answers and contexts are scored as they
are, without calling a model or a retriever.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel

from ..data.dataset import Dataset, DatasetError, load_dataset
from ..data.importers.agent_jsonl import AgentRecord, agent_records, questions_from_records
from ..work.options import SettingsError, merged

QUESTIONS = "questions"  # how a DataFrame's rows are named in messages and in a run's configuration


def as_dataset(dataset, questions=None) -> tuple[Dataset, list[tuple[str, AgentRecord]] | None]:
    """The dataset with its questions, and the agent records when the questions came as a DataFrame or list."""
    if isinstance(questions, (str, Path)):
        return load_dataset(dataset, questions) if not isinstance(dataset, Dataset) else \
            load_dataset(dataset.path, questions), None
    loaded = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if questions is None:
        return loaded, None
    records = agent_records(questions, QUESTIONS)
    found = questions_from_records(records, loaded.documents, QUESTIONS, "DataFrame")
    return replace(loaded, questions=tuple(found), questions_path=None), records


def given(records, column: str) -> bool:
    """Whether the rows give `column` (``response``, ``retrieved_context``): all of them, or none; some is refused."""
    if not records:
        return False
    have = sum(getattr(record, column, None) is not None for _, record in records)
    if 0 < have < len(records):
        raise DatasetError(f"{QUESTIONS}: {column} is given for {have} of {len(records)} rows: give it for every "
                           "row (scored as given) or for none")
    return have == len(records)


def label(records, column: str) -> str:
    """A name for the rows' given `column` that changes when its content does (recorded in the configuration)."""
    content = [getattr(record, column, None) for _, record in records]
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=lambda v: v.model_dump())
    return f"{QUESTIONS}@sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]}"


def settings_values(config, model: type[BaseModel]) -> dict:
    """``config=``: a settings model, a dict of its fields, or a settings file (TOML/YAML; its dataset is not
    used); None: no values."""
    if config is None:
        return {}
    if isinstance(config, model):
        return config.model_dump(exclude_unset=True)
    if isinstance(config, dict):
        return dict(config)
    if isinstance(config, (str, Path)):
        from ..runs.settings_file import read_settings_file

        kind = next(kind for kind, workflow in _workflows().items() if workflow is model)
        return read_settings_file(config, kind).values
    raise SettingsError(f"config must be a {model.__name__}, a dict or a settings file; got {type(config).__name__}",
                        ["config"])


def _workflows() -> dict:
    from ..runs.settings_file import WORKFLOWS

    return WORKFLOWS


def refuse_with_given(settings: dict, names, column: str) -> None:
    asked = sorted(set(settings) & set(names))
    if asked:
        raise SettingsError(f"{asked[0]} is given while the questions bring their own {column}, which is scored "
                            f"as given; leave {asked[0]} out, or drop the {column} column", [asked[0]])


def values(config, model, settings: dict) -> dict:
    return merged(settings_values(config, model), settings)


def with_settings_signature(function, *models: type[BaseModel], only: tuple[str, ...] | None = None):
    """Give `function` (which takes ``**settings``) a signature listing every settings field with its default (or
    the fields in `only`), so ``help(rr.evaluate)`` and `inspect.signature` show the model's defaults (they are not
    declared twice)."""
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = {p.name for p in parameters}
    for model in models:
        for name, field in model.model_fields.items():
            if name not in names and (only is None or name in only):
                names.add(name)
                default = field.get_default(call_default_factory=True)
                parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                                    annotation=field.annotation))
    function.__signature__ = signature.replace(parameters=parameters)
    return function
