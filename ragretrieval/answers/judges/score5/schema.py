"""score5's reply: ``{"score": 1-5, "reasoning": "..."}``. A score is a whole number from 1 to 5; 0, 6, 4.5, true or
"four" are off the scale, so the reply is malformed (one repair request, then a failure), never clamped."""

from __future__ import annotations

import math

from pydantic import field_validator

from ..schema import JudgeReply

SCALE = (1, 5)
SHAPE = '{"score": an integer from 1 to 5, "reasoning": "..."}'


class Score5Reply(JudgeReply):
    score: int

    @field_validator("score", mode="before")
    @classmethod
    def _on_the_scale(cls, value):
        number = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        whole = (isinstance(number, (int, float)) and not isinstance(number, bool) and math.isfinite(number)
                 and number == int(number))
        if not whole or not SCALE[0] <= number <= SCALE[1]:
            raise ValueError(f"score must be a whole number from {SCALE[0]} to {SCALE[1]}; got {value!r}")
        return int(number)

    @property
    def value(self) -> float:
        return float(self.score)

    @property
    def rating(self) -> int:
        return self.score
