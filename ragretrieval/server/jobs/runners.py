"""The runners a worker has prepared, one per evaluation: prepared once (threads asking at the same time wait for
the first), shared by the worker's threads, and closed only when no thread is using them any more.

A runner is kept under the evaluation's id *and* the settings an endpoint correction may change (generator, base
URLs): after ``PATCH /api/v1/evaluations/{id}`` and a resume, a worker that still holds the old runner prepares a new
one instead of asking the old endpoint again."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

from ...work.stop import StopToken
from .engine import Engine, EvaluationSettings, QuestionRunner

log = logging.getLogger("ragretrieval.server.jobs")


def runner_key(evaluation: EvaluationSettings) -> tuple:
    return (evaluation.id, evaluation.generator, evaluation.base_url, evaluation.judge_model,
            evaluation.judge_base_url)


class Runners:
    def __init__(self, engine: Engine, stop: StopToken, keep: int = 4):
        self.engine, self.stop, self.keep = engine, stop, keep
        self._lock = threading.Lock()
        self._ready: dict[tuple, QuestionRunner] = {}  # by runner_key, in the order they were last used
        self._in_use: dict[int, int] = {}  # id(runner) -> threads using it
        self._retired: dict[int, QuestionRunner] = {}  # out of the cache, closed when no longer in use
        self._preparing: dict[tuple, threading.Lock] = {}

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
        key = runner_key(evaluation)
        with self._lock:
            runner = self._take(key)
            if runner is not None:
                return runner
            for stale in [k for k in self._ready if k[0] == evaluation.id]:  # its endpoint was corrected
                self._retire(stale)
            preparing = self._preparing.setdefault(key, threading.Lock())
        with preparing:
            with self._lock:
                runner = self._take(key)
                if runner is not None:
                    return runner
            try:
                runner = self.engine(evaluation, self.stop)
            finally:
                with self._lock:
                    self._preparing.pop(key, None)
            with self._lock:
                self._ready[key] = runner
                self._in_use[id(runner)] = 1
                while len(self._ready) > self.keep:
                    self._retire(next(iter(self._ready)))
            return runner

    def _take(self, key: tuple) -> QuestionRunner | None:
        runner = self._ready.pop(key, None)
        if runner is not None:
            self._ready[key] = runner  # most recently used last
            self._in_use[id(runner)] += 1
        return runner

    def retire(self, eval_id: str) -> None:
        """The evaluation is finished, failed, paused or deleted: close its runner once no thread uses it."""
        with self._lock:
            for key in [k for k in self._ready if k[0] == eval_id]:
                self._retire(key)

    def retire_all(self) -> None:
        with self._lock:
            for key in list(self._ready):
                self._retire(key)

    def _retire(self, key: tuple) -> None:
        runner = self._ready.pop(key, None)
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
