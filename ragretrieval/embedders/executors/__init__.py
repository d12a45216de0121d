"""Executors decide where corpus embedding runs; the embedding cache and scoring do not change.

An executor takes batches of texts and yields ``(batch index, vectors)`` as each batch finishes, in any order.
`embed_cached` writes every finished batch to the cache at once, so a job stopped halfway keeps what was done and
the next run embeds only the rest.

- ``local`` (`LocalExecutor`): in this process, one batch after another; the default.
- ``dask`` / ``dask://HOST:PORT`` (`DaskExecutor`, extra ``ragretrieval[dask]``): Dask distributed workers, a local
  cluster on 127.0.0.1 or an existing scheduler (what dask-kubernetes, dask-yarn and hosted Dask expose).
- ``dask-gpus`` / ``dask-gpus:0,1``: a local Dask cluster with one worker per GPU (every GPU this machine shows, or
  the ones listed), each pinned to its own through ``CUDA_VISIBLE_DEVICES``.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

import numpy as np

from ...errors import RagretrievalError
from ...work.stop import StopToken
from ..base import Embedder


class ExecutorError(RagretrievalError):
    """An executor that cannot be started or reached."""


class Executor(Protocol):
    name: str

    def embed_batches(self, embedder: Embedder, batches: Sequence[Sequence[str]],
                      stop: StopToken | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (batch index, vectors) as batches finish; stop starting batches when `stop` is requested."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Embeds in this process, batch after batch, in order."""

    name = "local"

    def embed_batches(self, embedder: Embedder, batches: Sequence[Sequence[str]],
                      stop: StopToken | None = None) -> Iterator[tuple[int, np.ndarray]]:
        for index, batch in enumerate(batches):
            if stop is not None:
                stop.check()
            yield index, embedder.embed(batch)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def make_executor(spec: str | None) -> Executor:
    """``local`` (or None), ``dask`` (a local cluster on 127.0.0.1), ``dask-gpus[:0,1]`` (one worker per GPU),
    ``dask://HOST:PORT`` or ``tcp://HOST:PORT``."""
    if spec in (None, "", "local"):
        return LocalExecutor()
    if spec == "dask-gpus" or spec.startswith("dask-gpus:"):
        from .dask_executor import DaskExecutor, local_gpus

        listed = spec.partition(":")[2]
        devices = [device.strip() for device in listed.split(",")] if listed else local_gpus()
        if not devices or not all(device.isdigit() for device in devices) or len(set(devices)) < len(devices):
            raise ExecutorError(f"{spec}: name distinct GPU numbers (dask-gpus:0,1), or run where a GPU is visible "
                                "for dask-gpus to find")
        return DaskExecutor(devices=devices)
    if spec == "dask" or spec.startswith(("dask://", "tcp://", "tls://")):
        from .dask_executor import DaskExecutor

        address = None if spec == "dask" else "tcp://" + spec.removeprefix("dask://") if spec.startswith("dask://") \
            else spec
        return DaskExecutor(address)
    raise ExecutorError(f"unknown executor {spec!r}; use local, dask, dask-gpus[:0,1] or dask://HOST:PORT")
