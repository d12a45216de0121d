"""Schema 3: a runs store of schema 2 (made by the previous ragretrieval) is upgraded in place on SQLite and on
PostgreSQL, its runs kept, and the web app works on it; one result row per (evaluation, question) is enforced by the
database itself. Schema 5: a store of schema 3 or 4 with evaluations gets their kind (answer) and the annotations table.
Schema 6: a store of schema 5 keeps its annotations, each with an empty reviewer, and gets each reviewer's own verdicts."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError

from ragretrieval.runs import RunHistory
from ragretrieval.runs.schema import (
    SCHEMA_VERSION,
    annotations,
    evaluation_results,
    evaluations,
    meta,
    question_sets,
    questions,
    reviewer_verdicts,
)
from ragretrieval.server.db import Database, new_id, utc_now

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: the schema

WEB_TABLES = [reviewer_verdicts, annotations, evaluation_results, evaluations, questions, question_sets]  # children first


def schema_2_store(url: str, report) -> str:
    """A store as ragretrieval 0.2 left it: the run tables at schema 2 holding one run, no web tables."""
    with RunHistory(url) as history:
        run_id = history.save(report, name="before the web app", tags=["old"])
        with history.engine.begin() as conn:
            for table in WEB_TABLES:
                table.drop(conn)
            conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="2"))
    return run_id


def test_a_schema_2_store_is_upgraded_in_place(db_url, bm25_reports):
    run_id = schema_2_store(db_url, bm25_reports[0])
    raw = create_engine(db_url)
    assert not inspect(raw).has_table("rr_evaluations")  # truly a schema-2 store before it is opened
    raw.dispose()
    db = Database(db_url)
    try:
        assert db.history.upgraded_from == 2
        tables = set(inspect(db.engine).get_table_names())
        assert {"rr_question_sets", "rr_questions", "rr_evaluations", "rr_evaluation_results"} <= tables
        with db.read() as conn:
            assert conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar() == str(
                SCHEMA_VERSION)
        (summary,) = db.history.list()
        assert (summary.id, summary.name, summary.tags) == (run_id, "before the web app", ["old"])
        assert db.history.get(run_id).report.means == bm25_reports[0].means
        from ragretrieval.server.schemas import QuestionIn
        from ragretrieval.server.store.question_sets import QuestionSets

        created = QuestionSets(db).create("after the upgrade", "", [QuestionIn(question_text="q")])
        assert QuestionSets(db).get(created.id).question_count == 1
    finally:
        db.close()
    with RunHistory(db_url) as again:
        assert again.upgraded_from == SCHEMA_VERSION  # nothing left to do


@pytest.fixture
def bm25_reports(demo_dataset):
    from ragretrieval.data.dataset import load_dataset
    from ragretrieval.evaluation.pipeline import evaluate
    from ragretrieval.evaluation.report import EvalConfig

    return [evaluate(load_dataset(demo_dataset), EvalConfig(retriever="bm25", model=None), progress=False)]


def test_the_database_refuses_a_second_result_for_a_question(db_url):
    db = Database(db_url)
    now = utc_now()
    row = dict(evaluation_id="eval_1", question_id="q_1", position=0, question_type="FACTUAL", question_text="q",
               ground_truth="", state="PENDING", attempts=0, gmt_created=now, gmt_updated=now)
    try:
        with db.write() as conn:
            conn.execute(insert(question_sets).values(id="qs_1", name="s", description="", question_count=0,
                                                      gmt_created=now, gmt_updated=now))
            conn.execute(insert(evaluations).values(
                id="eval_1", name="e", dataset="d", question_set_id="qs_1", generator="extractive", options="{}",
                status="PENDING", progress=0, total_questions=1, completed_questions=0, gmt_created=now,
                gmt_updated=now))
            conn.execute(insert(evaluation_results).values(id=new_id("res"), **row))
        with pytest.raises(IntegrityError), db.write() as conn:
            conn.execute(insert(evaluation_results).values(id=new_id("res"), **row))
        with db.read() as conn:
            assert conn.execute(text("SELECT count(*) FROM rr_evaluation_results")).scalar() == 1
    finally:
        db.close()


def one_finished_evaluation(conn):
    """A question set and one finished evaluation of it, written as an older schema's columns allow; returns the time
    they carry."""
    now = utc_now()
    conn.execute(insert(question_sets).values(id="qs_1", name="s", description="", question_count=0,
                                              gmt_created=now, gmt_updated=now))
    conn.execute(text("INSERT INTO rr_evaluations (id, name, dataset, question_set_id, generator, options, status, "
                      "progress, total_questions, completed_questions, gmt_created, gmt_updated) VALUES ('eval_1', "
                      "'before', 'd', 'qs_1', 'extractive', '{}', 'COMPLETED', 100, 1, 1, :now, :now)"),
                 {"now": now})
    return now


def test_a_schema_3_store_keeps_its_evaluations_as_answer_evaluations(db_url):
    """A store the web app of schema 3 left (evaluations without a kind, no annotations) is upgraded in place."""
    with RunHistory(db_url) as history, history.engine.begin() as conn:
        annotations.drop(conn)
        conn.execute(text("ALTER TABLE rr_evaluations DROP COLUMN kind"))
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="3"))
        one_finished_evaluation(conn)
    db = Database(db_url)
    try:
        assert db.history.upgraded_from == 3
        assert inspect(db.engine).has_table("rr_annotations")
        from ragretrieval.server.store.evaluations import Evaluations

        assert Evaluations(db).get("eval_1").kind == "answer"
    finally:
        db.close()


def test_a_schema_5_store_keeps_its_annotations_with_an_empty_reviewer(db_url):
    with RunHistory(db_url) as history, history.engine.begin() as conn:
        reviewer_verdicts.drop(conn)
        conn.execute(text("ALTER TABLE rr_annotations DROP COLUMN reviewer"))
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="5"))
        now = one_finished_evaluation(conn)
        conn.execute(text("INSERT INTO rr_annotations (evaluation_id, question_id, verdict, note, version, gmt_created, "
                          "gmt_updated) VALUES ('eval_1', 'q_1', 'correct', 'kept', 1, :now, :now)"), {"now": now})
    db = Database(db_url)
    try:
        assert db.history.upgraded_from == 5 and SCHEMA_VERSION == 6
        assert inspect(db.engine).has_table("rr_reviewer_verdicts")
        with db.read() as conn:
            row = conn.execute(select(annotations)).one()
        assert (row.verdict, row.note, row.reviewer) == ("correct", "kept", "")
    finally:
        db.close()
