"""The runs history: every evaluation stored as a run, listed, shown, tagged, exported (see docs/runs.md)."""

from .history import RunHistory, RunHistoryError, RunNotFoundError, RunSummary, StoredRun, default_url
from .identity import config_key, questions_fingerprint

__all__ = [
    "RunHistory",
    "RunHistoryError",
    "RunNotFoundError",
    "RunSummary",
    "StoredRun",
    "config_key",
    "default_url",
    "questions_fingerprint",
]
