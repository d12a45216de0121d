"""An evaluation's results as a file: ``GET /api/v1/evaluations/{id}/export?format=csv|json|jsonl``
streams them, read a few hundred at a time in one reading transaction (one snapshot of the evaluation), so a large
evaluation never sits whole in memory. The filters of the detail page apply (result_filter.py): export what you
see.

- ``json``: ``{"evaluation": {...}, "summary": {...}, "results": [...]}``, each result as ``GET
  /api/v1/evaluations/{id}`` gives it (with its annotation, relevant documents and recall).
- ``jsonl``: one line per result in the agent-evaluation shape (data/importers/agent_jsonl.py): ``request``,
  ``expected_response``, ``response``, ``retrieved_context`` and ``expected_retrieved_context`` (lists of
  ``{"doc_uri", "content"}``), ``metrics`` (checks, judges' verdicts, the judge score, retrieval metrics, the
  annotation as a number), the token counts and latency under their agent names, ``annotation`` and ``error``.
  ``ragretrieval import-questions --format agent`` and ``rr.answer(questions=...)`` read it back.
- ``csv``: one row per result, UTF-8 with a byte-order mark and CRLF (as spreadsheets want), a column per field,
  then per check and per retrieval metric, then ``evaluation_status``. A text cell that starts with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (`neutralise`, as ``export-questions --format
  aperag-csv`` writes), so a spreadsheet never runs an answer as a formula; numbers are written as numbers.

An evaluation still running exports the results it has, and says so in every format without changing its shape:
the JSON's top-level ``status`` (``RUNNING``, ``COMPLETED``, ...) with ``results_done`` and ``results_total``,
each JSONL record's ``evaluation_status`` (the importers ignore it), the CSV's ``evaluation_status`` column on every
row. The status and the results come from the same reading transaction, so they agree.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterator

from sqlalchemy import select

from ...data.importers.aperag import BOM, neutralise
from ...runs.schema import evaluation_results, evaluations
from ..db import Database
from ..schemas import ResultOut
from ..views import USAGE_PREFIX, judge_list
from .annotations import LABELS, annotated, annotation_summary
from .evaluations import DONE, SHOWN, evaluation_out, rel_level_of, result_out
from .result_filter import ResultQuery
from .summary import summaries

R, E = evaluation_results.c, evaluations.c
BATCH = 200  # results read at a time
STATUS_COLUMN = "evaluation_status"  # the CSV's last column and each JSONL record's field: RUNNING, COMPLETED, ...
FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json", "jsonl": "application/x-ndjson"}
FIELDS = ("position", "question_id", "question_type", "question_text", "ground_truth", "answer", "error",
          "judge_score", "judge_reasoning", "check_score", "annotation", "annotation_note", "recall", "mrr",
          "relevant_documents", "missing_documents", "sources", "cited", "input_tokens", "output_tokens", "latency",
          "cost")


def export(db: Database, eval_id: str, fmt: str, query: ResultQuery) -> Iterator[bytes]:
    """The file's bytes, a piece at a time."""
    with db.read() as conn:
        row = conn.execute(select(evaluations).where(E.id == eval_id)).first()
        if row is None:
            return
        level = rel_level_of(row)
        summary = summaries.get(conn, row)
        if row.kind == "answer":
            summary["annotations"] = annotation_summary(conn, eval_id, judge_list(row.judge))
        results = _results(conn, eval_id, query, level)
        status = row.status
        if fmt == "json":
            progress = {"status": status, "results_done": row.completed_questions,
                        "results_total": row.total_questions}
            yield from _json(evaluation_out(row), summary, progress, results)
        elif fmt == "jsonl":
            for result in results:
                record = {**agent_record(result), "evaluation_status": status}
                yield (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        else:
            yield from _csv(summary, status, results)


def _results(conn, eval_id: str, query: ResultQuery, level: int) -> Iterator[ResultOut]:
    matching = [R.evaluation_id == eval_id, R.state == DONE, *query.conditions()]
    if query.in_sql():
        positions = list(conn.execute(select(R.position).where(*matching).order_by(*query.order())).scalars())
    else:
        light = conn.execute(select(R.position, R.question_id, *query.columns()).where(*matching)
                             .order_by(R.position)).all()
        verdicts = {q: a.verdict for q, a in annotated(conn, eval_id).items()} if query.annotation else {}
        positions = query.positions(light, verdicts, level)
    for start in range(0, len(positions), BATCH):
        chunk = positions[start:start + BATCH]
        rows = {r.position: r for r in conn.execute(select(*SHOWN).where(R.evaluation_id == eval_id,
                                                                          R.position.in_(chunk)))}
        notes = annotated(conn, eval_id, [r.question_id for r in rows.values()])
        for position in chunk:
            yield result_out(rows[position], level, notes.get(rows[position].question_id))


def _json(evaluation, summary: dict, progress: dict, results) -> Iterator[bytes]:
    head = {"evaluation": evaluation.model_dump(mode="json"), "summary": summary, **progress}
    yield json.dumps(head, ensure_ascii=False)[:-1].encode("utf-8") + b', "results": ['
    for number, result in enumerate(results):
        yield (("," if number else "") + "\n" + result.model_dump_json()).encode("utf-8")
    yield b"\n]}\n"


def _verdict(value):
    return value.get("value") if isinstance(value, dict) else value


def agent_record(result: ResultOut) -> dict:
    """One result in the agent-evaluation shape."""
    metrics = {name: _verdict(value) for name, value in result.checks.items()}
    metrics.update(result.metrics)
    if result.llm_judge_score is not None:
        metrics["llm_judge_score"] = result.llm_judge_score
    if result.annotation is not None:
        metrics["annotation"] = LABELS[result.annotation.verdict]
    record = {
        "request_id": result.question_id, "request": result.question_text,
        "expected_response": result.ground_truth or None, "response": result.rag_answer,
        "retrieved_context": [{"doc_uri": s["doc_id"], "content": s.get("content")}
                              for s in result.rag_answer_sources if s.get("doc_id")],
        "expected_retrieved_context": [{"doc_uri": doc_id} for doc_id in result.relevant_documents],
        "metrics": {name: value for name, value in metrics.items() if value is not None},
        "agent/input_token_count": result.input_tokens, "agent/output_token_count": result.output_tokens,
        "agent/latency_seconds": result.latency,
        "annotation": result.annotation.model_dump(include={"verdict", "note"}) if result.annotation else None,
        "error": result.error,
    }
    return {name: value for name, value in record.items() if value is not None or name == "response"}


def _text(value) -> str:
    return "" if value is None else neutralise(str(value))


def _number(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def _row(result: ResultOut, checks: list[str], metrics: list[str]) -> list[str]:
    retrieval = result.retrieval or {}
    sources = [s for s in result.rag_answer_sources if s.get("doc_id")]
    annotation = result.annotation
    return [
        _number(result.position + 1), _text(result.question_id), _text(result.question_type),
        _text(result.question_text), _text(result.ground_truth), _text(result.rag_answer), _text(result.error),
        _number(result.llm_judge_score), _text(result.llm_judge_reasoning), _number(result.checks.get("score")),
        _text(annotation.verdict if annotation else None), _text(annotation.note if annotation else None),
        _number(retrieval.get("recall")), _number(retrieval.get("mrr")), _text("; ".join(result.relevant_documents)),
        _text("; ".join(retrieval.get("missing", []))), _text("; ".join(s["doc_id"] for s in sources)),
        _text("; ".join(s["doc_id"] for s in sources if s.get("cited"))), _number(result.input_tokens),
        _number(result.output_tokens), _number(result.latency), _number(result.cost),
        *(_number(_verdict(result.checks.get(name))) for name in checks),
        *(_number(result.metrics.get(name)) for name in metrics)]


def _csv(summary: dict, status: str, results) -> Iterator[bytes]:
    # token counts (agent/...) have their own columns (input_tokens, output_tokens), never a check's
    checks = [name for name in summary["checks"] if name != "score" and not name.startswith(USAGE_PREFIX)]
    metrics = list(summary["metrics"])
    buffer = io.StringIO()
    buffer.write(BOM)
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([*FIELDS, *(neutralise(name) for name in checks), *(neutralise(name) for name in metrics),
                     STATUS_COLUMN])
    for number, result in enumerate(results, 1):
        writer.writerow([*_row(result, checks, metrics), status])
        if number % BATCH == 0:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")
