"""A content-addressed embedding cache in SQLite: (model identity, sha256 of the text) -> vector.

The folder is ``$RAGRETRIEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ragretrieval``, else ``~/.cache/ragretrieval``.
Each batch is committed as soon as it is embedded (WAL mode), so a run killed halfway keeps all finished batches,
and re-chunking or re-running embeds only texts the model has never seen.

The commits run in a thread of their own (`CacheWriter`) while the model embeds the next batch, so the model never
waits for the disk (on a GPU a commit per batch left the device idle between batches). A batch is finished when its
commit is done; the progress bar counts only those. A run killed with SIGKILL keeps every finished batch and loses
at most the batches still waiting for their commit (`WRITE_AHEAD` + 1), which the next run embeds again.
"""

from __future__ import annotations

import hashlib
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from ..io.storage import guarded
from ..work.progress import Progress, as_progress
from ..work.stop import StopToken
from .base import Embedder
from .settings import API_BATCH_SIZE

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_BATCH = 500  # bound on SQL parameters per query
# batches embedded but not yet handed to SQLite: one keeps the model busy while the last commits; more would only
# hold more vectors in memory and lose more to a SIGKILL
WRITE_AHEAD = 1


def default_cache_dir() -> Path:
    from ..work.environment import environment  # pydantic-settings: read when a cache opens, not on import

    return environment().cache_folder()


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """One connection, usable from any thread (a web worker indexes in one thread and embeds each question in
    another): every use holds the cache's lock."""

    @guarded("embedding cache")
    def __init__(self, folder=None):
        self.folder = Path(folder) if folder else default_cache_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / "embeddings.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    @guarded("embedding cache")
    def get(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        with self._lock:
            return self._get(model, keys)

    def _get(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found = {}
        for i in range(0, len(keys), _LOOKUP_BATCH):
            part = list(keys[i : i + _LOOKUP_BATCH])
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT text_sha256, vector FROM vectors WHERE model = ? AND text_sha256 IN ({marks})", [model, *part]
            )
            found.update((bytes(key), np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    @guarded("embedding cache")
    def put(self, model: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        rows = np.ascontiguousarray(vectors, dtype=np.float32)  # no copy when it already is (every embedder's)
        with self._lock, self._db:  # one transaction per batch
            self._db.executemany(  # SQLite reads each row's bytes in place (a memoryview): no copy per vector
                "INSERT OR REPLACE INTO vectors (model, text_sha256, vector) VALUES (?, ?, ?)",
                [(model, key, memoryview(row)) for key, row in zip(keys, rows)],
            )

    @guarded("embedding cache")
    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            return self._db.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", [model]).fetchone()[0]

    @guarded("embedding cache")
    def close(self) -> None:
        with self._lock:
            self._db.close()


class CacheWriter:
    """Commits batches to the cache in its own thread, in the order they were handed over; `put` waits only when
    `WRITE_AHEAD` batches already wait. A failed commit (a full disk) is raised by the next `put` or by `close`, and
    nothing after it is written. `committed` tells the caller how many texts are safely on disk since it last asked.
    """

    def __init__(self, cache: "EmbeddingCache", model: str):
        self.cache, self.model = cache, model
        self._waiting: queue.Queue = queue.Queue(maxsize=WRITE_AHEAD)
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="ragretrieval-cache-writer", daemon=True)
        self._thread.start()

    def _write(self) -> None:
        while (batch := self._waiting.get()) is not None:
            if self._error is not None:
                continue  # keep taking batches so that `put` never waits on a writer that stopped writing
            keys, vectors = batch
            try:
                self.cache.put(self.model, keys, vectors)
            except BaseException as error:  # handed to the caller's thread, which raises it
                self._error = error
            else:
                self._done.put(len(keys))

    def put(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        self._raise()
        self._waiting.put((keys, vectors))

    def committed(self) -> int:
        texts = 0
        while not self._done.empty():
            texts += self._done.get()
        return texts

    def close(self, raise_error: bool = True) -> None:
        """Wait for every batch handed over to be committed."""
        self._waiting.put(None)
        self._thread.join()
        if raise_error:
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error


def embed_cached(
    embedder: Embedder,
    texts: Sequence[str],
    cache: EmbeddingCache,
    batch_size: int = API_BATCH_SIZE,
    progress: Progress | None = None,
    description: str = "embedding",
    executor=None,
    stop: StopToken | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors for `texts` (one row each), embedding only texts not yet cached. Returns (vectors, number embedded).

    `executor` (embedders/executors) decides where batches are embedded; each embedded batch is committed to the
    cache by a `CacheWriter` while the next one embeds, and a `stop` request (checked between batches) or an error
    waits for those commits before it goes on, so it keeps every embedded batch. The progress counts committed texts.
    """
    progress = as_progress(progress)
    keys = [text_key(t) for t in texts]
    unique = dict.fromkeys(keys)
    vectors = cache.get(embedder.identity, list(unique))
    text_of = dict(zip(keys, texts))
    # similar lengths batch together: less padding, much faster transformer batches
    missing = sorted((k for k in unique if k not in vectors), key=lambda k: len(text_of[k]))
    if missing:
        from .executors import LocalExecutor

        batches = [missing[i : i + batch_size] for i in range(0, len(missing), batch_size)]
        texts_of_batches = [[text_of[k] for k in batch] for batch in batches]
        progress.stage(description, total=len(missing), unit="text")
        usage = getattr(embedder, "usage", None)  # an API's tokens and cost, shown on the bar

        def advance(texts: int) -> None:
            if texts:
                progress.advance(texts, usage.status() if usage is not None else None)

        writer = CacheWriter(cache, embedder.identity)
        try:
            for index, made in (executor or LocalExecutor()).embed_batches(embedder, texts_of_batches, stop=stop):
                batch = batches[index]
                writer.put(batch, made)
                vectors.update(zip(batch, made))  # rows of `made`, not copies
                advance(writer.committed())
        except BaseException:
            writer.close(raise_error=False)  # what was embedded is kept; the first error is the one to report
            raise
        writer.close()
        advance(writer.committed())
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.stack([vectors[k] for k in keys]).astype(np.float32, copy=False), len(missing)
