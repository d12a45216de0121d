"""``/api/v1/corpora`` (the dataset folders under --datasets) and ``/api/v1/health``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ...runs.schema import SCHEMA_VERSION
from ..corpora import find_corpora
from . import deps

router = APIRouter(prefix="/api/v1", tags=["corpora"])


@router.get("/corpora")
def list_corpora(request: Request) -> list[dict]:
    """Every dataset folder under --datasets: its name (path relative to that folder), documents and questions."""
    return [{"name": c.name, "documents": c.documents, "questions": c.questions}
            for c in find_corpora(deps.settings(request).datasets)]


@router.get("/health")
def health(request: Request) -> dict:
    worker = request.app.state.worker
    return {"status": "ok", "schema_version": SCHEMA_VERSION, "worker": worker.id if worker else None}
