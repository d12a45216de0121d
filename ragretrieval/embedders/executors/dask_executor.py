"""`DaskExecutor`: corpus embedding on Dask distributed workers.

The embedder is scattered to every worker once, and each worker keeps the first copy it sees per embedder identity
(`_LOADED`), so a model loads once per worker process, not once per batch. At most `window` batches are in flight;
results stream back with `as_completed` and go straight into the caller's cache. Stopping the loop (an error, Ctrl-C,
a killed client) cancels the batches not yet done. Without an address a `LocalCluster` bound to 127.0.0.1 starts (and
stops) with the executor; with one, the executor only connects.

With `devices` (``dask-gpus`` / ``dask-gpus:0,1``) the local cluster has one single-threaded worker per GPU, each
started with ``CUDA_VISIBLE_DEVICES`` set to its own device, so a model on ``cuda`` in that worker runs on that GPU and
no two workers share one. A cluster of several machines does the same per machine (``dask worker`` started with
``CUDA_VISIBLE_DEVICES=N``, or dask-cuda's ``dask cuda worker``); the executor then only connects (docs/embedders.md).
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

import numpy as np

from ...work.remote import RemoteCall
from ...work.stop import StopToken
from ..base import Embedder
from . import ExecutorError

# connecting to a scheduler: 30 s; a batch whose worker died is sent once more (Dask waits for no backoff); at most
# four local workers, each loading its own copy of the model
DASK_CALLS = RemoteCall(timeout=30.0, retries=1, backoff=0.0, concurrency=4)
_LOADED: dict[str, Embedder] = {}  # on each worker: identity -> the embedder that worker uses (and has loaded)


def embed_on_worker(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return _LOADED.setdefault(embedder.identity, embedder).embed(texts)


def loaded_identities() -> list[str]:
    """What this worker holds; ``client.run(loaded_identities)`` shows that each worker loaded a model once."""
    return sorted(_LOADED)


def visible_device() -> str | None:
    """This worker's ``CUDA_VISIBLE_DEVICES``; ``client.run(visible_device)`` shows each worker's pinning."""
    return os.environ.get("CUDA_VISIBLE_DEVICES")


def local_gpus() -> list[str]:
    """The GPUs this machine shows: ``CUDA_VISIBLE_DEVICES`` when set, else every device torch counts."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [device.strip() for device in visible.split(",") if device.strip() and device.strip() != "-1"]
    try:
        import torch
    except ImportError:
        return []
    return [str(index) for index in range(torch.cuda.device_count())]


def pinned_cluster(devices: Sequence[str]):
    """A local cluster on 127.0.0.1 with one single-threaded worker process per device, each seeing only its own."""
    from distributed import Nanny, Scheduler, SpecCluster

    workers = {f"gpu-{device}": {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": device}}}
               for device in devices}
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    return SpecCluster(workers=workers, scheduler=scheduler)


class DaskExecutor:
    name = "dask"

    def __init__(self, address: str | None = None, n_workers: int | None = None, processes: bool = True,
                 threads_per_worker: int = 1, window: int | None = None, timeout: float | None = None,
                 devices: Sequence[str] | None = None, calls: RemoteCall = DASK_CALLS):
        """`calls`: the connection's timeout, a batch's retries, the local workers at most (`timeout` replaces
        the first); `devices`: one local GPU worker per device."""
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ExecutorError("the dask executor needs Dask distributed: pip install 'ragretrieval[dask]'") from None
        self.calls = calls if timeout is None else calls.but(timeout=timeout)
        self.address, self.processes, self.timeout = address, processes, self.calls.timeout
        self.n_workers = n_workers or max(1, min(self.calls.concurrency, os.cpu_count() or 1))
        self.threads_per_worker, self.window = threads_per_worker, window
        self.devices = [str(device) for device in devices] if devices is not None else None
        if self.devices is not None and (not self.devices or address):
            raise ExecutorError("GPU workers start a local cluster: give at least one device and no address")
        self._cluster = self._client = None

    @property
    def client(self):
        if self._client is None:
            from distributed import Client, LocalCluster

            try:
                if self.address:
                    self._client = Client(self.address, timeout=self.timeout)
                elif self.devices is not None:
                    self._cluster = pinned_cluster(self.devices)
                    self._client = Client(self._cluster)
                else:
                    self._cluster = LocalCluster(host="127.0.0.1", dashboard_address=None, processes=self.processes,
                                                 n_workers=self.n_workers, threads_per_worker=self.threads_per_worker)
                    self._client = Client(self._cluster)
            except (OSError, TimeoutError) as error:
                where = self.address or "a local cluster on 127.0.0.1"
                raise ExecutorError(f"cannot reach the Dask scheduler at {where}: {error}") from None
        return self._client

    def embed_batches(self, embedder: Embedder, batches: Sequence[Sequence[str]],
                      stop: StopToken | None = None) -> Iterator[tuple[int, np.ndarray]]:
        from distributed import as_completed

        if not batches:
            return
        client = self.client
        threads = sum(client.nthreads().values()) or 1
        window = self.window or 2 * threads
        [shipped] = client.scatter([embedder], broadcast=True, hash=False)
        pending, live = iter(enumerate(batches)), {}  # live: future key -> (batch index, future)

        def submit(count: int) -> list:
            futures = []
            for index, batch in (item for _, item in zip(range(count), pending)):
                future = client.submit(embed_on_worker, shipped, list(batch), pure=False, retries=self.calls.retries)
                live[future.key] = index, future
                futures.append(future)
            return futures

        flow = as_completed(submit(window), loop=client.loop)
        try:
            for future in flow:
                vectors = future.result()
                if stop is None or not stop.requested:
                    flow.update(submit(1))
                index, _ = live.pop(future.key)
                yield index, vectors
            if stop is not None:
                stop.check()
        finally:  # stopped early: the workers stop too
            client.cancel([future for _, future in live.values()] + [shipped])

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
