"""A worker: threads that claim questions, answer them through the engine and store the results, plus one thread
that keeps the heartbeat of its claims. It runs inside `ragretrieval serve` by default; `ragretrieval worker` runs
one on its own, on this machine or another, against the same database.

Each worker prepares an evaluation once (the engine's ``prepare``) and keeps the runner while it has questions of
that evaluation; a runner whose evaluation finished, failed or was paused is closed. Stopping (Ctrl-C, SIGTERM, the
server shutting down) lets the questions in hand finish for a while, then gives the others back at once, so a
restarted worker does not wait for their heartbeats to go stale.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading

from ...errors import RagretrievalError
from ...io.redact import redact_urls
from ...work.stop import Stopped, StopToken
from ..db import Database
from ..settings import WorkerSettings
from . import claims
from .engine import Engine, EvaluationSettings
from .runners import Runners
from .stored_run import store_run

log = logging.getLogger("ragretrieval.server.jobs")


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(2)}"


class Worker:
    def __init__(self, db: Database, engine: Engine, settings: WorkerSettings = WorkerSettings(), locate=None,
                 name: str | None = None):
        self.db, self.engine, self.settings = db, engine, settings
        self.locate = locate or (lambda dataset: None)
        self.id = name or worker_id()
        self.stop_token = StopToken()
        self.runners = Runners(engine, self.stop_token, settings.keep_runners)
        self._threads: list[threading.Thread] = []

    # ---------------------------------------------------------------------------------------------------- lifecycle
    def start(self) -> None:
        for number in range(self.settings.threads):
            self._spawn(self._work, f"ragretrieval-worker-{number}")
        self._spawn(self._beat, "ragretrieval-heartbeat")
        log.info("worker %s started (%d threads) on %s", self.id, self.settings.threads, self.db.url)

    def _spawn(self, target, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        """Stop taking questions; wait `stop_grace` seconds for those in hand, then give back what is left."""
        self.stop_token.request("the worker is stopping")
        for thread in self._threads:
            thread.join(self.settings.stop_grace)
        try:
            given_back = claims.release(self.db, self.id)
            if given_back:
                log.info("worker %s gave back %d unfinished question(s)", self.id, given_back)
        except Exception:  # the database may be gone; the claims then go stale and are taken over
            log.exception("worker %s could not give back its questions", self.id)
        self.runners.retire_all()

    def run_forever(self) -> None:
        """Start, and run until `stop_token` is requested (a signal handler does that), then stop."""
        self.start()
        while not self.stop_token.wait(3600):
            pass
        self.stop()

    # --------------------------------------------------------------------------------------------------------- work
    def _work(self) -> None:
        while not self.stop_token.requested:
            try:
                claim = claims.claim(self.db, self.id, self.settings.stale_after, self.locate)
            except Exception:
                log.exception("worker %s could not look for work", self.id)
                claim = None
            if claim is None:
                self.stop_token.wait(self.settings.poll_interval)
                continue
            try:
                self.answer(claim)
            except Exception:  # the database failed while storing: the claim goes stale and is taken over
                log.exception("worker %s: question %s of %s", self.id, claim.question.question_id,
                              claim.evaluation.id)

    def answer(self, claim: claims.Claim) -> None:
        """Answer one claimed question and store its result; an engine error fails the evaluation."""
        evaluation, question = claim.evaluation, claim.question
        where = "cannot start"
        try:
            with self.runners.use(evaluation) as runner:
                where = f"question {question.position + 1} ({question.question_id})"
                result = runner.run(question)
                where = None  # answered: what fails from here is the database, not the engine
                status = claims.finish(self.db, claim, self.id, result, self._completion(evaluation, runner))
        except Stopped:  # the worker is stopping: the question goes back to the list, the evaluation goes on
            claims.release(self.db, self.id, claim.result_id)
            return
        except Exception as error:
            if where is None:
                raise
            claims.release(self.db, self.id, claim.result_id)
            claims.fail(self.db, evaluation.id, f"{where}: {describe(error)}")
            log.warning("evaluation %s failed: %s: %s", evaluation.id, where, describe(error))
            self.runners.retire(evaluation.id)
            return
        if status == "FAILED":
            log.warning("evaluation %s failed: most of its questions got no answer", evaluation.id)
        if status is None:
            log.info("worker %s: question %s of %s was taken over or deleted; its answer is dropped", self.id,
                     question.question_id, evaluation.id)
        if status != "RUNNING" and not claims.is_open(self.db, evaluation.id):
            self.runners.retire(evaluation.id)

    def _completion(self, evaluation: EvaluationSettings, runner):
        """What the transaction that completes the evaluation also does: store its answer run, when the engine
        makes one (a savepoint, so a run that cannot be stored leaves the evaluation COMPLETED with the reason)."""
        if not hasattr(runner, "report"):
            return None

        def complete(conn) -> dict:
            try:
                with conn.begin_nested():
                    return {"run_id": store_run(conn, self.db.history, evaluation, runner)}
            except Exception as error:
                log.exception("evaluation %s: storing its run failed", evaluation.id)
                return {"error": f"every question is answered, but the run could not be stored in the runs "
                                 f"history: {describe(error)}"}

        return complete

    def _beat(self) -> None:
        while not self.stop_token.wait(self.settings.heartbeat_interval):
            try:
                claims.heartbeat(self.db, self.id)
            except Exception:
                log.exception("worker %s: heartbeat failed", self.id)


def describe(error: BaseException) -> str:
    """An error as the evaluation and the log show it: our own errors by their message, others with their type; any
    URL in it without credentials (io/redact.py)."""
    text = redact_urls(str(error) or type(error).__name__)
    return text if isinstance(error, RagretrievalError) else f"{type(error).__name__}: {text}"
