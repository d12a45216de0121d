"""Question sets and their questions: each set is created, or replaced, with all its questions in one transaction."""

from __future__ import annotations

import json

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Connection

from ...runs.schema import evaluations, question_sets, questions
from ..db import Database, new_id, utc_now
from ..schemas import MAX_QUESTIONS, QuestionIn, QuestionOut, QuestionSetOut, QuestionSetSummary
from . import Conflict, Invalid, NotFound

QS, Q = question_sets.c, questions.c


def _question_out(row) -> QuestionOut:
    record = json.loads(row.source_record) if row.source_record else None
    return QuestionOut(id=row.id, question_type=row.question_type, question_text=row.question_text,
                       ground_truth=row.ground_truth, source_record=record)


def _rows(set_id: str, items: list[QuestionIn], start: int, now: str) -> list[dict]:
    return [dict(id=new_id("q"), question_set_id=set_id, position=start + i, question_type=item.question_type,
                 question_text=item.question_text, ground_truth=item.ground_truth,
                 source_record=json.dumps(item.source_record, ensure_ascii=False) if item.source_record else None,
                 gmt_created=now, gmt_updated=now)
            for i, item in enumerate(items)]


class QuestionSets:
    def __init__(self, db: Database):
        self.db = db

    # ------------------------------------------------------------------------------------------------------ reading
    def list(self, offset: int = 0, limit: int = 100, name: str | None = None) -> tuple[list[QuestionSetSummary], int]:
        """Newest first; with `name`, only the sets whose name holds it (any case, ``%`` and ``_`` plain)."""
        in_use = (select(evaluations.c.question_set_id, func.count().label("n"))
                  .group_by(evaluations.c.question_set_id).subquery())
        conditions = [QS.name.icontains(name, autoescape=True)] if name else []
        query = (select(question_sets, func.coalesce(in_use.c.n, 0).label("evaluations"))
                 .outerjoin(in_use, in_use.c.question_set_id == QS.id).where(*conditions)
                 .order_by(QS.gmt_created.desc(), QS.id).offset(offset).limit(limit))
        with self.db.read() as conn:
            rows = conn.execute(query).all()
            total = conn.execute(select(func.count()).select_from(question_sets).where(*conditions)).scalar_one()
        return [QuestionSetSummary(**row._mapping) for row in rows], total

    def names(self, set_ids: list[str]) -> dict[str, tuple[str, str | None]]:
        """Set id -> (name, corpus), for the ids that exist (pages name a set, they do not show its id)."""
        with self.db.read() as conn:
            rows = conn.execute(select(QS.id, QS.name, QS.dataset).where(QS.id.in_(set_ids))).all()
        return {row.id: (row.name, row.dataset) for row in rows}

    def pairing_keys(self, set_ids: list[str] | None = None) -> dict[str, str]:
        """Set id -> what its questions pair by in a comparison (store/comparing.py): ``corpus:NAME`` for a set
        whose every question came from a corpus's records (they keep the corpus's ids, however the set was made),
        else the set itself. Evaluations whose sets have different keys share no question, so compare is not
        offered for them. All sets when `set_ids` is None."""
        with self.db.read() as conn:
            recorded = select(Q.question_set_id, func.count().label("n")).where(
                Q.source_record.is_not(None)).group_by(Q.question_set_id).subquery()
            query = select(QS.id, QS.dataset, QS.question_count, recorded.c.n).outerjoin(
                recorded, recorded.c.question_set_id == QS.id)
            rows = conn.execute(query if set_ids is None else query.where(QS.id.in_(set_ids))).all()
        return {row.id: f"corpus:{row.dataset}" if row.dataset and row.question_count and row.n == row.question_count
                else row.id for row in rows}

    def pairable_sets(self, set_id: str) -> list[str]:
        """The sets whose evaluations pair with those of `set_id` (itself first)."""
        key = self.pairing_keys([set_id]).get(set_id, set_id)
        if key == set_id:
            return [set_id]
        return [set_id, *(other for other, k in self.pairing_keys().items() if k == key and other != set_id)]

    def without_reference(self, set_ids: list[str]) -> dict[str, int]:
        """Set id -> how many of its questions have no reference answer (judges such as score5 need one)."""
        with self.db.read() as conn:
            return dict(conn.execute(select(Q.question_set_id, func.count()).where(
                Q.question_set_id.in_(set_ids), Q.ground_truth == "").group_by(Q.question_set_id)).all())

    def get(self, set_id: str) -> QuestionSetOut:
        with self.db.read() as conn:
            return self._get(conn, set_id)

    def _get(self, conn: Connection, set_id: str) -> QuestionSetOut:
        row = conn.execute(select(question_sets).where(QS.id == set_id)).first()
        if row is None:
            raise NotFound(f"no question set {set_id!r}")
        used = conn.execute(select(func.count()).where(evaluations.c.question_set_id == set_id)).scalar_one()
        found = [_question_out(q) for q in self.question_rows(conn, set_id)]
        return QuestionSetOut(**row._mapping, questions=found, evaluations=used)

    def find_by_source(self, source: str) -> str | None:
        with self.db.read() as conn:
            return conn.execute(select(QS.id).where(QS.source == source).order_by(QS.gmt_created).limit(1)).scalar()

    def question_rows(self, conn: Connection, set_id: str) -> list:
        return conn.execute(select(questions).where(Q.question_set_id == set_id).order_by(Q.position)).all()

    # ------------------------------------------------------------------------------------------------------ writing
    def create(self, name: str, description: str, items: list[QuestionIn], dataset: str | None = None,
               source: str | None = None) -> QuestionSetOut:
        """The set and all its questions in one transaction: either everything is stored or nothing."""
        now, set_id = utc_now(), new_id("qs")
        with self.db.write() as conn:
            conn.execute(insert(question_sets).values(
                id=set_id, name=name, description=description, dataset=dataset, source=source,
                question_count=len(items), gmt_created=now, gmt_updated=now))
            if items:
                conn.execute(insert(questions), _rows(set_id, items, 0, now))
            return self._get(conn, set_id)

    def update(self, set_id: str, name=None, description=None, dataset=None,
               items: list[QuestionIn] | None = None) -> QuestionSetOut:
        """New name, description or corpus; with `items`, the whole question list too (rows with an id are updated
        in place, rows without one added, and questions left out deleted), all in one transaction."""
        now = utc_now()
        with self.db.write() as conn:
            self.lock(conn, set_id)
            values = {k: v for k, v in (("name", name), ("description", description), ("dataset", dataset))
                      if v is not None}
            if items is not None:
                self._replace(conn, set_id, items, now)
                values["question_count"] = len(items)
            conn.execute(update(question_sets).where(QS.id == set_id).values(gmt_updated=now, **values))
            return self._get(conn, set_id)

    def _replace(self, conn: Connection, set_id: str, items: list[QuestionIn], now: str) -> None:
        existing = set(conn.execute(select(Q.id).where(Q.question_set_id == set_id)).scalars())
        unknown = [item.id for item in items if item.id and item.id not in existing]
        if unknown:
            raise Invalid(f"question {unknown[0]!r} is not in question set {set_id!r}")
        kept = {item.id for item in items if item.id}
        if existing - kept:
            conn.execute(delete(questions).where(Q.id.in_(list(existing - kept))))
        changed, new_rows = [], []
        for position, item in enumerate(items):
            if item.id:
                changed.append(dict(key=item.id, position=position, question_type=item.question_type,
                                    question_text=item.question_text, ground_truth=item.ground_truth))
            else:
                new_rows += _rows(set_id, [item], position, now)
        if changed:  # one statement, many parameter sets
            conn.execute(update(questions).where(Q.id == bindparam("key")).values(
                position=bindparam("position"), question_type=bindparam("question_type"),
                question_text=bindparam("question_text"), ground_truth=bindparam("ground_truth"), gmt_updated=now),
                changed)
        if new_rows:
            conn.execute(insert(questions), new_rows)

    def add_questions(self, set_id: str, items: list[QuestionIn]) -> list[QuestionOut]:
        now = utc_now()
        with self.db.write() as conn:
            count = self.lock(conn, set_id)
            if count + len(items) > MAX_QUESTIONS:
                raise Invalid(f"a question set holds at most {MAX_QUESTIONS} questions")
            rows = _rows(set_id, items, self._next_position(conn, set_id), now)
            conn.execute(insert(questions), rows)
            conn.execute(update(question_sets).where(QS.id == set_id)
                         .values(question_count=count + len(items), gmt_updated=now))
            added = conn.execute(select(questions).where(Q.id.in_([r["id"] for r in rows])).order_by(Q.position))
            return [_question_out(row) for row in added]

    def update_question(self, question_id: str, **values) -> QuestionOut:
        values = {k: v for k, v in values.items() if v is not None}
        now = utc_now()
        with self.db.write() as conn:
            set_id = self._set_of(conn, question_id)
            conn.execute(update(questions).where(Q.id == question_id).values(gmt_updated=now, **values))
            conn.execute(update(question_sets).where(QS.id == set_id).values(gmt_updated=now))
            return _question_out(conn.execute(select(questions).where(Q.id == question_id)).one())

    def delete_question(self, question_id: str) -> None:
        now = utc_now()
        with self.db.write() as conn:
            set_id = self._set_of(conn, question_id)
            count = self.lock(conn, set_id)
            conn.execute(delete(questions).where(Q.id == question_id))
            conn.execute(update(question_sets).where(QS.id == set_id)
                         .values(question_count=count - 1, gmt_updated=now))

    def delete(self, set_id: str) -> None:
        """Delete a set and its questions; refused while an evaluation uses it (its results point at the set)."""
        self.delete_many([set_id])

    def delete_many(self, set_ids: list[str]) -> list[str]:
        """Delete sets and their questions in one transaction: all of them, or none when one is unknown or in use."""
        set_ids = list(dict.fromkeys(set_ids))
        with self.db.write() as conn:
            for set_id in set_ids:
                self.lock(conn, set_id)
                users = conn.execute(select(evaluations.c.name).where(evaluations.c.question_set_id == set_id)
                                     .order_by(evaluations.c.gmt_created).limit(4)).scalars().all()
                if users:
                    total = conn.execute(select(func.count()).where(evaluations.c.question_set_id == set_id)).scalar()
                    shown = ", ".join(repr(name) for name in users[:3]) + (", ..." if total > 3 else "")
                    raise Conflict(f"question set {set_id!r} is used by {total} evaluation(s) ({shown}); delete "
                                   "those evaluations first")
            conn.execute(delete(questions).where(Q.question_set_id.in_(set_ids)))
            conn.execute(delete(question_sets).where(QS.id.in_(set_ids)))
        return set_ids

    # ------------------------------------------------------------------------------------------------------ helpers
    def lock(self, conn: Connection, set_id: str) -> int:
        """Lock the set's row for this transaction (PostgreSQL; SQLite has one writer); its question count."""
        count = conn.execute(select(QS.question_count).where(QS.id == set_id).with_for_update()).scalar()
        if count is None:
            raise NotFound(f"no question set {set_id!r}")
        return count

    @staticmethod
    def _set_of(conn: Connection, question_id: str) -> str:
        set_id = conn.execute(select(Q.question_set_id).where(Q.id == question_id)).scalar()
        if set_id is None:
            raise NotFound(f"no question {question_id!r}")
        return set_id

    @staticmethod
    def _next_position(conn: Connection, set_id: str) -> int:
        last = conn.execute(select(func.max(Q.position)).where(Q.question_set_id == set_id)).scalar()
        return 0 if last is None else last + 1
