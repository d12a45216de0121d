"""The legal benchmark's question spec (seed 000's schema), checked field by field before any answer is scored, so
that a value the formulas cannot read is refused when the benchmark is imported (naming file, question and field)
instead of a traceback in ``answer`` or a question that scores 0 whatever the answer says.

What is checked is what the formulas read (legal.py), with the types the benchmark's schema gives:

- ``expected`` of a ``fact_exact`` question: at least one of ``amount_total`` (a number >= 0), ``amount_breakdown``
  (a non-empty list of numbers >= 0 or objects with ``amount``), ``date`` (``YYYY-MM-DD``, a real date),
  ``date_range`` (``{start, end}``, both dates, start not after end), ``count`` (a whole number >= 0),
  ``boolean_answer`` (true or false), ``text_answer`` and ``entity`` (text with a letter or digit); nothing else.
  ``evidence_count_min`` (a whole number >= 0) and ``key_points`` (a list of text) of an ``evidence_set`` question.
- ``required_evidence``: objects whose ``must_include`` is text with a letter or digit; ``is_critical`` true or
  false, ``page`` a whole number. An ``evidence_set`` question needs one (its recall and precision count them), and
  so does a question whose ``scoring.citation_required`` is true.
- ``scoring``: ``evidence_precision_min`` between 0 and 1; ``evidence_recall_min`` either a share (a JSON number
  with a decimal point, 0 to 1: the benchmark's first version) or a count (a JSON integer >= 1: its later version
  writes how many of the key points recall counts must be found, no more than there are); the flags true or false.
- ``conflict_gap``: ``should_abstain`` (true or false) is required, and a ``required_quote`` or an
  ``additional_quotes`` entry (the 0.2 the formula gives for a quote could never be earned without one).

Numbers are JSON numbers, never text (``"42000"`` is refused: the benchmark's schema says number). Null is refused
wherever a value is expected, except ``required_quote``, which the benchmark writes as null when there is none.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, ValidationError, model_validator

from ...data.evidence import OCR_MARKUP, fold
from .rules import CheckError, shown

_STRICT = ConfigDict(strict=True, extra="allow")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _searchable(value: str) -> str:
    if not fold(value, OCR_MARKUP)[0]:
        raise ValueError("has no letter or digit to look for (it would never be found)")
    return value


def _iso_date(value: str) -> str:
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError
        date.fromisoformat(value)
    except ValueError:
        raise ValueError("must be a date written YYYY-MM-DD (answers are read as such dates)") from None
    return value


def _recall_min(value):
    """A count (JSON ``4``) or a share (JSON ``0.8``, ``1.0``): the file's own number type tells them apart, which
    ``json.loads`` keeps (an integer stays int, a number with a decimal point is a float)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, float) and 0 <= value <= 1:
        return value
    raise ValueError("must be a count of key points (a whole number >= 1, e.g. 4) or a share (a number with a "
                     "decimal point from 0 to 1, e.g. 0.8)")


def recall_points(required_evidence: list[dict]) -> list[str]:
    """The ``must_include`` strings recall counts, distinct and in order: the critical ones, or every one when none is
    marked critical."""
    items = [e for e in required_evidence if isinstance(e.get("must_include"), str) and e["must_include"]]
    critical = [e for e in items if e.get("is_critical")]
    return list(dict.fromkeys(e["must_include"] for e in critical or items))


Amount = Annotated[float, Field(ge=0), AfterValidator(_finite)]
Whole = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]
Phrase = Annotated[str, AfterValidator(_searchable)]
IsoDate = Annotated[str, AfterValidator(_iso_date)]


class DateRange(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    start: IsoDate
    end: IsoDate

    @model_validator(mode="after")
    def _ordered(self):
        if self.start > self.end:
            raise ValueError(f"start {self.start} is after end {self.end}")
        return self


class BreakdownItem(BaseModel):
    """One amount of ``amount_breakdown``: a number, or an object with ``amount`` (its other fields are kept)."""

    model_config = _STRICT
    amount: Amount
    date: IsoDate = None

    @model_validator(mode="before")
    @classmethod
    def _a_bare_number(cls, value):
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return {"amount": value} if is_number else value


class FactExpected(BaseModel):
    """A ``fact_exact`` question's ``expected``: each field is one thing the answer must state."""

    model_config = ConfigDict(strict=True, extra="forbid")
    amount_total: Amount = None
    amount_breakdown: Annotated[list[BreakdownItem], Field(min_length=1)] = None
    date: IsoDate = None
    date_range: DateRange = None
    count: Whole = None
    boolean_answer: bool = None
    text_answer: Phrase = None
    entity: Phrase = None

    @model_validator(mode="before")
    @classmethod
    def _something_to_check(cls, value):
        if isinstance(value, dict) and not value:
            raise ValueError(f"names no field to check (one of {', '.join(cls.model_fields)}): the question "
                             "would score 0 whatever the answer says")
        return value


class EvidenceExpected(BaseModel):
    model_config = _STRICT
    evidence_count_min: Whole = None
    key_points: list[Annotated[str, Field(min_length=1)]] = None


class Evidence(BaseModel):
    model_config = _STRICT
    must_include: Phrase
    is_critical: bool = False
    page: Whole = None


class Scoring(BaseModel):
    model_config = _STRICT
    citation_required: bool = None
    numeric_exact: bool = None
    date_exact: bool = None
    abstention_required: bool = None
    quote_required: bool = None
    evidence_recall_min: Annotated[int | float, PlainValidator(_recall_min)] = None
    evidence_precision_min: Share = None


class LegalSpec(BaseModel):
    """What ``expect[type]`` holds for one legal question (the importer keeps the rest in metadata)."""

    model_config = ConfigDict(strict=True, extra="forbid")
    expected: dict = Field(default_factory=dict)
    required_evidence: list[Evidence] = Field(default_factory=list)
    scoring: Scoring = Field(default_factory=Scoring)
    should_abstain: bool = None
    required_quote: Phrase | None = None
    additional_quotes: list[Phrase] = Field(default_factory=list)


EXPECTED = {"fact_exact": FactExpected, "evidence_set": EvidenceExpected}
PROBLEMS = {  # pydantic's error types, as the benchmark's author reads them
    "float_type": "must be a number", "int_type": "must be a whole number", "bool_type": "must be true or false",
    "string_type": "must be text", "list_type": "must be a list", "dict_type": "must be an object",
    "model_type": "must be an object", "model_attributes_type": "must be an object", "too_short": "must not be empty",
    "greater_than_equal": "must be at least {ge}", "less_than_equal": "must be at most {le}",
}


def _first_problem(error: ValidationError, model: type[BaseModel], prefix: tuple = ()) -> tuple[str, str]:
    """(path, problem) of the first thing wrong, in the benchmark file's own field names
    (``required_evidence[0].must_include``)."""
    first = error.errors()[0]
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in (*prefix, *first["loc"])).lstrip(".")
    if first["type"] == "missing":
        return path, "missing"
    if first["type"] == "extra_forbidden":
        known = f" (known: {', '.join(model.model_fields)})" if len(first["loc"]) == 1 else ""
        return path, f"unknown field{known}"
    bounds = {name: f"{value:g}" if isinstance(value, float) else value for name, value in first.get("ctx", {}).items()}
    problem = PROBLEMS.get(first["type"], first["msg"].removeprefix("Value error, ")).format(**bounds)
    if first["type"] in PROBLEMS or not isinstance(first.get("input"), dict):  # an object's own rule quotes none
        problem += f", got {shown(first['input'])}"
    return path, problem


def check_spec(kind: str, value: dict) -> None:
    """Raise `CheckError` ``"<kind>: <field>: <problem>"`` for the first value of `value` the formulas of `kind`
    cannot read, or for a question whose score could not reach its full range."""

    def refuse(path: str, problem: str):
        raise CheckError(f"{kind}: {path}: {problem}" if path else f"{kind}: {problem}")

    try:
        spec = LegalSpec.model_validate(value)
    except ValidationError as error:
        refuse(*_first_problem(error, LegalSpec))
    if kind in EXPECTED:
        try:
            EXPECTED[kind].model_validate(spec.expected)
        except ValidationError as error:
            refuse(*_first_problem(error, EXPECTED[kind], ("expected",)))
    citing = spec.scoring.citation_required
    if not spec.required_evidence and (kind == "evidence_set" or citing):
        refuse("required_evidence", "empty: " + ("evidence_set scores recall and precision over its must_include "
                                                 "strings" if kind == "evidence_set" else
                                                 "scoring.citation_required is true, and a citation is checked "
                                                 "against a must_include string"))
    wanted, points = spec.scoring.evidence_recall_min, recall_points(value.get("required_evidence") or [])
    if isinstance(wanted, int) and kind == "evidence_set" and wanted > len(points):
        refuse("scoring.evidence_recall_min", f"asks for {wanted} key points, but recall counts {len(points)} (the "
                                              "critical must_include strings, or all of them when none is critical)")
    if kind == "conflict_gap":
        if spec.should_abstain is None:
            refuse("should_abstain", "missing: conflict_gap scores whether the answer abstains as it should")
        if spec.required_quote is None and not spec.additional_quotes:
            refuse("required_quote", "missing (and no additional_quotes): the quote part of the score could never "
                                     "be earned")
