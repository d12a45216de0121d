"""A local cache of model answers in SQLite: sha256 of the full request -> answer text and token usage.

The key covers the model, the messages and every sampling parameter, never the endpoint's credentials, so an identical
request is answered from disk and never paid twice. Each answer is committed as it arrives (WAL mode), so a run that
is killed keeps everything it already paid for. The file lives beside the embedding cache (``llm.sqlite``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from ..embedders.cache import default_cache_dir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    request_sha256 TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
) WITHOUT ROWID
"""


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


def request_key(request: dict) -> str:
    """sha256 of the request as canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(request, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerCache:
    """Thread-safe: requests run concurrently, so one connection is shared under a lock."""

    def __init__(self, folder=None):
        folder = Path(folder) if folder else default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "llm.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get(self, key: str) -> Answer | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM answers WHERE request_sha256 = ?", (key,)
            ).fetchone()
        return Answer(row[0], row[1], row[2], cached=True) if row else None

    def put(self, key: str, model: str, answer: Answer) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                (key, model, answer.text, answer.prompt_tokens, answer.completion_tokens),
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
