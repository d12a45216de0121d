"""Reading and writing the web app's rows: question sets with their questions (question_sets.py), evaluations with
their per-question results (evaluations.py). The tables are in ``ragretrieval/runs/schema.py``."""

from ...errors import RagretrievalError


class NotFound(RagretrievalError, LookupError):
    """No question set, question or evaluation with that id."""


class Conflict(RagretrievalError):
    """A request the rows' state forbids (deleting a set in use, pausing a finished evaluation)."""


class Invalid(RagretrievalError, ValueError):
    """A request that names something that does not exist or cannot be used (an unknown corpus, an empty set)."""
