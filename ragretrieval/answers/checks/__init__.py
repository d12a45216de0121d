"""Deterministic answer checks. `rules.py` holds the RAG-IFEval conditions (include, exclude, cite, refuse, safe),
`legal.py` the legal benchmark's question types (fact_exact, evidence_set, conflict_gap); `registry.py` registers
every check once in `CHECKS`, under the condition name a question's ``expect`` uses (run means: answers/summary.py)."""

from .registry import CHECKS, check_expect, question_score, question_values, run_checks
from .rules import AGGREGATES, AnswerSample, CheckError, CheckSettings, load_unsafe_words

__all__ = ["AGGREGATES", "CHECKS", "AnswerSample", "CheckError", "CheckSettings", "check_expect",
           "load_unsafe_words", "question_score", "question_values", "run_checks"]
