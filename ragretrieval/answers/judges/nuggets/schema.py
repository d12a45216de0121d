"""The nuggets judge's reply: ``{"verdicts": ["support", "partial_support", "not_support", ...], "reasoning": "..."}``,
one verdict per nugget of the request, in the nuggets' order (a bare JSON list of verdicts is read too). A verdict
outside the three, or a list of another length than the nuggets asked about, is malformed: one repair request, then
a failure, never a guess. ``partial support`` and ``Partial-Support`` read as ``partial_support``."""

from __future__ import annotations

from pydantic import ValidationError, field_validator

from ....io.jsonfiles import describe
from ....llm.replies import MalformedAnswer, extract_json, parse_object
from ..schema import JudgeReply

VERDICTS = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}  # a verdict's credit in the partial scores
SHAPE = ('{"verdicts": ["support" or "partial_support" or "not_support", one per nugget in their order], '
         '"reasoning": "..."}')


class NuggetVerdictsReply(JudgeReply):
    verdicts: list[str]

    @field_validator("verdicts", mode="before")
    @classmethod
    def _known(cls, values):
        if not isinstance(values, list):
            raise ValueError("verdicts must be a list, one verdict per nugget")
        read = []
        for position, value in enumerate(values, start=1):
            word = value.strip().lower().replace(" ", "_").replace("-", "_") if isinstance(value, str) else value
            if word not in VERDICTS:
                raise ValueError(f"verdict {position} must be support, partial_support or not_support; got {value!r}")
            read.append(word)
        return read


def parse_verdicts(text: str, expected: int) -> NuggetVerdictsReply:
    """The reply to a request about `expected` nuggets; `MalformedAnswer` when it is not that."""
    data = extract_json(text)
    if isinstance(data, list) and data and all(isinstance(item, str) for item in data):
        try:
            reply = NuggetVerdictsReply.model_validate({"verdicts": data})
        except ValidationError as error:
            raise MalformedAnswer(describe(error, "answer")) from None
    else:
        reply = parse_object(NuggetVerdictsReply, text, SHAPE)
    if len(reply.verdicts) != expected:
        raise MalformedAnswer(f"expected {expected} verdicts, one per nugget, in order; got {len(reply.verdicts)}")
    return reply
