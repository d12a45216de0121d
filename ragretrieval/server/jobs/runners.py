"""The runners a worker has prepared, one per evaluation: prepared once (threads asking at the same time wait for
the first), shared by the worker's threads, and closed only when no thread is using them any more."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

from ...work.stop import StopToken
from .engine import Engine, EvaluationSettings, QuestionRunner

log = logging.getLogger("ragretrieval.server.jobs")


class Runners:
    def __init__(self, engine: Engine, stop: StopToken, keep: int = 4):
        self.engine, self.stop, self.keep = engine, stop, keep
        self._lock = threading.Lock()
        self._ready: dict[str, QuestionRunner] = {}  # in the order they were last used
        self._in_use: dict[int, int] = {}  # id(runner) -> threads using it
        self._retired: dict[int, QuestionRunner] = {}  # out of the cache, closed when no longer in use
        self._preparing: dict[str, threading.Lock] = {}

    @contextmanager
    def use(self, evaluation: EvaluationSettings):
        """The evaluation's runner, prepared if needed (the engine's error propagates), for the block's duration."""
        runner = self._get(evaluation)
        try:
            yield runner
        finally:
            with self._lock:
                self._in_use[id(runner)] -= 1
                self._close_idle()

    def _get(self, evaluation: EvaluationSettings) -> QuestionRunner:
        with self._lock:
            runner = self._take(evaluation.id)
            if runner is not None:
                return runner
            preparing = self._preparing.setdefault(evaluation.id, threading.Lock())
        with preparing:
            with self._lock:
                runner = self._take(evaluation.id)
                if runner is not None:
                    return runner
            try:
                runner = self.engine(evaluation, self.stop)
            finally:
                with self._lock:
                    self._preparing.pop(evaluation.id, None)
            with self._lock:
                self._ready[evaluation.id] = runner
                self._in_use[id(runner)] = 1
                while len(self._ready) > self.keep:
                    self._retire(next(iter(self._ready)))
            return runner

    def _take(self, eval_id: str) -> QuestionRunner | None:
        runner = self._ready.pop(eval_id, None)
        if runner is not None:
            self._ready[eval_id] = runner  # most recently used last
            self._in_use[id(runner)] += 1
        return runner

    def retire(self, eval_id: str) -> None:
        """The evaluation is finished, failed, paused or deleted: close its runner once no thread uses it."""
        with self._lock:
            self._retire(eval_id)

    def retire_all(self) -> None:
        with self._lock:
            for eval_id in list(self._ready):
                self._retire(eval_id)

    def _retire(self, eval_id: str) -> None:
        runner = self._ready.pop(eval_id, None)
        if runner is not None:
            self._retired[id(runner)] = runner
        self._close_idle()

    def _close_idle(self) -> None:
        for key in [k for k in self._retired if self._in_use.get(k, 0) == 0]:
            runner = self._retired.pop(key)
            self._in_use.pop(key, None)
            try:
                runner.close()
            except Exception:
                log.exception("closing a runner failed")
