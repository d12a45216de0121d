"""Probe fingerprints: what tells a remote model's vectors apart when its name stays the same.

An API may serve another model behind the same name (a new version, a changed deployment). Before a remote embedder
embeds anything it embeds three fixed probe texts (one request) and looks them up here, in ``probes.sqlite`` beside
the embedding cache: vectors close to ones seen before for the same model, endpoint and settings (every probe's
cosine >= `SAME`) keep that fingerprint, so the cache keeps serving; vectors seen for the first time get a new
fingerprint, hence a new cache key, and a warning when that model had a different one before. Old and new vectors
never mix. Why a stored comparison rather than a hash of the vectors alone: servers on GPUs give vectors that differ
in the last bits from one request to the next, which would change a hash and waste the cache.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..io.storage import LOCK_WAIT, sqlite_errors

PROBE_TEXTS = ("ragretrieval probe: how do I cook rice?", "如何做红烧肉？先焯水，再炒糖色。", "The quick brown fox.")
SAME = 0.999  # min cosine of every probe to count as the same model (float noise is ~1e-6, another model < 0.99)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS probes (
    declared TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    vectors BLOB NOT NULL,
    dim INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    PRIMARY KEY (declared, fingerprint)
)
"""


def vectors_hash(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.round(vectors.astype(np.float64), 4).tobytes()).hexdigest()[:12]


def resolve_fingerprint(folder: Path, declared: str, vectors: np.ndarray) -> tuple[str, str | None]:
    """(fingerprint, warning or None) of the probe vectors a model declared as `declared` gave now."""
    vectors = np.asarray(vectors, dtype=np.float32)
    folder.mkdir(parents=True, exist_ok=True)
    with sqlite_errors(folder / "probes.sqlite", "probe fingerprints"):
        return _resolve(folder / "probes.sqlite", declared, vectors)


def _resolve(path: Path, declared: str, vectors: np.ndarray) -> tuple[str, str | None]:
    db = sqlite3.connect(path, timeout=LOCK_WAIT)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
        rows = db.execute("SELECT fingerprint, vectors, dim FROM probes WHERE declared = ? ORDER BY first_seen DESC",
                          [declared]).fetchall()
        closest = None
        for fingerprint, blob, dim in rows:
            seen = np.frombuffer(blob, dtype=np.float32).reshape(-1, dim)
            if seen.shape != vectors.shape:
                continue
            cosine = float(_cosines(seen, vectors).min())
            if cosine >= SAME:
                return fingerprint, None
            closest = cosine if closest is None else max(closest, cosine)
        fingerprint = vectors_hash(vectors)
        with db:
            db.execute("INSERT OR REPLACE INTO probes VALUES (?, ?, ?, ?, ?)",
                       [declared, fingerprint, vectors.tobytes(), vectors.shape[1],
                        datetime.now(timezone.utc).isoformat()])
    finally:
        db.close()
    if not rows:
        return fingerprint, None
    change = (f"its probe vectors have cosine {closest:.4f} to those seen before" if closest is not None
              else "its vectors now have another dimension")
    return fingerprint, (f"{declared}: {change}, so another model may be serving this name; its vectors get a new "
                         f"cache key (fingerprint {fingerprint}) and are never mixed with the old ones")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / np.where(norms > 0, norms, 1.0)
