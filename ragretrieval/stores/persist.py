"""An index folder (``eval --index-dir DIR``): a saved store reused across runs while what it indexed is unchanged.

The fingerprint covers every chunk (id, parent id, text) and the embedder identity, so a store built from another
corpus, chunking or model is refused; so is one saved by another store or with other options. ``--rebuild``
replaces it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from .base import META_FILE, Records, StoreError, VectorStore, check_fingerprint, read_meta


def index_fingerprint(ids: Sequence[str], parent_ids: Sequence[str], texts: Sequence[str], model: str) -> str:
    digest = hashlib.sha256(f"model\0{model}\0".encode("utf-8"))
    for chunk_id, parent_id, text in zip(ids, parent_ids, texts):
        digest.update(f"{chunk_id}\0{parent_id}\0{len(text)}\0{text}\0".encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def load_index(folder, name: str, options: dict, fingerprint: str) -> VectorStore | None:
    """The store saved in `folder`, or None when nothing is saved there; StoreError when it indexes something else."""
    from . import store_class

    folder = Path(folder)
    if not (folder / META_FILE).is_file():
        return None
    saved = read_meta(folder)
    if saved.store != name:
        raise StoreError(f"{folder}: holds an index of store {saved.store!r}, not {name!r}; "
                         "pick another --index-dir or rebuild it (--rebuild)")
    changed = sorted(key for key, value in options.items()
                     if key != "path" and saved.options.get(key) != value)  # path: where, not what
    if changed:
        raise StoreError(f"{folder}: index was saved with other store options ({', '.join(changed)}); "
                         "rebuild it (--rebuild)")
    check_fingerprint(Records(fingerprint=saved.fingerprint), fingerprint, folder)  # before opening an engine
    return store_class(name).load(folder)


def save_index(store: VectorStore, folder, fingerprint: str) -> None:
    store.records.fingerprint = fingerprint
    store.save(folder)
