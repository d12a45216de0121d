"""`parallel_map`: run a function over items on a bounded thread pool and take results as they finish.

At most `workers` calls run at once and no more are queued, so a stop request or an error is acted on after the
calls already running, not after every queued one. On a stop request no new call starts; the running ones finish and
their results are still yielded (so a journal keeps them), then `Stopped` is raised. A call that raises `Stopped`
itself (``--max-cost`` reached: `BudgetReached`) is a stop request too: the calls already running were sent and
paid for, so their results are yielded before it is raised. On any other error in a call, the calls still running
finish (their work lands in a cache), their results are dropped, and the error is raised.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Callable, Iterable, Iterator, TypeVar

from .stop import Stopped, StopToken

Item = TypeVar("Item")
Result = TypeVar("Result")


# the web app's worker: questions answered at once (server/jobs/worker.py, ``ragretrieval worker --concurrency``);
# fewer than a command's four, as a worker runs beside the server on the same machine
WORKER_THREADS = 2


def parallel_map(function: Callable[[Item], Result], items: Iterable[Item], workers: int, *,
                 stop: StopToken | None = None, name: str = "ragretrieval") -> Iterator[tuple[int, Result]]:
    """Yield ``(index, function(item))`` in completion order."""
    pending = iter(enumerate(items))
    running: dict = {}
    stopped: Stopped | None = None  # the first call that stopped: raised once the running ones are yielded
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=name)
    try:
        while True:
            while (len(running) < max(1, workers) and stopped is None
                   and not (stop is not None and stop.requested)):
                try:
                    index, item = next(pending)
                except StopIteration:
                    break
                running[pool.submit(function, item)] = index
            if not running:
                if stopped is not None:
                    raise stopped
                if stop is not None:
                    stop.check()
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                try:
                    result = future.result()
                except Stopped as error:
                    stopped = stopped or error
                    continue
                yield index, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
