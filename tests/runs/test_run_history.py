"""The runs history on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from ragretrieval.runs import RunHistory, RunHistoryError, RunNotFoundError
from ragretrieval.runs import history as history_module
from ragretrieval.runs.identity import config_key, report_questions_fingerprint
from ragretrieval.runs.schema import SCHEMA_VERSION, run_reports, run_tags, runs

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: the runs history on both back ends


def test_save_get_round_trip(history, bm25_reports):
    report = bm25_reports[0]
    run_id = history.save(report, name="bm25 300", tags=["baseline", "bm25"])
    stored = history.get(run_id)
    assert stored.report == report
    assert stored.report.questions[0].retrieved_chunks == report.questions[0].retrieved_chunks
    assert (stored.id, stored.name, stored.tags) == (run_id, "bm25 300", ["baseline", "bm25"])
    assert stored.questions_fingerprint == report_questions_fingerprint(report)
    assert stored.config_key == config_key(report.config, report.dataset.corpus_fingerprint,
                                           stored.questions_fingerprint, report.dataset.labels_fingerprint)
    assert stored.packages["ragretrieval"] == report.ragretrieval_version
    assert {"numpy", "python", "sqlalchemy"} <= set(stored.packages)
    assert run_id.startswith("r-") and len(run_id) == len("r-20261122-103512-ab12")


def test_list_filters_by_tag_and_carries_the_means(history, bm25_reports):
    first = history.save(bm25_reports[0], tags=["a"])
    second = history.save(bm25_reports[1], name="big chunks", tags=["a", "b"])
    listed = history.list()
    assert [r.id for r in listed] == [first, second]  # in the order they were saved
    assert [r.id for r in history.list(tag="b")] == [second]
    assert history.list(tag="missing") == []
    summary = next(r for r in listed if r.id == second)
    assert summary.name == "big chunks"
    assert summary.chunk_size == 500 and summary.retriever == "bm25"
    assert summary.means == bm25_reports[1].means
    assert summary.n_questions == len(bm25_reports[1].questions)


def test_tag_rename_remove(history, bm25_reports):
    run_id = history.save(bm25_reports[0], tags=["x"])
    other = history.save(bm25_reports[1])
    assert history.tag(run_id[:-1], "y", "x", "z") == run_id  # a unique id prefix works
    assert history.get(run_id).tags == ["x", "y", "z"]
    history.untag(run_id, "y")
    assert history.get(run_id).tags == ["x", "z"]
    history.rename(run_id, "renamed")
    assert history.get("renamed").id == run_id  # and so does a unique name
    assert history.remove(run_id) == run_id
    assert [r.id for r in history.list()] == [other]
    with history.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(run_tags)).scalar() == 0
        assert conn.execute(select(func.count()).select_from(run_reports)).scalar() == 1


def test_unknown_and_ambiguous_ids_are_named(history, bm25_reports):
    with pytest.raises(RunNotFoundError, match=r"no run 'r-nothing' in .*runs list"):
        history.get("r-nothing")
    with pytest.raises(RunNotFoundError, match="no run 'r-nothing'"):
        history.remove("r-nothing")
    history.save(bm25_reports[0])
    history.save(bm25_reports[1])
    with pytest.raises(RunNotFoundError, match=r"id prefix 'r-' matches several runs \(r-"):
        history.get("r-")


def test_a_failed_save_leaves_no_trace(history, bm25_reports, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("killed in the middle")

    monkeypatch.setattr(history_module.RunHistory, "_insert_tags", staticmethod(fail))
    with pytest.raises(RuntimeError, match="killed in the middle"):
        history.save(bm25_reports[0], tags=["t"])
    assert history.list() == []
    with history.engine.connect() as conn:
        for table in (runs, run_tags, run_reports):
            assert conn.execute(select(func.count()).select_from(table)).scalar() == 0


def test_two_histories_on_one_database_see_each_other(history_url, bm25_reports):
    with RunHistory(history_url) as writer, RunHistory(history_url) as reader:
        run_id = writer.save(bm25_reports[0])
        assert [r.id for r in reader.list()] == [run_id]


def test_sqlite_history_uses_wal_and_a_plain_path(tmp_path, bm25_reports):
    with RunHistory(str(tmp_path / "sub" / "runs.sqlite")) as history:
        history.save(bm25_reports[0])
        with history.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    assert (tmp_path / "sub" / "runs.sqlite").is_file()


def test_default_location_comes_from_the_environment(tmp_path, monkeypatch, bm25_reports):
    monkeypatch.setenv("RAGRETRIEVAL_RUNS_URL", f"sqlite:///{tmp_path / 'env.sqlite'}")
    with RunHistory() as history:
        history.save(bm25_reports[0])
    assert (tmp_path / "env.sqlite").is_file()
    monkeypatch.delenv("RAGRETRIEVAL_RUNS_URL")
    monkeypatch.chdir(tmp_path)
    with RunHistory() as history:
        assert history.list() == []
    assert (tmp_path / ".ragretrieval" / "runs.sqlite").is_file()


def test_a_newer_schema_is_refused(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunHistory(url) as history, history.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE rr_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(RunHistoryError, match=f"schema version 99 was written by a newer ragretrieval \\(this one reads up to {SCHEMA_VERSION}\\)"):
        RunHistory(url)


def test_a_bad_url_is_named():
    with pytest.raises(RunHistoryError, match="nosuchdb"):
        RunHistory("nosuchdb://x/y")


def test_means_column_is_json(history, bm25_reports):
    run_id = history.save(bm25_reports[0])
    with history.engine.connect() as conn:
        means = conn.execute(select(runs.c.means).where(runs.c.id == run_id)).scalar()
    assert json.loads(means) == bm25_reports[0].means
