"""A local cache of model answers in SQLite: sha256 of the full request -> answer text, token usage and latency.

The key covers the endpoint (its public URL: no credentials, no query string), the model, the messages and every
setting that changes the answer (temperature, max_tokens, the sample number of repeated samples), never the key, so
an identical request to the same endpoint is answered from disk and never paid twice, and the same request to another
endpoint is asked there. An answer that failed to parse or validate is marked invalid (`reject`): it stays for the
log but is never served again, so a re-run asks once more. Each answer is committed as it arrives (WAL mode), so a run
that is killed keeps everything it already paid for. The file lives beside the embedding cache (``llm.sqlite``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from ..embedders.cache import default_cache_dir
from ..io.storage import LOCK_WAIT, guarded

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    request_sha256 TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
) WITHOUT ROWID
"""
# added after 0.1: a cache written by 0.1 gets them on first use (its keys never match 0.2 keys anyway)
_COLUMNS = {"valid": "INTEGER NOT NULL DEFAULT 1", "rejected_because": "TEXT", "latency": "REAL NOT NULL DEFAULT 0"}


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    latency: float = 0.0  # seconds the endpoint took (for a cached answer: when it was asked)
    key: str = ""  # the cache key, to `reject` the answer if it does not parse

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def request_key(request: dict) -> str:
    """sha256 of the request as canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(request, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerCache:
    """Thread-safe: requests run concurrently, so one connection is shared under a lock."""

    @guarded("LLM answer cache")
    def __init__(self, folder=None):
        folder = Path(folder) if folder else default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "llm.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=LOCK_WAIT)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        for name, declaration in _COLUMNS.items():
            if name not in present:
                try:
                    self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} {declaration}")
                except sqlite3.OperationalError as error:  # another process added it first
                    if "duplicate column" not in str(error):
                        raise
        self._db.commit()

    @guarded("LLM answer cache")
    def get(self, key: str) -> Answer | None:
        """The valid answer stored for `key`, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, latency FROM answers "
                "WHERE request_sha256 = ? AND valid = 1", (key,)
            ).fetchone()
        return Answer(row[0], row[1], row[2], cached=True, latency=row[3], key=key) if row else None

    @guarded("LLM answer cache")
    def put(self, key: str, model: str, answer: Answer) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (request_sha256, model, text, prompt_tokens, completion_tokens, "
                "valid, rejected_because, latency) VALUES (?, ?, ?, ?, ?, 1, NULL, ?)",
                (key, model, answer.text, answer.prompt_tokens, answer.completion_tokens, answer.latency),
            )
            self._db.commit()

    @guarded("LLM answer cache")
    def reject(self, key: str, reason: str) -> None:
        """Never serve this answer again (it did not parse or validate); the text stays for the log."""
        with self._lock:
            self._db.execute("UPDATE answers SET valid = 0, rejected_because = ? WHERE request_sha256 = ?",
                             (reason[:500], key))
            self._db.commit()

    @guarded("LLM answer cache")
    def close(self) -> None:
        with self._lock:
            self._db.close()
