"""An old runs store opens and is upgraded in place; a store that does not exist yet survives six evaluations at once."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragretrieval.runs import RunHistory
from ragretrieval.runs.schema import SCHEMA_VERSION

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: migrations

# The tables of ragretrieval 0.1 (schema version 1), written out as they were, so the upgrade meets a real old file.
V1_TABLES = """
CREATE TABLE rr_meta (key VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rr_runs (
    id VARCHAR(64) NOT NULL PRIMARY KEY, name VARCHAR(300), created_at VARCHAR(40) NOT NULL,
    retriever VARCHAR(40) NOT NULL, model VARCHAR(500), store VARCHAR(100) NOT NULL, chunk_size INTEGER NOT NULL,
    chunk_overlap INTEGER NOT NULL, dataset_path TEXT NOT NULL, corpus_fingerprint VARCHAR(128) NOT NULL,
    questions_fingerprint VARCHAR(128) NOT NULL, chunks_fingerprint VARCHAR(128) NOT NULL,
    config_key VARCHAR(64) NOT NULL, n_questions INTEGER NOT NULL, n_documents INTEGER NOT NULL,
    n_chunks INTEGER NOT NULL, embedded_texts INTEGER NOT NULL, total_seconds FLOAT NOT NULL, config TEXT NOT NULL,
    means TEXT NOT NULL, timings TEXT NOT NULL, packages TEXT NOT NULL);
CREATE INDEX ix_rr_runs_name ON rr_runs (name);
CREATE INDEX ix_rr_runs_created_at ON rr_runs (created_at);
CREATE INDEX ix_rr_runs_config_key ON rr_runs (config_key);
CREATE TABLE rr_run_tags (
    run_id VARCHAR(64) NOT NULL REFERENCES rr_runs (id) ON DELETE CASCADE, tag VARCHAR(300) NOT NULL,
    PRIMARY KEY (run_id, tag));
CREATE TABLE rr_run_reports (
    run_id VARCHAR(64) NOT NULL PRIMARY KEY REFERENCES rr_runs (id) ON DELETE CASCADE,
    report_version INTEGER NOT NULL, report TEXT NOT NULL);
INSERT INTO rr_meta VALUES ('schema_version', '1');
"""
V1_RUN_COLUMNS = ("id, name, created_at, retriever, model, store, chunk_size, chunk_overlap, dataset_path, "
                  "corpus_fingerprint, questions_fingerprint, chunks_fingerprint, config_key, n_questions, "
                  "n_documents, n_chunks, embedded_texts, total_seconds, config, means, timings, packages")


def version_1_store(path: Path, report) -> str:
    """A schema-1 file holding `report` as version 0.1 wrote it (no retriever details, no labels fingerprint)."""
    current = path.with_name("current.sqlite")
    with RunHistory(f"sqlite:///{current}") as history:
        run_id = history.save(report, name="old run", tags=["baseline"])
    old_report = json.loads(report.model_dump_json())
    old_report.pop("retriever")
    old_report["dataset"].pop("labels_fingerprint")
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_TABLES)
        conn.execute("ATTACH DATABASE ? AS current", (str(current),))
        conn.execute(f"INSERT INTO rr_runs ({V1_RUN_COLUMNS}) SELECT {V1_RUN_COLUMNS} FROM current.rr_runs")
        conn.execute("INSERT INTO rr_run_tags SELECT * FROM current.rr_run_tags")
        conn.execute("INSERT INTO rr_run_reports VALUES (?, 1, ?)", (run_id, json.dumps(old_report)))
    return run_id


def test_a_version_1_store_is_upgraded_in_place(tmp_path, bm25_reports):
    path = tmp_path / "old.sqlite"
    run_id = version_1_store(path, bm25_reports[0])
    with RunHistory(f"sqlite:///{path}") as history:
        (summary,) = history.list()
        assert (summary.id, summary.name, summary.kind) == (run_id, "old run", "retrieval")
        assert history.list(tag="baseline")[0].id == run_id
        stored = history.get(run_id)
        assert stored.report.means == bm25_reports[0].means and stored.report.retriever == {}
        columns = history.columns(run_id)  # computed from the old report for a comparison (runs/columns.py)
        assert columns.ids == [q.id for q in stored.report.questions] and "recall@5" in columns.levels["doc"]
        new_id = history.save(bm25_reports[1])  # and the upgraded store takes new runs
        assert [s.id for s in history.list()] == [run_id, new_id]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM rr_meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(rr_runs)")}
    assert {"kind", "labels_fingerprint"} <= columns


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_store_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    return request.getfixturevalue("postgres_url")


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_six_evaluations_at_once_on_a_store_that_does_not_exist_yet(tmp_path, dataset_dir, fresh_store_url):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    processes = [subprocess.Popen(
        [sys.executable, "-m", "ragretrieval", "eval", "--dataset", str(dataset_dir), "--retriever", "bm25",
         "--k", "3", "--runs-db", fresh_store_url, "--name", f"run-{i}", "--out", str(tmp_path / f"report-{i}.json"),
         "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for i in range(6)]
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in processes]
    for process in processes:
        process.stdout.close()
        process.stderr.close()
    assert [code for code, _ in outcomes] == [0] * 6, [err for code, err in outcomes if code]
    assert all((tmp_path / f"report-{i}.json").is_file() for i in range(6))
    with RunHistory(fresh_store_url) as history:
        assert sorted(s.name for s in history.list()) == [f"run-{i}" for i in range(6)]
