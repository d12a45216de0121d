"""On the web too the checks' aggregates have names of their own (``checks_score``, ``checks_correctness``): with the
``correctness`` judge on, a result holds both, the summary averages both apart, and the page shows both. Results
stored before (``score``, and ``correctness`` as a number when no judge had that name) read under today's names."""

from __future__ import annotations

import csv
import io
import json
import re

from sqlalchemy import create_engine, update

from ragretrieval.runs.schema import evaluation_results

from .review import reviewed_evaluation

JUDGE_YES = {"value": 1, "reasoning": "right"}
STORED = [  # position -> checks as stored
    {"include": True, "checks_correctness": 0.5, "checks_score": 0.75, "correctness": JUDGE_YES},  # today's
    {"include": False, "score": 0.25, "correctness": {"value": 0, "reasoning": "wrong"}},  # before, judged
    {"include": True, "correctness": 0.5, "score": 0.5},  # before, no correctness judge: the number is the checks'
]


def stored_evaluation(api, db_url) -> dict:
    created = reviewed_evaluation(api, db_url, answered=len(STORED))
    R = evaluation_results.c
    with create_engine(db_url).begin() as conn:
        for position, checks in enumerate(STORED):
            conn.execute(update(evaluation_results).where(R.evaluation_id == created["id"], R.position == position)
                         .values(checks=json.dumps(checks)))
    return created


def test_the_checks_aggregates_and_the_judge_of_the_same_name_are_kept_apart(api, db_url):
    created = stored_evaluation(api, db_url)
    shown = api.get(f"/api/v1/evaluations/{created['id']}")
    means = shown["summary"]["checks"]
    assert means["checks_score"] == (0.75 + 0.25 + 0.5) / 3
    assert means["checks_correctness"] == 0.5  # the two results that have it, never the judge's verdicts
    assert means["correctness"] == 0.5  # the judge: yes, no
    assert not {"score", "safety"} & set(means)
    assert shown["failed_judges"] == [] and api.get("/api/v1/evaluations")["items"][0]["failed_judges"] == []
    checks = [r["checks"] for r in shown["results"]]
    assert checks[0]["checks_correctness"] == 0.5 and checks[0]["correctness"] == JUDGE_YES
    assert checks[1] == {"include": False, "checks_score": 0.25, "correctness": {"value": 0, "reasoning": "wrong"}}
    assert checks[2] == {"include": True, "checks_correctness": 0.5, "checks_score": 0.5}
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", api.client.get(f"/evaluations/{created['id']}").text))
    assert "checks_correctness 0.500" in page and "checks_correctness 0.50" in page  # the means, a card
    assert "correctness 0.500" in page  # the judge's mean, in its own table
    assert "check score 0.75" in page and "check score 0.25" in page


def test_the_export_names_the_checks_aggregate_apart_from_the_judge(api, db_url):
    created = stored_evaluation(api, db_url)
    text = api.client.get(f"/api/v1/evaluations/{created['id']}/export?format=csv").text.lstrip("\ufeff")
    header, *rows = csv.reader(io.StringIO(text))
    assert "checks_correctness" in header and "correctness" in header and "score" not in header
    column = {name: [row[header.index(name)] for row in rows[:3]]
              for name in ("check_score", "checks_correctness", "correctness")}
    assert column == {"check_score": ["0.75", "0.25", "0.5"], "checks_correctness": ["0.5", "", "0.5"],
                      "correctness": ["1", "0", ""]}  # a stored number under the judge's name was the checks'
