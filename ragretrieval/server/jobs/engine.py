"""The one seam between the web app and the engine that answers and judges questions.

An *engine* is a function ``prepare(evaluation, stop) -> QuestionRunner``: it is called once per evaluation in each
worker process (load the dataset, build and index the retriever, make the generator and the judges; an error here
fails the evaluation with its message), and the runner's ``run(question) -> ItemResult`` is then called for each
question the worker claims, from several threads at once. ``run`` returns the fields stored in the question's result
row. A question the engine could not answer but the evaluation can go on without is a result with ``error`` set; an
exception means the evaluation cannot go on: it becomes FAILED with that message, the question goes back to the work
list, and a resume tries it again.

A runner may also have ``report(records, timings)``: given every question's ``answer_record`` in question order, the
run to store in the runs history (an `AnswerReport`). The worker that stores the last result calls it, in the same
transaction, so a completed evaluation has its run (``run_id``) or none was ever stored.

`load_engine` picks the engine: ``None`` is the built-in one (`answer_engine.AnswerEngine`: the answer session of
`ragretrieval answer`), ``"module:function"`` any other (``serve --engine``, ``worker --engine``, or
``$RAGRETRIEVAL_SERVE_ENGINE``).

The names of the seam are defined in contract.py and re-exported here, so an engine written for 0.2 keeps importing
them from this module; the built-in engine's own modules import contract.py, as this module imports them.
"""

from __future__ import annotations

import importlib

from ...errors import InputError
from ...work.environment import environment
from .answer_engine import AnswerEngine
from .contract import Engine, EngineError, EvaluationSettings, ItemResult, QuestionItem, QuestionResult, QuestionRunner

__all__ = ["ENGINE_VARIABLE", "Engine", "EngineError", "EvaluationSettings", "ItemResult", "QuestionItem",
           "QuestionResult", "QuestionRunner", "load_engine"]

ENGINE_VARIABLE = "RAGRETRIEVAL_SERVE_ENGINE"


class EngineSpecError(EngineError, InputError):
    """An engine name that loads nothing: the command must name another (exit 2)."""


def load_engine(spec: str | None = None, api_key_env: str = "OPENAI_API_KEY") -> Engine:
    """The engine named by `spec` (``module:function``), else by ``$RAGRETRIEVAL_SERVE_ENGINE``, else the built-in
    one, which reads model API keys from the environment variable `api_key_env`."""
    spec = spec or environment().serve_engine
    if spec is None:
        return AnswerEngine(api_key_env)
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise EngineSpecError(f"engine {spec!r} must be written module:function")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise EngineSpecError(f"cannot load engine {spec!r}: {error}") from None
    if not callable(found):
        raise EngineSpecError(f"engine {spec!r} is not callable")
    return found
