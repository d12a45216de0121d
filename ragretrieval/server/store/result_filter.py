"""Which finished results an evaluation's page (and ``GET /api/v1/evaluations/{id}``, and its export) shows, in
which order: the filters and sorts that find the bad answers fast. They are query parameters,
so a filtered view is a URL that can be shared, and they are applied on the server, so paging counts what matches.

- ``score``: judge scores, ``5``, ``1,2`` or ``none`` (no score);
- ``type``: question types, ``FACTUAL`` or ``FACTUAL,INFERENTIAL``;
- ``check``: conditions on checks and judges' verdicts, ``include:fail``, ``cite_f1:pass,score5:fail``, or
  ``any:fail`` (at least one failed): each ``NAME:STATE`` must hold, a state being ``pass``, ``fail`` or ``part``
  (partly) as the card's pills show them (views.py; a verdict that failed or does not apply is neither);
- ``failed``: ``true`` only the questions that got no answer (stored with an error), ``false`` only those that did;
- ``retrieval``: ``hit`` (a relevant document is among the sources) or ``miss`` (none is; questions without relevant
  documents are neither: relevance.py);
- ``annotation``: ``correct``, ``partly_correct``, ``incorrect``, ``none`` (not reviewed yet) or ``any``;
- ``sort``: ``position`` (question order, the default), ``score`` / ``-score`` (judge score, lowest / highest first;
  questions without one last), ``check_score`` / ``-check_score``, ``recall`` / ``-recall``; ties keep question order.

Score, type and failed are conditions of the SQL query. The others need each result's JSON (checks, sources, the
question's labels): the matching positions are worked out from the rows' few columns, then only the page's rows are
read whole.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import and_, or_

from ...answers.failures import CLASSES
from ...runs.schema import evaluation_results
from ..views import card_checks
from . import Invalid
from .failure_class import failure_class_of
from .relevance import expected_vs_retrieved, relevant_documents

R = evaluation_results.c
STATES = ("pass", "fail", "part")
VERDICTS = ("correct", "partly_correct", "incorrect")


class ResultQuery(BaseModel):
    """The filters and the order (the module's text); every field may be left out."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    score: str | None = Field(None, max_length=40, description="judge scores: 5, 1,2 or none (no score)")
    type: str | None = Field(None, max_length=500, description="question types, e.g. FACTUAL,INFERENTIAL")
    check: str | None = Field(None, max_length=500,
                              description="NAME:pass|fail|part, several separated by commas, or any:fail")
    failed: bool | None = Field(None, description="true: only questions with no answer; false: only answered ones")
    retrieval: Literal["hit", "miss"] | None = Field(None, description="a relevant document among the sources, or not")
    failure_class: str | None = Field(None, max_length=60, description="a failure class (answers/failures.py), e.g. "
                                      "retrieval_miss")
    annotation: Literal["correct", "partly_correct", "incorrect", "none", "any"] | None = Field(
        None, description="the reviewer's verdict, none (not reviewed) or any (reviewed)")
    sort: Literal["position", "score", "-score", "check_score", "-check_score", "recall", "-recall"] = "position"

    @field_validator("score", "type", "check", mode="before")
    @classmethod
    def _blank_is_none(cls, value):
        return value or None

    @field_validator("check")
    @classmethod
    def _conditions(cls, value: str | None) -> str | None:
        for part in (p.strip() for p in (value or "").split(",") if p.strip()):
            name, _, state = part.rpartition(":")
            if not name or state not in STATES:
                raise ValueError(f"check must be NAME:pass, NAME:fail or NAME:part (any:fail for any failed), "
                                 f"separated by commas; got {part[:60]!r}")
        return value

    def in_sql(self) -> bool:
        """Whether the SQL conditions alone select and order the results (no row's JSON need be read)."""
        return not (self.check or self.retrieval or self.annotation) and self.sort in ("position", "score", "-score")

    def conditions(self) -> list:
        found = []
        if self.score:
            found.append(score_condition(self.score))
        if self.type:
            found.append(R.question_type.in_([t.strip() for t in self.type.split(",") if t.strip()]))
        if self.failed is not None:
            found.append(R.error.is_not(None) if self.failed else R.error.is_(None))
        if self.failure_class:
            if self.failure_class not in CLASSES:
                raise Invalid(f"failure_class must be one of {', '.join(CLASSES)}; got {self.failure_class[:40]!r}")
            found.append(failure_class_of(R.answer_record) == self.failure_class)
        return found

    def order(self) -> list:
        if self.sort == "position":
            return [R.position]
        score = R.llm_judge_score.asc() if self.sort == "score" else R.llm_judge_score.desc()
        return [R.llm_judge_score.is_(None), score, R.position]  # without a score last, on every back end

    def columns(self) -> list:
        """The columns `matches` and `key` read, besides the position and the question id."""
        found = [R.llm_judge_score]
        if self.check or "check_score" in self.sort:
            found.append(R.checks)
        if self.retrieval or "recall" in self.sort:
            found += [R.source_record, R.rag_answer_sources]
        return found

    def positions(self, rows, annotated: dict[str, str], rel_level: int = 1) -> list[int]:
        """The positions of the rows that match, in the query's order (`annotated`: question id -> verdict)."""
        kept = []
        for row in rows:
            facts = _facts(row, self, rel_level)
            if self.annotation == "none" and row.question_id in annotated:
                continue
            if self.annotation == "any" and row.question_id not in annotated:
                continue
            if self.annotation in VERDICTS and annotated.get(row.question_id) != self.annotation:
                continue
            if self.check and not _checks_hold(self.check, facts["states"]):
                continue
            if self.retrieval and facts["hit"] is not (self.retrieval == "hit"):
                continue
            kept.append((row.position, facts))
        if self.sort != "position":
            field, descending = self.sort.lstrip("-"), self.sort.startswith("-")
            value = {"score": "score", "check_score": "check_score", "recall": "recall"}[field]
            known = [k for k in kept if k[1][value] is not None]
            known.sort(key=lambda k: (-k[1][value] if descending else k[1][value], k[0]))
            kept = known + [k for k in kept if k[1][value] is None]
        return [position for position, _ in kept]


def score_condition(spec: str):
    """``5``, ``1,2`` or ``none`` (no score), as a condition on the results."""
    conditions = []
    for part in (p.strip().lower() for p in spec.split(",") if p.strip()):
        if part == "none":
            conditions.append(R.llm_judge_score.is_(None))
        elif part.isdigit() and 1 <= int(part) <= 5:
            score = int(part)  # a score rounds to its nearest whole number (judges sampled several times average)
            conditions.append(and_(R.llm_judge_score >= score - 0.5, R.llm_judge_score < score + 0.5))
        else:
            raise Invalid(f"score filter must be scores 1-5 or 'none' separated by commas; got {spec[:40]!r}")
    return or_(*conditions)


def _facts(row, query: ResultQuery, rel_level: int) -> dict:
    shown = card_checks(json.loads(row.checks or "{}") if query.check or "check_score" in query.sort else {})
    states = {p["name"]: p["state"] for p in shown["conditions"] + shown["judges"]}  # as the card's pills show them
    facts = {"states": states, "score": row.llm_judge_score, "check_score": shown["check_score"], "hit": None,
             "recall": None}
    if query.retrieval or "recall" in query.sort:
        record = json.loads(row.source_record) if row.source_record else None
        found = expected_vs_retrieved(relevant_documents(record, rel_level), json.loads(row.rag_answer_sources or "[]"))
        if found is not None:
            facts.update(hit=bool(found["found"]), recall=found["recall"])
    return facts


def _checks_hold(spec: str, states: dict[str, str]) -> bool:
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, _, state = part.rpartition(":")
        if name == "any":
            if state not in states.values():
                return False
        elif states.get(name) != state:
            return False
    return True
