"""``GET /api/v1/evaluations/{id}/export?format=csv|json|jsonl``: an evaluation's results as a file, streamed
(store/export.py), with the detail page's filters."""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse

from ..store import export as exporting
from ..store.result_filter import ResultQuery
from . import deps
from .evaluations import result_query

router = APIRouter(prefix="/api/v1/evaluations", tags=["evaluations"])


def attachment(name: str, extension: str, suffix: str = "") -> str:
    """A Content-Disposition naming the file after the evaluation: an ASCII fallback, and the name itself (RFC 6266
    ``filename*``), neither able to carry a quote, a path or a header break. `suffix` (``-partial``) follows the
    name, however long the name."""
    plain = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "evaluation"
    encoded = quote(name[:120], safe="")
    return (f"attachment; filename=\"{plain[:80]}{suffix}.{extension}\"; "
            f"filename*=UTF-8''{encoded}{suffix}.{extension}")


@router.get("/{eval_id}/export")
def export(request: Request, eval_id: str, format: Literal["csv", "json", "jsonl"] = Query(
        "json", description="csv (a spreadsheet), json (the API's fields) or jsonl (the agent-evaluation shape)"),
        query: ResultQuery = Depends(result_query)):
    """Every finished result (those matching the filters, in their order), streamed. The file of an evaluation that
    is not COMPLETED (still running, paused, failed) is named ``NAME-partial.FORMAT``; the file itself says its
    status (store/export.py)."""
    db = deps.db(request)
    evaluation = deps.evaluations(request).get(eval_id, limit=0)  # a 404 before the stream starts
    suffix = "" if evaluation.status == "COMPLETED" else "-partial"  # COMPLETED never changes back
    return StreamingResponse(exporting.export(db, eval_id, format, query), media_type=exporting.FORMATS[format],
                             headers={"Content-Disposition": attachment(evaluation.name, format, suffix)})
