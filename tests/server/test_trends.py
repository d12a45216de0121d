"""A question set's trends (store/trends.py, charts.py, routes/trends.py): one point per completed evaluation in
time order with each headline metric, a marker exactly where `compare` finds a significant change from the one
before, quality against cost and latency with the Pareto front, server-drawn SVG with a table for each chart, and
the Pareto front against a brute-force definition."""

from __future__ import annotations

import itertools
import json
import re
import zlib

import pytest

from ragretrieval.server.charts import line_chart, scatter_chart
from ragretrieval.server.store.trends import pareto_front
from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply

from .conftest import CORPUS, wait_for

pytestmark = pytest.mark.databases  # the evaluations' order and summaries are read with SQL


def verdict(request: dict) -> Reply:
    """score5 from 4 to 5 for the lenient judge, 1 to 2 for the harsh one (varying by question: a paired test needs
    differences that vary)."""
    high = 5 if request["model"] == "lenient" else 2
    return Reply(json.dumps({"score": high - zlib.crc32(json.dumps(request["messages"]).encode()) % 2,
                             "reasoning": "r"}))


@pytest.fixture
def trended(api, monkeypatch, in_process_worker):
    """Three completed evaluations of one set of 8 questions, in that order: judged leniently, harshly, leniently
    (score5 by the test model), so the judge score drops significantly, then recovers."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    questions = [{"question_type": "FACTUAL", "question_text": f"如何做清蒸鲈鱼？ {i}", "ground_truth": f"大火蒸 {i} 分钟"}
                 for i in range(8)]
    opened = api.post("/api/v1/question-sets", {"name": "trend", "questions": questions}, expect=201)
    made = []
    with ChatServer(verdict) as server:
        for name, judge in (("lenient", "lenient"), ("harsh", "harsh"), ("lenient again", "lenient")):
            created = api.post("/api/v1/evaluations", {
                "name": name, "dataset": CORPUS, "question_set_id": opened["id"], "retriever": "bm25",
                "generator": "extractive", "judge": "score5", "judge_model": judge, "judge_base_url": server.url,
                "options": {"max_retries": 0}}, expect=201)
            done = wait_for(lambda eid=created["id"]: (e := api.get(f"/api/v1/evaluations/{eid}?limit=0"))["status"] in (
                "COMPLETED", "FAILED") and e, what="the evaluation to end")
            assert done["status"] == "COMPLETED", done["error"]
            made.append(done)
    return api, made, opened


def test_one_point_per_evaluation_in_time_order_with_the_compare_markers(trended):
    api, made, opened = trended
    found = api.get(f"/api/v1/question-sets/{opened['id']}/trends")
    assert [p["id"] for p in found["points"]] == [e["id"] for e in made]
    assert found["metrics"][0] == "judge_score" and "latency" in found["metrics"]
    for before, after in itertools.pairwise(made):
        compared = api.get(f"/api/v1/compare?ids={before['id']},{after['id']}&limit=0")
        for metric in found["metrics"]:
            level, name = {"check_score": ("answer", "score"), "judge_score": ("answer", "average_score")}.get(
                metric, ("doc", metric[4:]) if metric.startswith("doc/") else (None, None))
            row = compared["levels"].get(level, {}).get("metrics", {}).get(name) if level else None
            marked = found["markers"][metric].get(after["id"])
            assert bool(marked) == bool(row and row["significant"]), (metric, row, marked)
            if marked:
                assert marked["direction"] == ("up" if row["diff"] > 0 else "down")
    assert found["markers"]["judge_score"][made[1]["id"]]["direction"] == "down"
    assert found["markers"]["judge_score"][made[2]["id"]]["direction"] == "up"
    latency = next(s for s in found["scatters"] if s["x"] == "latency")
    points = [(p["y"], p["x"]) for p in latency["points"]]
    assert {i for i, p in enumerate(latency["points"]) if p["front"]} == pareto_front(points)

    # the page: one SVG and one table per chart, no script, in English and Chinese
    page = api.client.get(f"/evaluations/question-sets/{opened['id']}/trends")
    assert page.status_code == 200
    figures = re.findall(r"<figure class=\"chart", page.text)
    assert len(figures) == page.text.count("<svg") == page.text.count('<details class="table-view">') == 3
    assert "<script" not in page.text.split("<main>")[1].split("</main>")[0] and "https://" not in page.text
    assert page.text.count("<circle") == 3 * 3  # judge score, latency, judge score against latency
    chinese = api.client.get(f"/evaluations/question-sets/{opened['id']}/trends", headers={"Accept-Language": "zh"})
    assert "趋势" in chinese.text and "帕累托前沿" in chinese.text
    assert api.request("GET", "/api/v1/question-sets/qs_0000000000000000/trends").status_code == 404


def test_pareto_front_is_the_brute_force_definition():
    import random

    rng = random.Random(3)
    for _ in range(200):
        points = [(rng.choice([0.1, 0.5, 0.9]), rng.choice([1, 2, 3])) for _ in range(rng.randint(1, 7))]
        expected = {i for i, (q, c) in enumerate(points)
                    if not any(q2 >= q and c2 <= c and (q2, c2) != (q, c) for q2, c2 in points)}
        assert pareto_front(points) == expected


def test_chart_geometry_keeps_gaps_and_single_points_inside_the_box():
    chart = line_chart([0.5, None, 0.7])
    assert chart["points"][1] is None and chart["path"].count("M") == 2
    one = line_chart([3.0])
    assert one["left"] <= one["points"][0]["x"] <= one["right"] and one["top"] <= one["points"][0]["y"]
    assert line_chart([None])["points"] == []
    scatter = scatter_chart([{"x": 1.0, "y": 0.5, "front": True, "name": "a", "id": "e"}])
    assert scatter["front"] and scatter["left"] <= scatter["points"][0]["cx"] <= scatter["right"]
