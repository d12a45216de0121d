"""The new-evaluation form lists the judges in the design's order; a Chinese page says in Chinese what the server
names: each judge's description on the form, and the failure classes on an evaluation's page (the summary's counts
and each card's class)."""

from __future__ import annotations

import html as html_text
import json
import re

from sqlalchemy import create_engine, update

from ragretrieval.answers.judges.registry import SUMMARY
from ragretrieval.runs.schema import evaluation_results

from .review import reviewed_evaluation

ZH = {"Accept-Language": "zh-CN"}


def text(html: str) -> str:
    return html_text.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_the_form_describes_each_judge_in_chinese(api):
    api.post("/api/v1/question-sets", {"name": "s", "questions": [{"question_text": "q?"}]}, expect=201)
    page = text(api.client.get("/evaluations/new", headers=ZH).text)
    assert "是/否：没有有害内容 -> response/llm_judged/safety/rating" in page
    assert "对照标准答案打 1-5 分，附理由" in page
    assert not [what for what in SUMMARY.values() if what in page]  # no English description left
    english = text(api.client.get("/evaluations/new").text)
    assert all(what in english for what in SUMMARY.values())


def test_failure_classes_are_named_in_chinese(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=3)
    R = evaluation_results.c
    with create_engine(db_url).begin() as conn:
        conn.execute(update(evaluation_results).where(R.evaluation_id == created["id"], R.position == 0)
                     .values(answer_record=json.dumps({"failure_class": "retrieval_miss"})))
    html = api.client.get(f"/evaluations/{created['id']}", headers=ZH).text
    assert re.search(r'<a class="failure-class" [^>]*>检索未命中</a>', html)  # the card's class
    assert re.search(r'data-class="retrieval_miss"[^>]*><code>检索未命中</code> 1</a>', html)  # the summary's count


def test_the_form_lists_the_judges_in_the_design_s_order(api):
    api.post("/api/v1/question-sets", {"name": "s", "questions": [{"question_text": "q?"}]}, expect=201)
    page = api.client.get("/evaluations/new").text
    listed = re.findall(r'<input type="checkbox" name="judge" value="([^"]+)"', page)
    assert listed[:8] == ["score5", "correctness", "groundedness", "relevance_to_query", "safety", "chunk_relevance",
                          "context_sufficiency", "nuggets"]  # docs/web.md, "Judges"; plug-ins after


def test_an_api_refusal_carries_the_pages_wording(api):
    """A page's script shows `message` (the refusal in its language); `detail` stays English for scripts."""
    chinese = api.request("GET", "/api/v1/compare?ids=a", expect=400, headers=ZH).json()
    assert chinese["message"] == "ids：对比需要 2 或 3 个以逗号分隔的评测；收到 1 个"
    assert chinese["detail"].startswith("ids: compare takes 2 or 3 evaluations")
    missing = api.request("GET", "/api/v1/evaluations/no-such-id", expect=404, headers=ZH).json()
    assert missing["message"].startswith("没有评测") and missing["detail"].startswith("no evaluation")
    assert "message" not in api.request("GET", "/api/v1/compare?ids=a", expect=400).json()
