"""The reply schema the yes/no judges share (score5 has its own, beside it). The model must answer with one JSON
object, alone, in a Markdown fence or with chatter around it (`llm.replies.parse_object` finds it). Anything that
does not fit the schema, a rating other than yes/no or a score off the scale included, is `MalformedAnswer`: the
judge sends one repair request naming the problem, then records a failure. Nothing is clamped or guessed.

A schema gives `value` (the number stored as the metric), `rating` (what the judge said) and `reasoning`.
"""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator


class JudgeReply(BaseModel):
    """What every reply schema shares: the judge's reasons, written as ``reasoning`` or ``rationale``."""

    model_config = ConfigDict(extra="ignore")
    reasoning: str = Field(default="", validation_alias=AliasChoices("reasoning", "rationale"))


class YesNoReply(JudgeReply):
    """``{"rating": "yes" | "no", "rationale": "..."}``."""

    rating: str

    @field_validator("rating", mode="before")
    @classmethod
    def _yes_or_no(cls, value):
        word = value.strip().lower() if isinstance(value, str) else value
        if word not in ("yes", "no"):
            raise ValueError(f'rating must be "yes" or "no"; got {value!r}')
        return word

    @property
    def value(self) -> float:
        return 1.0 if self.rating == "yes" else 0.0


YES_NO_SHAPE = '{"rating": "yes" or "no", "rationale": "..."}'
