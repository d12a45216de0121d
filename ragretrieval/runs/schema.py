"""The tables of the runs history (documented in docs/runs.md).

Why this shape: ``list`` reads only the small index table (`rr_runs`: configuration columns, fingerprints and the
means, one row per run); ``show``/``compare`` read one JSON document per run (`rr_run_reports`: the whole
`EvalReport`, per-question rankings and metric values included), which pydantic parses in milliseconds. The report
JSON is the single source of truth, so a stored run round-trips to an equal `EvalReport`; the index columns are
copies made at save time, in the same transaction. Table names carry an ``rr_`` prefix so the history can share a
PostgreSQL database with other applications.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Integer, MetaData, String, Table, Text

SCHEMA_VERSION = 2  # migrations.py upgrades older stores in place

metadata = MetaData()

meta = Table(
    "rr_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "rr_runs", metadata,
    Column("id", String(64), primary_key=True),  # r-YYYYMMDD-HHMMSS-xxxx: sorts by creation time
    Column("name", String(300), index=True),
    Column("created_at", String(40), nullable=False, index=True),  # ISO 8601, UTC: sorts as text on every back end
    Column("retriever", String(40), nullable=False),
    Column("model", String(500)),
    Column("store", String(100), nullable=False),
    Column("chunk_size", Integer, nullable=False),
    Column("chunk_overlap", Integer, nullable=False),
    Column("dataset_path", Text, nullable=False),
    Column("corpus_fingerprint", String(128), nullable=False),
    Column("questions_fingerprint", String(128), nullable=False),
    Column("chunks_fingerprint", String(128), nullable=False),
    Column("config_key", String(64), nullable=False, index=True),  # configuration + corpus + labels
    Column("labels_fingerprint", String(128)),  # since schema 2; NULL for runs stored before
    Column("kind", String(20), nullable=False, server_default="retrieval"),  # since schema 2: retrieval | answer
    Column("n_questions", Integer, nullable=False),
    Column("n_documents", Integer, nullable=False),
    Column("n_chunks", Integer, nullable=False),
    Column("embedded_texts", Integer, nullable=False),
    Column("total_seconds", Float, nullable=False),
    Column("config", Text, nullable=False),  # JSON of EvalConfig
    Column("means", Text, nullable=False),  # JSON: granularity -> metric -> mean
    Column("timings", Text, nullable=False),  # JSON: stage -> seconds
    Column("packages", Text, nullable=False),  # JSON: distribution -> version, of the process that saved the run
)

run_tags = Table(
    "rr_run_tags", metadata,
    Column("run_id", String(64), ForeignKey("rr_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("tag", String(300), primary_key=True, index=True),
)

run_reports = Table(
    "rr_run_reports", metadata,
    Column("run_id", String(64), ForeignKey("rr_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("report_version", Integer, nullable=False),
    Column("report", Text, nullable=False),  # EvalReport.model_dump_json()
)
