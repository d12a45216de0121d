"""A run's per-question values stored as columns apart from its report (schema 7, runs/columns.py): equal to what
the report says, on SQLite and PostgreSQL; replaced with the report and removed with the run; a store of schema 6
opens, and its runs get their columns from their reports on first read and compare exactly as before; hostile
cases (a question missing from a run, NaN, damaged rows, a run changed while its columns were computed) read as the
report says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import delete, text, update

import ragretrieval as rr
from ragretrieval.analysis.compare import ComparedRun, compare, from_report
from ragretrieval.runs import RunHistory
from ragretrieval.runs.columns import _keep, columns_of, read_columns
from ragretrieval.runs.schema import SCHEMA_VERSION, run_columns

pytestmark = pytest.mark.databases  # the schema, its migration and binary columns differ between the back ends

QUESTIONS = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"


@pytest.fixture(scope="module")
def answer_reports(demo_dataset):
    """Two real answer runs (the extractive baseline over bm25 with 3 and with 1 context) of the demo's questions."""
    return [rr.answer(demo_dataset, QUESTIONS, generator="extractive", retriever="bm25", context_k=k) for k in (3, 1)]


def same_columns(found, expected) -> None:
    assert (found.kind, found.ids, found.classes) == (expected.kind, expected.ids, expected.classes)
    assert [(level, list(metrics)) for level, metrics in found.levels.items()] == [
        (level, list(metrics)) for level, metrics in expected.levels.items()]  # the report's order: the page's
    for level, metrics in expected.levels.items():
        for name, values in metrics.items():
            assert np.array_equal(found.levels[level][name], values, equal_nan=True), (level, name)


def from_columns(columns, label: str) -> ComparedRun:
    """A comparable run read from columns, as the web's comparison makes it."""
    return ComparedRun(label, "columns", columns.ids, lambda metric, level: columns.levels[level][metric],
                       report=type("Kind", (), {"kind": columns.kind})())


def comparisons(runs: list[ComparedRun], columns) -> dict:
    return {level: compare(runs, list(metrics), granularity=level).to_json()
            for level, metrics in columns.levels.items()}


def test_a_saved_run_has_its_report_values_as_columns(history, answer_reports, bm25_reports):
    for report in (*answer_reports, bm25_reports[0]):
        run_id = history.save(report)
        with history.engine.connect() as conn:
            stored = read_columns(conn, run_id)
        assert stored is not None  # written with the run, not on first read
        same_columns(stored, columns_of(history.get(run_id).report))
        same_columns(history.columns(run_id), columns_of(report))
    answer = history.columns(history.list()[0].id)
    assert set(answer.levels) == {"answer", "doc", "chunk"} and "include" in answer.levels["answer"]
    assert all(c is not None for c in answer.classes)


def test_the_statistics_from_columns_equal_those_from_the_reports(history, answer_reports):
    ids = [history.save(report, name=f"k{k}") for report, k in zip(answer_reports, (3, 1))]
    stored = [history.columns(run_id) for run_id in ids]
    ours = comparisons([from_columns(c, f"k{k}") for c, k in zip(stored, (3, 1))], stored[0])
    theirs = comparisons([from_report(history.get(i).report, f"k{k}", i) for i, k in zip(ids, (3, 1))], stored[0])
    assert ours == theirs and set(ours) == {"answer", "doc", "chunk"}


def test_an_update_replaces_the_columns_and_a_removal_deletes_them(history, answer_reports):
    run_id = history.save(answer_reports[0])
    report = answer_reports[0]
    first = report.questions[0]
    changed = first.model_copy(update={"metrics": {**first.metrics, "answer": {**first.metrics["answer"],
                                                                                "include": 0.25}}})
    history.update(run_id, report.model_copy(update={"questions": [changed, *report.questions[1:]]}))
    assert history.columns(run_id).levels["answer"]["include"][0] == 0.25
    history.remove(run_id)
    with history.engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM rr_run_columns")).scalar() == 0


def schema_6(url: str) -> None:
    """Make the store behind `url` what ragretrieval wrote before the columns: no rr_run_columns, schema 6."""
    with RunHistory(url) as history, history.engine.begin() as conn:
        run_columns.drop(conn)
        conn.execute(text("UPDATE rr_meta SET value = '6' WHERE key = 'schema_version'"))


def test_a_schema_6_store_opens_and_its_runs_compare_as_before(history_url, answer_reports):
    with RunHistory(history_url) as history:
        ids = [history.save(report) for report in answer_reports]
        before = [history.columns(run_id) for run_id in ids]
    schema_6(history_url)
    with RunHistory(history_url) as history:
        assert history.upgraded_from == 6
        with history.engine.connect() as conn:
            assert conn.execute(text("SELECT value FROM rr_meta")).scalar() == str(SCHEMA_VERSION)
            assert read_columns(conn, ids[0]) is None  # the upgrade parses no report
        for run_id, columns in zip(ids, before):
            same_columns(history.columns(run_id), columns)  # computed from the report ...
            with history.engine.connect() as conn:
                same_columns(read_columns(conn, run_id), columns)  # ... and kept
        reread = [history.columns(run_id) for run_id in ids]
        assert comparisons([from_columns(c, str(i)) for i, c in enumerate(reread)], reread[0]) == comparisons(
            [from_report(history.get(r).report, str(i), r) for i, r in enumerate(ids)], reread[0])


def test_a_question_missing_from_a_run_and_nan_values(history, answer_reports):
    report = answer_reports[1]
    shorter = report.model_copy(update={"questions": report.questions[1:]})  # a run that lacks the first question
    gap = shorter.questions[0]  # and whose next question has no include check (NaN: no such check)
    lacking = gap.model_copy(update={"metrics": {**gap.metrics, "answer": {
        k: v for k, v in gap.metrics["answer"].items() if k != "include"}}})
    hostile = shorter.model_copy(update={"questions": [lacking, *shorter.questions[1:]]})
    base_id, hostile_id = history.save(answer_reports[0]), history.save(hostile)
    stored = history.columns(hostile_id)
    assert stored.ids == [q.id for q in hostile.questions]
    assert np.isnan(stored.levels["answer"]["include"][0]) and not np.isnan(report.questions[1].metrics["answer"]["include"])
    same_columns(stored, columns_of(history.get(hostile_id).report))
    base = history.columns(base_id)
    common = stored.ids  # what the web pairs: the questions both runs have, in the first run's order
    rows = {i: [c.ids.index(q) for q in common] for i, c in enumerate((base, stored))}
    restricted = [ComparedRun(label, "columns", common, lambda m, lv, c=c, r=rows[i]: c.levels[lv][m][r],
                              report=type("Kind", (), {"kind": "answer"})())
                  for i, (label, c) in enumerate((("A", base), ("B", stored)))]
    found = compare(restricted, ["include"], granularity="answer").to_json()
    paired = int((np.isfinite(restricted[0].per_question("include", "answer"))
                  & np.isfinite(stored.levels["answer"]["include"])).sum())
    assert found["n_questions"] == len(report.questions) - 1 and paired < len(common)
    assert any(note.startswith(f"include: {paired} of {len(common)} questions paired") for note in found["notes"])


def test_damaged_columns_are_read_from_the_report(history, answer_reports):
    run_id = history.save(answer_reports[0])
    with history.engine.begin() as conn:  # a metric's row that does not hold one value per question
        conn.execute(update(run_columns).where(run_columns.c.run_id == run_id, run_columns.c.level == "doc")
                     .values(data=b"\x00" * 8))
        assert read_columns(conn, run_id) is None
    same_columns(history.columns(run_id), columns_of(answer_reports[0]))


def test_columns_of_a_run_that_changed_meanwhile_are_not_kept(history, answer_reports):
    run_id = history.save(answer_reports[0])
    with history.engine.begin() as conn:
        conn.execute(delete(run_columns).where(run_columns.c.run_id == run_id))
    _keep(history, run_id, columns_of(answer_reports[1]), ("another key", "{}"))  # read before an update
    with history.engine.connect() as conn:
        assert read_columns(conn, run_id) is None
    same_columns(history.columns(run_id), columns_of(answer_reports[0]))


def test_a_metric_with_a_long_name_is_stored(history, answer_reports):
    long = "judge/" + "x" * 400  # a check or judge may be named at any length: PostgreSQL would refuse a VARCHAR(300)
    report = answer_reports[0]
    questions = [q.model_copy(update={"metrics": {**q.metrics, "answer": {**q.metrics.get("answer", {}), long: 0.5}}})
                 for q in report.questions]
    run_id = history.save(report.model_copy(update={
        "questions": questions, "means": {**report.means, "answer": {**report.means["answer"], long: 0.5}}}))
    assert history.columns(run_id).levels["answer"][long].tolist() == [0.5] * len(questions)
