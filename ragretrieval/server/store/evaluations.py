"""Evaluations: created with one result row per question (the work list the workers claim from, jobs/claims.py),
listed, shown with a page of results, paused, resumed, deleted."""

from __future__ import annotations

import json

from sqlalchemy import delete, func, insert, select, update

from ...runs.schema import annotations, evaluation_results, evaluations
from ...scoring.answer_metrics import current_names
from ..db import Database, new_id, utc_now
from ..jobs.options import default_retriever
from ..rendering import public_text
from ..schemas import PAGE_SIZE, AnnotationOut, EvaluationDetail, EvaluationIn, EvaluationOut, ResultOut
from ..views import judge_list
from . import Conflict, Invalid, NotFound
from .annotations import annotated, annotation_summary
from .failure_class import failure_class_of
from .question_sets import QuestionSets
from .relevance import expected_vs_retrieved, relevant_documents
from .result_filter import ResultQuery
from .summary import failed_counts, judges_failed_everywhere, recount, summaries

E, R = evaluations.c, evaluation_results.c
DONE = "DONE"
EDITABLE = ("FAILED", "PAUSED")  # whose endpoint may be corrected before a resume
RESULT_FIELDS = ("rag_answer", "rag_answer_sources", "llm_judge_score", "llm_judge_reasoning", "checks", "metrics",
                 "input_tokens", "output_tokens", "latency", "cost", "error")
# what a result shows: not the engine's whole record (answer_record, kilobytes a row), which the page never reads
SHOWN = [R.question_id, R.position, R.question_type, R.question_text, R.ground_truth, R.source_record,
         *(getattr(R, name) for name in RESULT_FIELDS)]


def evaluation_out(row, failed: int = 0, failed_judges=(), **detail) -> EvaluationOut:
    """The row as the API shows it; `failed` of its finished questions got no answer; `failed_judges` failed on every
    answered question."""
    data = dict(row._mapping)
    data["failed_judges"] = list(failed_judges)
    data["options"] = json.loads(data.get("options") or "{}")
    data["generator"] = data.get("generator") or None  # a retrieval evaluation's is stored empty
    data.update(failed_questions=failed, answered_questions=data["completed_questions"] - failed)
    data["error"] = public_text(data.get("error"))
    return EvaluationDetail(**data, **detail) if detail else EvaluationOut(**data)


def shown(conn, eval_id: str) -> EvaluationOut:
    """The evaluation `eval_id` as it is now in `conn`'s transaction."""
    row = conn.execute(select(evaluations).where(E.id == eval_id)).one()
    return evaluation_out(row, failed_counts(conn, [eval_id]).get(eval_id, 0),
                          judges_failed_everywhere(conn, [row]).get(eval_id, ()))


def result_out(row, rel_level: int = 1, annotation: AnnotationOut | None = None) -> ResultOut:
    """A result row as the API shows it, with its sources marked against the question's relevant documents."""
    sources = json.loads(row.rag_answer_sources or "[]")
    relevant = relevant_documents(json.loads(row.source_record) if row.source_record else None, rel_level)
    return ResultOut(
        question_id=row.question_id, position=row.position, question_type=row.question_type,
        question_text=row.question_text, ground_truth=row.ground_truth, rag_answer=row.rag_answer,
        retrieval=expected_vs_retrieved(relevant, sources), rag_answer_sources=sources, relevant_documents=relevant,
        llm_judge_score=row.llm_judge_score, llm_judge_reasoning=row.llm_judge_reasoning,
        checks=current_names(json.loads(row.checks or "{}")), metrics=json.loads(row.metrics or "{}"),
        input_tokens=row.input_tokens, output_tokens=row.output_tokens, latency=row.latency, cost=row.cost,
        error=public_text(row.error), annotation=annotation)


def rel_level_of(evaluation) -> int:
    """From which grade a label counts as relevant in the evaluation (its option, else EvalConfig's default 1)."""
    level = json.loads(evaluation.options or "{}").get("rel_level", 1)
    return level if isinstance(level, int) and level >= 1 else 1


def labelled(source_record: str | None) -> bool:
    """Whether a question (its stored record) has relevant documents, so its retrieval can be scored."""
    return bool(source_record) and bool(json.loads(source_record).get("relevant"))


class Evaluations:
    def __init__(self, db: Database):
        self.db = db

    def create(self, request: EvaluationIn) -> EvaluationOut:
        """The evaluation (PENDING) and its work list, one row per question with the question as it is now."""
        now, eval_id = utc_now(), new_id("eval")
        sets = QuestionSets(self.db)
        with self.db.write() as conn:
            sets.lock(conn, request.question_set_id)
            rows = sets.question_rows(conn, request.question_set_id)
            if not rows:
                raise Invalid(f"question set {request.question_set_id!r} has no questions")
            if request.kind == "retrieval" and not any(labelled(q.source_record) for q in rows):
                raise Invalid(f"none of the {len(rows)} questions of question set {request.question_set_id!r} has "
                              "relevant documents, so retrieval cannot be scored: open a corpus's questions as a set, "
                              "or evaluate the answers")
            conn.execute(insert(evaluations).values(
                id=eval_id, name=request.name, kind=request.kind, dataset=request.dataset,
                question_set_id=request.question_set_id, generator=request.generator or "", base_url=request.base_url,
                retriever=request.retriever or default_retriever(),
                judge=request.judge, judge_model=request.judge_model, judge_base_url=request.judge_base_url,
                options=json.dumps(request.options.model_dump(mode="json", exclude_unset=True),
                                   ensure_ascii=False), status="PENDING", progress=0,
                total_questions=len(rows), completed_questions=0, gmt_created=now, gmt_updated=now))
            conn.execute(insert(evaluation_results), [dict(
                id=new_id("res"), evaluation_id=eval_id, question_id=q.id, position=position,
                question_type=q.question_type, question_text=q.question_text, ground_truth=q.ground_truth,
                source_record=q.source_record, state="PENDING", attempts=0, gmt_created=now, gmt_updated=now)
                for position, q in enumerate(rows)])
            return shown(conn, eval_id)

    def list(self, offset: int = 0, limit: int = PAGE_SIZE, status: str | None = None,
             name: str | None = None) -> tuple[list[EvaluationOut], int]:
        """Newest first; only those with `status`, and those whose name holds `name` (any case; ``%`` and ``_``
        are plain characters)."""
        query, count = select(evaluations), select(func.count()).select_from(evaluations)
        conditions = ([E.status == status] if status else []) + \
            ([E.name.icontains(name, autoescape=True)] if name else [])
        if conditions:
            query, count = query.where(*conditions), count.where(*conditions)
        with self.db.read() as conn:
            rows = conn.execute(query.order_by(E.gmt_created.desc(), E.id.desc()).offset(offset).limit(limit)).all()
            total = conn.execute(count).scalar_one()
            failed = failed_counts(conn, [row.id for row in rows])
            judges = judges_failed_everywhere(conn, rows)
        return [evaluation_out(row, failed.get(row.id, 0), judges.get(row.id, ())) for row in rows], total

    def get(self, eval_id: str, offset: int = 0, limit: int = PAGE_SIZE, score: str | None = None,
            query: ResultQuery | None = None) -> EvaluationDetail:
        """The evaluation with `limit` of its finished results from `offset`, those matching the `query`'s filters
        (or the `score` filter alone) in its order (result_filter.py); the summary covers every finished result."""
        query = query or ResultQuery(score=score)
        with self.db.read() as conn:
            row = conn.execute(select(evaluations).where(E.id == eval_id)).first()
            if row is None:
                raise NotFound(f"no evaluation {eval_id!r}")
            level = rel_level_of(row)
            rows, total = self._page(conn, eval_id, query, offset, limit, level)
            notes = annotated(conn, eval_id, [r.question_id for r in rows])
            results = [result_out(r, level, notes.get(r.question_id)) for r in rows]
            summary = summaries.get(conn, row)
            if row.kind == "answer":
                summary["annotations"] = annotation_summary(conn, eval_id, judge_list(row.judge))
            failed_judges = [name for name, counts in summary["judges"].items()
                             if not counts["judged"] and counts["failed"]]
            return evaluation_out(row, summary["errors"], failed_judges, results=results, results_total=total,
                                  summary=summary, offset=offset, limit=limit)

    @staticmethod
    def _page(conn, eval_id: str, query: ResultQuery, offset: int, limit: int, rel_level: int):
        """The page's result rows and how many match."""
        matching = [R.evaluation_id == eval_id, R.state == DONE, *query.conditions()]
        if query.in_sql():
            total = conn.execute(select(func.count()).where(*matching)).scalar_one()
            rows = [] if limit == 0 else conn.execute(select(*SHOWN).where(*matching).order_by(*query.order())
                                                      .offset(offset).limit(limit)).all()
            return rows, total
        light = conn.execute(select(R.position, R.question_id, *query.columns()).where(*matching)
                             .order_by(R.position)).all()
        verdicts = {q: a.verdict for q, a in annotated(conn, eval_id).items()} if query.annotation else {}
        positions = query.positions(light, verdicts, rel_level)
        page = positions[offset:offset + limit]
        if not page:
            return [], len(positions)
        found = {r.position: r for r in conn.execute(select(*SHOWN).where(R.evaluation_id == eval_id,
                                                                          R.position.in_(page)))}
        return [found[p] for p in page], len(positions)

    def comparable(self, eval_id: str, question_set_id: str, limit: int = PAGE_SIZE,
                   pairable: list[str] | None = None) -> list[tuple[str, str, bool, bool]]:
        """(id, name, same question set, pairs with this one) of the completed evaluations with a stored run, but
        this one: those whose questions pair with this one's (of the `pairable` sets, else the same set) first,
        then the newest (what "Compare with" offers; one that cannot pair is shown disabled)."""
        pairs = E.question_set_id.in_(pairable or [question_set_id])
        with self.db.read() as conn:
            rows = conn.execute(select(E.id, E.name, E.question_set_id, pairs.label("pairs")).where(
                E.id != eval_id, E.status == "COMPLETED", E.run_id.is_not(None)
            ).order_by(pairs.desc(), E.gmt_created.desc()).limit(limit)).all()
        return [(row.id, row.name, row.question_set_id == question_set_id, bool(row.pairs)) for row in rows]

    def failure_classes_of(self, eval_id: str, question_ids: list[str]) -> dict[str, str]:
        """Question id -> its failure class, for the cards shown (read inside the database: failure_class.py)."""
        if not question_ids:
            return {}
        kind = failure_class_of(R.answer_record)
        with self.db.read() as conn:
            rows = conn.execute(select(R.question_id, kind.label("kind")).where(
                R.evaluation_id == eval_id, R.question_id.in_(question_ids), R.answer_record.is_not(None))).all()
        return {row.question_id: row.kind for row in rows if row.kind}

    def page_of(self, eval_id: str, question_id: str, page_size: int) -> int | None:
        """The page (from 1) of the finished results in question order that holds `question_id` (a card's
        permalink), None when it has no finished result."""
        with self.db.read() as conn:
            position = conn.execute(select(R.position).where(R.evaluation_id == eval_id, R.question_id == question_id,
                                                             R.state == DONE)).scalar()
            if position is None:
                return None
            before = conn.execute(select(func.count()).where(R.evaluation_id == eval_id, R.state == DONE,
                                                             R.position < position)).scalar()
        return before // page_size + 1

    def question_types(self, eval_id: str) -> list[str]:
        with self.db.read() as conn:
            return sorted(conn.execute(select(R.question_type).where(R.evaluation_id == eval_id).distinct()).scalars())

    def delete(self, eval_id: str) -> None:
        """Delete an evaluation and its results; a worker busy with one of its questions drops its answer."""
        self.delete_many([eval_id])

    def delete_many(self, eval_ids: list[str]) -> list[str]:
        """Delete evaluations and their results in one transaction: all of them, or none when one is unknown."""
        eval_ids = list(dict.fromkeys(eval_ids))
        with self.db.write() as conn:
            for eval_id in eval_ids:
                self._lock(conn, eval_id)
            conn.execute(delete(evaluation_results).where(R.evaluation_id.in_(eval_ids)))
            conn.execute(delete(annotations).where(annotations.c.evaluation_id.in_(eval_ids)))
            conn.execute(delete(evaluations).where(E.id.in_(eval_ids)))
        return eval_ids

    def correct_endpoint(self, eval_id: str, changes: dict) -> EvaluationOut:
        """Change where a FAILED or PAUSED evaluation's answers and verdicts are asked (`changes`: generator,
        base_url, judge_base_url, already checked), before it is resumed; refused while it runs or once it is
        COMPLETED."""
        with self.db.write() as conn:
            status, _ = self._lock(conn, eval_id)
            if status not in EDITABLE:
                raise Conflict(f"evaluation {eval_id!r} is {status}; only a FAILED or PAUSED evaluation's endpoint "
                               "can be changed (pause it first)")
            generator = conn.execute(select(E.generator).where(E.id == eval_id)).scalar_one()
            if "generator" in changes and not generator.startswith("http:"):
                raise Invalid(f"generator: evaluation {eval_id!r} is answered by {generator!r}, not an http: "
                              "service; its base_url is its endpoint")
            if changes:
                conn.execute(update(evaluations).where(E.id == eval_id).values(gmt_updated=utc_now(), **changes))
            return evaluation_out(conn.execute(select(evaluations).where(E.id == eval_id)).one())

    def pause(self, eval_id: str) -> EvaluationOut:
        """PENDING or RUNNING -> PAUSED: workers take no more of its questions; one being answered is finished and
        stored."""
        return self._move(eval_id, {"PENDING", "RUNNING"}, "PAUSED", "paused")

    def resume(self, eval_id: str) -> EvaluationOut:
        """PAUSED or FAILED -> PENDING (nothing answered yet) or RUNNING: workers go on with the questions left, and
        ask again those whose answer failed."""
        return self._move(eval_id, {"PAUSED", "FAILED"}, None, "resumed")

    def _move(self, eval_id: str, sources: set[str], target: str | None, verb: str) -> EvaluationOut:
        with self.db.write() as conn:
            status, completed = self._lock(conn, eval_id)
            if status in sources and target is None:
                completed = self._ask_failed_again(conn, eval_id, completed)
            goal = target or ("RUNNING" if completed else "PENDING")
            if status in sources:
                values = {"status": goal, "gmt_updated": utc_now()}
                if target is None:
                    values["error"] = None
                conn.execute(update(evaluations).where(E.id == eval_id).values(**values))
            elif not (status == goal or (target is None and status in ("PENDING", "RUNNING"))):
                raise Conflict(f"evaluation {eval_id!r} is {status}; only a {' or '.join(sorted(sources))} "
                               f"evaluation can be {verb}")
            return shown(conn, eval_id)

    @staticmethod
    def _ask_failed_again(conn, eval_id: str, completed: int) -> int:
        """The finished questions stored with an error go back to the work list (their annotations, if any, judged
        no answer: they go too); how many stay finished."""
        failed = select(R.question_id).where(R.evaluation_id == eval_id, R.state == DONE, R.error.is_not(None))
        conn.execute(delete(annotations).where(annotations.c.evaluation_id == eval_id,
                                               annotations.c.question_id.in_(failed)))
        again = conn.execute(update(evaluation_results).where(
            R.evaluation_id == eval_id, R.state == DONE, R.error.is_not(None)
        ).values(state="PENDING", worker=None, heartbeat=None, gmt_updated=utc_now(),
                 answer_record=None, **{name: None for name in RESULT_FIELDS})).rowcount
        if not again:
            return completed
        total = conn.execute(select(E.total_questions).where(E.id == eval_id)).scalar_one()
        counters = recount(conn, eval_id, total)
        conn.execute(update(evaluations).where(E.id == eval_id).values(**counters))
        return counters["completed_questions"]

    @staticmethod
    def _lock(conn, eval_id: str):
        row = conn.execute(select(E.status, E.completed_questions).where(E.id == eval_id).with_for_update()).first()
        if row is None:
            raise NotFound(f"no evaluation {eval_id!r}")
        return row
