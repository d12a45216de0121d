"""A question set's trends: ``/evaluations/question-sets/{id}/trends`` (store/trends.py; SVG drawn on the server by
templates/_charts.html from charts.py's geometry) and ``GET /api/v1/question-sets/{id}/trends``."""

from __future__ import annotations

from fastapi import APIRouter, Request

from ..charts import line_chart, scatter_chart
from ..store.trends import set_trends
from . import deps
from .pages import render

router = APIRouter(tags=["trends"])


@router.get("/api/v1/question-sets/{set_id}/trends")
def trends_api(request: Request, set_id: str):
    """The set's completed evaluations in time order with their headline metrics, the significant changes between
    neighbours (paired test, Holm), and the quality-against-cost and -latency points with the Pareto front."""
    question_set = deps.question_sets(request).get(set_id)  # 404 for an unknown set
    return {"question_set": {"id": question_set.id, "name": question_set.name}, **set_trends(deps.db(request), set_id)}


@router.get("/evaluations/question-sets/{set_id}/trends", include_in_schema=False)
def trends_page(request: Request, set_id: str):
    question_set = deps.question_sets(request).get(set_id)
    found = set_trends(deps.db(request), set_id)
    lines = {metric: line_chart([p["values"].get(metric) for p in found["points"]]) for metric in found["metrics"]}
    scatters = [{**s, "chart": scatter_chart(s["points"])} for s in found["scatters"]]
    return render(request, "trends.html", question_set=question_set, trends=found, lines=lines, scatters=scatters)
