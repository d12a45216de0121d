"""The runs history: every evaluation stored as a run, listed, shown, tagged, exported (see docs/runs.md).

The names below load on first use (PEP 562), so importing a module of this package (``runs.export``, which the
commands' options name) does not import SQLAlchemy: ``ragretrieval runs list --help`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what a type checker and an editor see
    from .history import RunHistory, RunHistoryError, RunNotFoundError, RunSummary, StoredRun, default_url
    from .identity import config_key, questions_fingerprint

_HOMES = {
    "RunHistory": "history",
    "RunHistoryError": "history",
    "RunNotFoundError": "history",
    "RunSummary": "history",
    "StoredRun": "history",
    "default_url": "history",
    "config_key": "identity",
    "questions_fingerprint": "identity",
}

__all__ = ["RunHistory", "RunHistoryError", "RunNotFoundError", "RunSummary", "StoredRun", "config_key", "default_url",
           "questions_fingerprint"]
assert sorted(__all__) == sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
