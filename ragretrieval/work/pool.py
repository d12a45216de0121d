"""`parallel_map`: run a function over items on a bounded thread pool and take results as they finish.

At most `workers` calls run at once and no more are queued, so a stop request or an error is acted on after the
calls already running, not after every queued one. On a stop request no new call starts; the running ones finish and
their results are still yielded (so a journal keeps them), then `Stopped` is raised. On an error in a call, the
calls still running finish (their work lands in a cache), their results are dropped, and the error is raised.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Callable, Iterable, Iterator, TypeVar

from .stop import StopToken

Item = TypeVar("Item")
Result = TypeVar("Result")


def parallel_map(function: Callable[[Item], Result], items: Iterable[Item], workers: int, *,
                 stop: StopToken | None = None, name: str = "ragretrieval") -> Iterator[tuple[int, Result]]:
    """Yield ``(index, function(item))`` in completion order."""
    pending = iter(enumerate(items))
    running: dict = {}
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=name)
    try:
        while True:
            while len(running) < max(1, workers) and not (stop is not None and stop.requested):
                try:
                    index, item = next(pending)
                except StopIteration:
                    break
                running[pool.submit(function, item)] = index
            if not running:
                if stop is not None:
                    stop.check()
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                yield index, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
