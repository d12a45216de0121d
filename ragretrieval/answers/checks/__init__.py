"""Deterministic answer checks. `rules.py` holds the RAG-IFEval conditions (include, exclude, cite, refuse, safe) and
their aggregates; every check is registered once in `CHECKS` under the condition name a question's ``expect`` uses."""

from .rules import (
    AGGREGATES,
    CHECKS,
    AnswerSample,
    CheckError,
    CheckSettings,
    aggregate,
    load_unsafe_words,
    question_score,
    run_checks,
)

__all__ = ["AGGREGATES", "CHECKS", "AnswerSample", "CheckError", "CheckSettings", "aggregate", "load_unsafe_words",
           "question_score", "run_checks"]
