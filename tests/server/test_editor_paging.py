"""The editor of a long question set shows one page of questions (100), numbered as in the whole set, with a pager
and a search (`?q=`: question or ground truth, any case), instead of one page of every question (a set of 1,101
was 540 KB); a set that fits one page is edited whole as before."""

from __future__ import annotations

import json
import re

QUESTIONS = 1_101


def initial(page: str) -> list[dict]:
    return json.loads(re.search(r'<script type="application/json" id="initial-questions">(.*?)</script>', page,
                                re.S).group(1))


def state(page: str) -> dict:
    return json.loads(re.search(r'id="editor-state">(.*?)</script>', page, re.S).group(1))


def test_a_long_set_is_edited_a_page_at_a_time(api):
    questions = [{"question_type": "FACTUAL", "question_text": f"question {i} " + "词" * 150,
                  "ground_truth": "Steam it" if i == 777 else f"truth {i}"} for i in range(1, QUESTIONS + 1)]
    made = api.post("/api/v1/question-sets", {"name": "long", "questions": questions}, expect=201)
    first = api.client.get(f"/evaluations/question-sets/{made['id']}")
    assert len(first.content) < 150_000  # it was the whole set: over 540 KB
    shown = initial(first.text)
    assert [q["number"] for q in shown] == list(range(1, 101)) and state(first.text)["paged"] is True
    assert state(first.text)["total"] == QUESTIONS
    assert 'href="?page=2" rel="next"' in first.text and "page 1 of 12 (1101)" in first.text
    third = initial(api.client.get(f"/evaluations/question-sets/{made['id']}?page=3").text)
    assert [q["number"] for q in third] == list(range(201, 301))
    assert third[0]["question_text"].startswith("question 201 ")
    found = api.client.get(f"/evaluations/question-sets/{made['id']}?q=steam%20IT").text
    assert [(q["number"], q["ground_truth"]) for q in initial(found)] == [(777, "Steam it")]
    assert "1 of the 1101 questions hold “steam IT”." in re.sub(r"\s+", " ", found)
    past = initial(api.client.get(f"/evaluations/question-sets/{made['id']}?page=99").text)
    assert [q["number"] for q in past] == list(range(1101, 1102))  # past the end: the last page
    chinese = api.client.get(f"/evaluations/question-sets/{made['id']}", headers={"Accept-Language": "zh"}).text
    assert "共 1101 个问题，每页 100 个。" in chinese


def test_a_short_set_is_edited_whole(api):
    made = api.post("/api/v1/question-sets", {"name": "short", "questions": [
        {"question_type": "FACTUAL", "question_text": f"q{i}", "ground_truth": ""} for i in range(100)]}, expect=201)
    page = api.client.get(f"/evaluations/question-sets/{made['id']}").text
    assert len(initial(page)) == 100 and state(page)["paged"] is False and 'rel="next"' not in page
