"""The tables of the runs history (documented in docs/runs.md).

Why this shape: ``list`` reads only the small index table (`rr_runs`: configuration columns, fingerprints and the
means, one row per run); ``show``/``compare`` read one JSON document per run (`rr_run_reports`: the whole
`EvalReport`, per-question rankings and metric values included), which pydantic parses in milliseconds. The report
JSON is the single source of truth, so a stored run round-trips to an equal `EvalReport`; the index columns are
copies made at save time, in the same transaction. Table names carry an ``rr_`` prefix so the history can share a
PostgreSQL database with other applications.

Since schema 3 the same database holds the web app's records (`ragretrieval serve`, docs/web.md): question sets and
their questions, evaluations, and one result row per (evaluation, question). The result rows are made with the
evaluation, in one transaction, as the evaluation's work list: workers claim them one at a time, and the unique
constraint on (evaluation, question) is what guarantees that no question is stored twice and none is lost. A result
row keeps its own copy of the question text and ground truth, so editing a question set later never changes an
evaluation that already ran on it.

Since schema 5 an evaluation has a ``kind`` (``answer``, or ``retrieval``: the retrieval grid of ``eval`` for a question
set, stored as a retrieval run), and reviewers' verdicts on its answers are rows of ``rr_annotations``, one per
(evaluation, question), kept apart from the result rows the workers write (a resume that asks a question again
leaves its annotation alone).
"""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text, UniqueConstraint

SCHEMA_VERSION = 6  # migrations.py upgrades older stores in place

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
    Column("n_answered", Integer),  # since schema 4: an answer run's questions with an answer (NULL: retrieval run)
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

# ----------------------------------------------------------------------------------------- the web app (schema 3)
# Column names follow the evaluation design the API mirrors (`gmt_created`, `question_count`, `rag_answer`, ...).
# Times are ISO 8601 UTC text like `created_at` above; heartbeats are seconds on the database's clock (jobs/claims.py).


def _stamps(indexed: bool = False) -> list[Column]:
    """When a row was made and last changed (the design's gmt_created and gmt_updated)."""
    return [Column("gmt_created", String(40), nullable=False, index=indexed),
            Column("gmt_updated", String(40), nullable=False)]


question_sets = Table(
    "rr_question_sets", metadata,
    Column("id", String(24), primary_key=True),  # qs_ + 16 hex digits
    Column("name", String(255), nullable=False),
    Column("description", Text, nullable=False, server_default=""),
    Column("dataset", String(500)),  # the corpus its questions came from, when opened from a dataset or generated
    Column("source", String(300)),  # dataset:<name>@<labels fingerprint> for a set opened from a dataset
    Column("question_count", Integer, nullable=False, server_default="0"),
    *_stamps(indexed=True),
)

questions = Table(
    "rr_questions", metadata,
    Column("id", String(24), primary_key=True),  # q_ + 16 hex digits
    Column("question_set_id", String(24), ForeignKey("rr_question_sets.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),  # the order of the editor's table
    Column("question_type", String(50), nullable=False),
    Column("question_text", Text, nullable=False),
    Column("ground_truth", Text, nullable=False, server_default=""),
    Column("source_record", Text),  # JSON of the dataset's question record (labels, checks) when it came from one
    *_stamps(),
    Index("ix_rr_questions_set_position", "question_set_id", "position"),
)

evaluations = Table(
    "rr_evaluations", metadata,
    Column("id", String(24), primary_key=True),  # eval_ + 16 hex digits
    Column("name", String(255), nullable=False),
    Column("kind", String(20), nullable=False, server_default="answer"),  # since schema 5: answer | retrieval
    # what answers and what judges: everything an answer session needs, never a key (keys stay in the environment)
    Column("dataset", String(500), nullable=False),
    Column("question_set_id", String(24), ForeignKey("rr_question_sets.id"), nullable=False, index=True),
    Column("generator", String(500), nullable=False),
    Column("base_url", String(500)),
    Column("retriever", String(100)),
    Column("judge", String(300)),
    Column("judge_model", String(200)),
    Column("judge_base_url", String(500)),
    Column("options", Text, nullable=False, server_default="{}"),  # JSON: further answer-session settings
    # state
    Column("status", String(20), nullable=False, index=True),  # PENDING RUNNING PAUSED COMPLETED FAILED
    Column("progress", Integer, nullable=False, server_default="0"),  # percent
    Column("total_questions", Integer, nullable=False),
    Column("completed_questions", Integer, nullable=False, server_default="0"),
    Column("average_score", Float),
    Column("error", Text),
    Column("run_id", String(64)),  # the stored answer run, once there is one (compare, report)
    Column("started_at", String(40)),
    Column("finished_at", String(40)),
    *_stamps(indexed=True),
)

SCORE_JUDGE = "score5"  # the 1-5 judge whose verdict is a result's llm_judge_score (the others are among its checks)

evaluation_results = Table(
    "rr_evaluation_results", metadata,
    Column("id", String(24), primary_key=True),  # res_ + 16 hex digits
    Column("evaluation_id", String(24), ForeignKey("rr_evaluations.id", ondelete="CASCADE"), nullable=False),
    Column("question_id", String(24), nullable=False),
    Column("position", Integer, nullable=False),
    Column("question_type", String(50), nullable=False),
    Column("question_text", Text, nullable=False),
    Column("ground_truth", Text, nullable=False),
    Column("source_record", Text),
    # the work list: PENDING -> RUNNING (claimed by `worker`, alive while `heartbeat` moves) -> DONE
    Column("state", String(10), nullable=False),
    Column("worker", String(200)),  # host:pid:xxxx of the worker holding it, then of the one that answered it
    Column("heartbeat", Float),
    Column("attempts", Integer, nullable=False, server_default="0"),
    # the result
    Column("rag_answer", Text),
    Column("rag_answer_sources", Text),  # JSON list
    Column("llm_judge_score", Float),
    Column("llm_judge_reasoning", Text),
    Column("checks", Text),  # JSON: check or judge name -> value
    Column("metrics", Text),  # JSON: retrieval metrics of the ranking the answer used
    Column("input_tokens", Integer),
    Column("output_tokens", Integer),
    Column("latency", Float),  # seconds
    Column("cost", Float),
    Column("error", Text),  # the question could not be answered (the evaluation goes on)
    Column("answer_record", Text),  # JSON: the engine's whole record of the answer, from which the stored run is made
    *_stamps(),
    UniqueConstraint("evaluation_id", "question_id", name="uq_rr_evaluation_results_question"),
    Index("ix_rr_evaluation_results_page", "evaluation_id", "state", "position"),
)


annotations = Table(
    "rr_annotations", metadata,  # since schema 5: a reviewer's verdict on one answer of an evaluation
    Column("evaluation_id", String(24), ForeignKey("rr_evaluations.id", ondelete="CASCADE"), primary_key=True),
    Column("question_id", String(24), primary_key=True),
    Column("verdict", String(20), nullable=False),  # correct | partly_correct | incorrect
    Column("note", Text, nullable=False, server_default=""),
    Column("version", Integer, nullable=False),  # 1, 2, ...: a client that sends the version it saw is told of a
    # change made since (409) instead of overwriting it
    Column("reviewer", String(100), nullable=False, server_default=""),  # since schema 6: who gave it ("" unnamed)
    *_stamps(),
)


reviewer_verdicts = Table(
    "rr_reviewer_verdicts", metadata,  # since schema 6: each named reviewer's own last verdict on an answer, kept
    # apart from the shared annotation above so that reviewers' agreement with one another can be measured
    Column("evaluation_id", String(24), ForeignKey("rr_evaluations.id", ondelete="CASCADE"), primary_key=True),
    Column("question_id", String(24), primary_key=True),
    Column("reviewer", String(100), primary_key=True),
    Column("verdict", String(20), nullable=False),
    *_stamps(),
)
