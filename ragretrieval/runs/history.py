"""The runs history: every evaluation stored with its configuration, fingerprints, versions and full report.

Where: ``RunHistory(url)``; without a URL, ``$RAGRETRIEVAL_RUNS_URL``, else the SQLite file
``./.ragretrieval/runs.sqlite`` in the working directory. Why the working directory: runs are results of a project
(like its ``.git``), not a disposable cache, and two projects should not mix their runs; set the variable to share
one history (e.g. a PostgreSQL database for a team). A URL is any SQLAlchemy URL (``sqlite:///path``,
``postgresql+psycopg://user@host/db``); a plain path means a SQLite file.

Why one transaction per run: `save` writes the index row, the tags, the report and its columns (columns.py) together,
so a process killed halfway leaves no trace. SQLite runs in WAL mode so readers (``runs list``) never block a sweep.
"""

from __future__ import annotations

import json
import secrets
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import create_engine, delete, event, insert, select, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError

from ..answers.report import AnswerReport, Report, parse_report
from ..errors import RagretrievalError
from ..evaluation.report import EvalReport
from ..io.redact import redact_urls
from ..work.environment import environment
from .columns import RunColumns, columns_of, stored_columns, write_columns
from .identity import report_config_key
from .index_row import answered_count, index_row, summary_fields
from .migrations import SchemaError, prepare, stored_version
from .names import Note, free_name, moved_note, tell
from .schema import SCHEMA_VERSION, run_columns, run_reports, run_tags, runs
from .sqlite import cannot_write, read_only_engine, sqlite_begin, sqlite_pragmas

DEFAULT_PATH = Path(".ragretrieval") / "runs.sqlite"


class RunHistoryError(RagretrievalError):
    """A history that cannot be opened or a request it cannot serve."""


class RunNotFoundError(RunHistoryError, LookupError):
    """No run (or more than one) answers to the given id, id prefix or name: the command must name another (exit 2,
    like every input the user must change)."""

    exit_code = 2


class RunSummary(BaseModel):
    """One row of ``runs list``: what the index table holds, without the per-question results."""

    model_config = ConfigDict(frozen=True)
    id: str
    name: str | None
    tags: list[str]
    created_at: datetime
    retriever: str
    model: str | None
    store: str
    chunk_size: int
    chunk_overlap: int
    dataset_path: str
    corpus_fingerprint: str
    questions_fingerprint: str
    config_key: str
    kind: str = "retrieval"  # or "answer" (ragretrieval answer)
    n_answered: int | None = None  # answer runs: questions with an answer (the means are over them)
    generator: str | None = None  # answer runs: the --generator spec
    rerank: str | None = None  # the reranking stage after the retriever (its --rerank spec), when there is one
    n_questions: int
    embedded_texts: int
    total_seconds: float
    means: dict[str, dict[str, float]]


class StoredRun(BaseModel):
    """A run as stored: identity, labels, provenance, and the full report, an `EvalReport` or an `AnswerReport` (also
    the ``export --format json`` file format, hence the version field)."""

    model_config = ConfigDict(frozen=True)
    format_version: Literal[1] = 1
    id: str
    name: str | None
    tags: list[str]
    created_at: datetime
    packages: dict[str, str]
    questions_fingerprint: str
    config_key: str
    report: Report  # an EvalReport (kind "retrieval") or an AnswerReport (kind "answer")

    @property
    def kind(self) -> str:
        return self.report.kind


def default_url() -> str:
    return environment().runs_url or str(DEFAULT_PATH)


def normalize_url(url) -> str:
    """A plain path (a `Path` too) becomes a SQLite URL; ``postgresql://`` gets the psycopg 3 driver that the postgres
    extra ships."""
    url = str(url)
    if "://" not in url:
        return f"sqlite:///{url}"
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


@contextmanager
def _savepoint(conn: Connection):
    """A savepoint in `conn`'s transaction: a failed insert is undone without ending the caller's transaction."""
    with conn.begin_nested():
        yield conn


def new_run_id(when: datetime) -> str:
    return f"r-{when:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _clean_tags(tags: Iterable[str]) -> list[str]:
    cleaned = []
    for tag in tags:
        tag = str(tag).strip()
        if not tag:
            raise RunHistoryError("a tag must not be empty")
        if tag not in cleaned:
            cleaned.append(tag)
    return cleaned


class RunHistory:
    def __init__(self, url: str | None = None):
        self.url = normalize_url(url or default_url())
        try:
            parsed = make_url(self.url)
        except ArgumentError as error:
            raise RunHistoryError(f"runs history URL {self.url!r} is not a database URL: {error}") from None
        database = parsed.database if parsed.get_backend_name() == "sqlite" else None
        self.read_only = bool(database) and database != ":memory:" and cannot_write(database)
        if self.read_only:
            self.engine: Engine = read_only_engine(database)
            self._check_version()
            return
        if database not in (None, "", ":memory:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.engine = create_engine(parsed)
        except Exception as error:  # missing driver and the like: name the URL, hide the password
            raise RunHistoryError(f"cannot open runs history {self.display_url}: {error}") from None
        if database is not None:
            event.listen(self.engine, "connect", sqlite_pragmas)
            event.listen(self.engine, "begin", sqlite_begin)
        self._prepare()

    @property
    def display_url(self) -> str:
        return make_url(self.url).render_as_string(hide_password=True)

    def _prepare(self) -> None:
        """Create the store, or upgrade an older one in place (migrations.py); safe when many processes open a new
        store at once."""
        try:
            with self._write() as conn:
                self.upgraded_from, _ = prepare(conn)
        except SchemaError as error:
            raise RunHistoryError(f"runs history {self.display_url}: {error}") from None
        except Exception as error:
            raise RunHistoryError(f"cannot open runs history {self.display_url}: {error}") from None

    def _check_version(self) -> None:
        """A store opened read-only is read as it is: it must be at this version (nothing can upgrade it)."""
        self.upgraded_from = None
        try:
            with self.engine.connect() as conn:
                found = stored_version(conn)
        except Exception as error:
            raise RunHistoryError(f"cannot read runs history {self.display_url} (opened read-only): {error}") from None
        if found != SCHEMA_VERSION:
            newer = found is not None and found > SCHEMA_VERSION
            raise RunHistoryError(f"runs history {self.display_url}: schema version {found} " + (
                "was written by a newer ragretrieval; upgrade ragretrieval" if newer else
                "needs an upgrade, which a read-only store cannot take: open it once where it can be written"))

    def check_writable(self) -> None:
        """Refuse a read-only store before work whose result would be stored in it is done."""
        if self.read_only:
            raise RunHistoryError(f"runs history {self.display_url} is read-only (its file or folder cannot be "
                                  "written): its runs can be listed, shown, compared and exported, not changed; "
                                  "copy it to a writable folder, or point --runs-db elsewhere to store new runs")

    @contextmanager
    def _write(self):
        """One writing transaction (committed at the end, rolled back on an error)."""
        self.check_writable()
        with self.engine.connect().execution_options(rr_write=True) as conn, conn.begin():
            yield conn

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------------------ writing
    def save(self, report: EvalReport | AnswerReport, name: str | None = None, tags: Iterable[str] = (),
             conn: Connection | None = None, on_note: Note | None = None) -> str:
        """Store `report` as a new run in one transaction (or, given `conn`, inside that connection's transaction,
        so the caller commits the run with its own rows or not at all); return its id. A `name` another run has
        moves to this one, and that run gets a dated name (runs/names.py), said to `on_note` (else warned)."""
        tags = _clean_tags(tags)
        created = datetime.now(timezone.utc)  # microseconds keep runs saved in one second in order
        row = index_row(report, name, created)
        body = redact_urls(report.model_dump_json())  # URLs are stored without their credentials
        columns = columns_of(report)
        for _attempt in range(5):  # a random suffix collides only when two runs start in the same second
            run_id = new_run_id(created)
            try:
                with (self._write() if conn is None else _savepoint(conn)) as writing:
                    moved = free_name(writing, name)
                    writing.execute(insert(runs).values(id=run_id, **row))
                    self._insert_tags(writing, run_id, tags)
                    writing.execute(insert(run_reports).values(run_id=run_id, report_version=report.report_version,
                                                               report=body))
                    write_columns(writing, run_id, columns)
                if moved:
                    tell(moved_note(name, run_id, moved), on_note)
                return run_id
            except IntegrityError:
                if self._exists(run_id, conn):
                    continue
                raise
        raise RunHistoryError("could not find a free run id after 5 attempts")

    def update(self, run_id: str, report: EvalReport | AnswerReport, expected_key: str | None = None) -> str:
        """Replace a stored run's report by a later version of it (``judge-answers`` adds judges): the index row's
        configuration, key, means and timings follow it in the same transaction; id, name, tags and creation time
        stay. With `expected_key`, refuse when the stored run's configuration key is no longer that one (another
        process changed the run since it was read). Returns the run's full id."""
        run_id, columns = self.resolve(run_id), columns_of(report)
        with self._write() as conn:
            stored = conn.execute(select(runs.c.config_key).where(runs.c.id == run_id)).scalar_one()
            if expected_key is not None and stored != expected_key:
                raise RunHistoryError(f"run {run_id} changed while it was being updated (another process judged or "
                                      "replaced it); run the command again")
            conn.execute(update(runs).where(runs.c.id == run_id).values(
                config=redact_urls(report.config.model_dump_json()), config_key=report_config_key(report),
                means=json.dumps(report.means), timings=json.dumps(report.timings),
                total_seconds=float(report.timings.get("total", 0.0)), n_answered=answered_count(report)))
            conn.execute(update(run_reports).where(run_reports.c.run_id == run_id).values(
                report_version=report.report_version, report=redact_urls(report.model_dump_json())))
            write_columns(conn, run_id, columns)
        return run_id

    @staticmethod
    def _insert_tags(conn, run_id: str, tags: list[str]) -> None:
        if tags:
            conn.execute(insert(run_tags), [{"run_id": run_id, "tag": tag} for tag in tags])

    def remove(self, run_id: str) -> str:
        """Delete a run; return its full id."""
        run_id = self.resolve(run_id)
        with self._write() as conn:
            for table in (run_columns, run_reports, run_tags):
                conn.execute(delete(table).where(table.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))
        return run_id

    def tag(self, run_id: str, *tags: str) -> str:
        """Add tags (existing ones are kept); return the run's full id."""
        run_id = self.resolve(run_id)
        with self._write() as conn:
            present = set(conn.execute(select(run_tags.c.tag).where(run_tags.c.run_id == run_id)).scalars())
            self._insert_tags(conn, run_id, [t for t in _clean_tags(tags) if t not in present])
        return run_id

    def untag(self, run_id: str, *tags: str) -> str:
        run_id = self.resolve(run_id)
        with self._write() as conn:
            conn.execute(delete(run_tags).where(run_tags.c.run_id == run_id, run_tags.c.tag.in_(list(tags))))
        return run_id

    def rename(self, run_id: str, name: str | None, on_note: Note | None = None) -> str:
        """Name a run (None: no name); a run that had the name gets a dated name, as in `save`."""
        run_id = self.resolve(run_id)
        with self._write() as conn:
            moved = free_name(conn, name, keep=run_id)
            conn.execute(update(runs).where(runs.c.id == run_id).values(name=name or None))
        if moved:
            tell(moved_note(name, run_id, moved), on_note)
        return run_id

    # ------------------------------------------------------------------------------------------------------ reading
    def _exists(self, run_id: str, conn: Connection | None = None) -> bool:
        if conn is not None:
            return conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None
        with self.engine.connect() as own:
            return self._exists(run_id, own)

    def resolve(self, ref: str) -> str:
        """The full id of the run that `ref` names: an exact id, a unique id prefix, or a unique name."""
        with self.engine.connect() as conn:
            if conn.execute(select(runs.c.id).where(runs.c.id == ref)).first():
                return ref
            by_prefix = list(conn.execute(
                select(runs.c.id).where(runs.c.id.startswith(ref, autoescape=True)).order_by(runs.c.id).limit(6)
            ).scalars()) if ref else []
            by_name = list(conn.execute(select(runs.c.id).where(runs.c.name == ref).order_by(runs.c.id).limit(6))
                           .scalars())
        for matches, what in ((by_prefix, "id prefix"), (by_name, "name")):
            if len(matches) == 1:
                return matches[0]
            if matches:
                shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
                raise RunNotFoundError(f"run {what} {ref!r} matches several runs ({shown}); give more of the id")
        raise RunNotFoundError(f"no run {ref!r} in {self.display_url} (`ragretrieval runs list` shows the runs)")

    def _tags_of(self, conn, ids: list[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {i: [] for i in ids}
        query = select(run_tags.c.run_id, run_tags.c.tag).order_by(run_tags.c.run_id, run_tags.c.tag)
        if len(ids) == 1:
            query = query.where(run_tags.c.run_id == ids[0])
        for run_id, tag in conn.execute(query):
            if run_id in found:
                found[run_id].append(tag)
        return found

    def get(self, ref: str) -> StoredRun:
        run_id = self.resolve(ref)
        with self.engine.connect() as conn:
            row = conn.execute(
                select(runs.c.id, runs.c.name, runs.c.created_at, runs.c.packages, runs.c.questions_fingerprint,
                       runs.c.config_key, run_reports.c.report)
                .join(run_reports, run_reports.c.run_id == runs.c.id).where(runs.c.id == run_id)
            ).one()
            tags = self._tags_of(conn, [run_id])[run_id]
        return StoredRun(id=row.id, name=row.name, tags=tags, created_at=datetime.fromisoformat(row.created_at),
                         packages=json.loads(row.packages), questions_fingerprint=row.questions_fingerprint,
                         config_key=row.config_key, report=parse_report(row.report))

    def columns(self, run_id: str) -> RunColumns:  # the per-question values a comparison reads (columns.py)
        return stored_columns(self, run_id)

    def list(self, tag: str | None = None) -> list[RunSummary]:
        """Runs oldest first; with `tag`, only the runs that carry it."""
        columns = [c for c in runs.c if c.name not in ("timings", "packages", "chunks_fingerprint", "n_documents",
                                                       "n_chunks")]
        query = select(*columns).order_by(runs.c.created_at, runs.c.id)
        if tag is not None:
            query = query.where(runs.c.id.in_(select(run_tags.c.run_id).where(run_tags.c.tag == tag)))
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
            tags = self._tags_of(conn, [r["id"] for r in rows])
        return [RunSummary(**{**row, "tags": tags[row["id"]], **summary_fields(row)}) for row in rows]
