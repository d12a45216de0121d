"""The documents an answer cites, by their 0-based position in the context it was given.

The default syntax is RAG-IFEval's: numbers in square brackets, ``[0]``, ``[0, 2]`` or ``[0][2]``. Malformed lists
(``[1,]``, ``[ 1 , , 2 ]``) are read for the numbers they hold; an empty ``[]`` cites nothing. The benchmark's own
evaluator stops with an error on such answers; reading them is our choice, documented in docs/answers/generate.md. A
bracket may also hold a document id of the context (``[soup/番茄蛋汤.md]``), which cites that document's position.
A custom `pattern` is a regular expression whose first group holds one citation or a comma-separated list.
"""

from __future__ import annotations

import re
from typing import Sequence

NUMBERS_IN_BRACKETS = re.compile(r"\[([\d\s,]+)\]")
ANY_BRACKETS = re.compile(r"\[([^\[\]]{1,300})\]")


def cited_positions(answer: str, context_ids: Sequence[str] = (), pattern: str | None = None) -> set[int]:
    """Positions cited in `answer`; ids of `context_ids` in brackets count as their positions."""
    position_of = {doc_id: i for i, doc_id in enumerate(context_ids)}
    found: set[int] = set()
    for match in re.finditer(pattern or ANY_BRACKETS, answer):
        inside = match.group(1)
        if inside.strip() in position_of:
            found.add(position_of[inside.strip()])
            continue
        if pattern is None and not NUMBERS_IN_BRACKETS.fullmatch(f"[{inside}]"):
            continue  # prose in brackets, not a citation
        for part in inside.split(","):
            part = part.strip()
            if part.isdigit():
                found.add(int(part))
            elif part in position_of:
                found.add(position_of[part])
    return found


def precision_recall_f1(expected: set, cited: set) -> dict[str, float]:
    """RAG-IFEval's cite score: precision over cited, recall over expected, F1; 0 when either side is empty."""
    hits = len(expected & cited)
    precision = hits / len(cited) if cited else 0.0
    recall = hits / len(expected) if expected else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}
