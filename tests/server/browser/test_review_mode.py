"""The review mode and the trends page in Chromium, in English and Chinese at 1024 and 1400 px: ten answers reviewed
by keyboard alone (1, 2, 3 give the verdict and move on; j and k move; Enter goes to the next unreviewed one), with a
colleague's verdict saved meanwhile (409) resolved once by "Use mine" and once by "Keep theirs" without losing the
note typed; the summary's kappa of a judge that never varied reads "undefined", with the small-sample note; and the
question set's trends: one SVG chart and one table per metric, quality against cost and latency with the Pareto
front, nothing wider than the window."""

from __future__ import annotations

import json
import zlib

import pytest

from ragretrieval.testing.chat_server import ChatServer, Reply

from ..conftest import wait_for
from .conftest import fits, in_view, open_page, shot

CASES = [("en-US", 1400), ("en-US", 1024), ("zh-CN", 1400), ("zh-CN", 1024)]
WORDS = {"en-US": {"use_mine": "Use mine", "keep": "Keep theirs", "undefined": "kappa undefined: the judge gave "
                   "every answer 4", "small": "normal intervals on fewer than 30 labels are optimistic",
                   "trends": "Trends", "front": "Pareto front"},
         "zh-CN": {"use_mine": "用我的", "keep": "保留对方的", "undefined": "kappa 无法计算：评判器给每个答案都打了 4",
                   "small": "少于 30 个标注时，正态区间偏乐观", "trends": "趋势", "front": "帕累托前沿"}}


def harsh(request: dict) -> Reply:
    """A judge that gives 1 or 2 (by question): the third evaluation's judge score drops, significantly."""
    return Reply(json.dumps({"score": 2 - zlib.crc32(json.dumps(request["messages"]).encode()) % 2,
                             "reasoning": "不对"}, ensure_ascii=False))


@pytest.fixture(scope="module")
def reviewed(server, services):
    """One set of 24 questions with reference answers, evaluated twice by the test model and judged by score5
    (whose verdict is always 4): the first evaluation for the English walks, the second for the Chinese ones; then a
    third time judged harshly, for the trends' marker."""
    import httpx

    from ..conftest import Api

    _, model = services
    api = Api(httpx.Client(base_url=server.url, timeout=30))
    questions = [{"question_type": "FACTUAL", "question_text": f"第 {i} 题：红烧肉要炖多久？", "ground_truth": f"{40 + i} 分钟"}
                 for i in range(24)]
    question_set = api.post("/api/v1/question-sets", {"name": "review walk", "dataset": "dataset",
                                                      "questions": questions}, expect=201)
    made = []
    with ChatServer(harsh) as strict:
        for name, judge_url in (("walk one", model.url), ("walk two", model.url), ("harsh judge", strict.url)):
            eval_id = api.post("/api/v1/evaluations", {
                "name": name, "dataset": "dataset", "question_set_id": question_set["id"], "retriever": "bm25",
                "generator": "openai:test-model", "base_url": model.url, "judge": "score5",
                "judge_model": "judge-model", "judge_base_url": judge_url,
                "options": {"price_in": 1.0, "price_out": 2.0}}, expect=201)["id"]
            done = wait_for(lambda eid=eval_id: (e := api.get(f"/api/v1/evaluations/{eid}?limit=0"))["status"] in (
                "COMPLETED", "FAILED") and e, timeout=180, what="the end of the evaluation")
            assert done["status"] == "COMPLETED", done["error"]
            made.append(eval_id)
    yield api, made, question_set["id"]
    api.client.close()


def current(page) -> str:
    return page.locator("#review-item").get_attribute("data-question")


def moved_from(page, question: str) -> str:
    page.wait_for_function("q => document.getElementById('review-item')?.dataset.question !== q", arg=question)
    return current(page)


def annotation(api, eval_id: str, question: str) -> dict | None:
    return api.get(f"/api/v1/evaluations/{eval_id}/review/items/{question}")["result"]["annotation"]


@pytest.mark.parametrize("locale, width", CASES)
def test_ten_answers_reviewed_by_keyboard_with_a_conflict_resolved(browser, server, reviewed, locale, width):
    from playwright.sync_api import expect

    api, made, _ = reviewed
    eval_id = made[0] if locale == "en-US" else made[1]
    words = WORDS[locale]
    reviewer = f"ana-{width}"
    page = open_page(browser, server, width=width, locale=locale)
    try:
        page.goto(f"/evaluations/{eval_id}")
        page.click("#review-link")
        page.wait_for_url(f"**/evaluations/{eval_id}/review")
        expected = api.get(f"/api/v1/evaluations/{eval_id}/review/next")["result"]["question_id"]
        assert current(page) == expected  # the page opens on the API's next question
        page.fill("#reviewer", reviewer)  # asked once, kept in this browser
        page.press("#reviewer", "Enter")
        page.evaluate("document.activeElement.blur()")
        # j and k move along the order without a verdict; Enter comes back to the next unreviewed one
        first = current(page)
        following = page.locator("#review-item").get_attribute("data-next")
        page.keyboard.press("j")
        assert moved_from(page, first) == following
        page.keyboard.press("k")
        assert moved_from(page, following) == first
        given = {}
        for number in range(10):
            question = current(page)
            key = "123"[number % 3]
            verdict = {"1": "correct", "2": "partly_correct", "3": "incorrect"}[key]
            if number in (4, 7):  # a colleague saves a verdict on this answer meanwhile
                api.put(f"/api/v1/evaluations/{eval_id}/results/{question}/annotation",
                        {"verdict": "correct", "note": "theirs", "version": 0, "reviewer": "bo"})
                note = f"my note {number}: 火候不够"
                page.fill("#review-note", note)
                page.keyboard.press("Escape")  # out of the note box: keys are verdicts again
                page.keyboard.press(key)
                conflict = page.locator("#review-conflict")
                expect(conflict).to_be_visible()
                expect(conflict).to_contain_text("bo")
                expect(conflict).to_contain_text(note)  # the note typed is shown, not lost
                if number == 4:
                    if width == 1400 and locale == "en-US":
                        shot(page, "review-conflict", part=page.locator("#review-item"))
                    conflict.get_by_role("button", name=words["use_mine"]).click()
                    moved_from(page, question)
                    saved = annotation(api, eval_id, question)
                    assert (saved["verdict"], saved["note"], saved["reviewer"], saved["version"]) == (
                        verdict, note, reviewer, 2)
                    given[question] = verdict
                else:
                    conflict.get_by_role("button", name=words["keep"]).click()
                    expect(page.locator("#review-conflict")).to_be_hidden()
                    expect(page.locator("#review-note")).to_have_value(note)  # kept as a draft, not saved
                    assert annotation(api, eval_id, question)["note"] == "theirs"
                    page.reload()  # the draft survives a reload too
                    expect(page.locator("#review-note")).to_have_value(note)
                    page.evaluate("document.activeElement.blur()")
                    page.keyboard.press("Enter")  # theirs stands: on to the next unreviewed answer
                    moved_from(page, question)
                continue
            page.keyboard.press(key)
            moved_from(page, question)  # it moves on by itself after a verdict
            given[question] = verdict
        for question, verdict in given.items():
            saved = annotation(api, eval_id, question)
            assert (saved["verdict"], saved["reviewer"]) == (verdict, reviewer)
        assert len(given) == 9  # ten answers: nine verdicts of ours, one of theirs kept
        summary = page.locator("#review-summary")
        expect(summary.locator("tr[data-judge='score5'] .kappa")).to_have_text(words["undefined"])
        expect(summary.locator(".small-sample")).to_contain_text(words["small"])
        assert fits(page) and in_view(page.locator("#judge-agreement")) and in_view(page.locator("#review-item"))
        if width == 1400 and locale == "en-US":
            shot(page, "review", height=1000)
        conflicts = [e for e in page.errors if "status of 409" in e]  # the browser logs the two refused saves
        assert len(conflicts) == 2 and len(page.errors) == 2, page.errors
    finally:
        page.context.close()


@pytest.mark.parametrize("locale, width", CASES)
def test_the_trends_page_charts_each_metric_with_a_table(browser, server, reviewed, locale, width):
    from playwright.sync_api import expect

    api, made, set_id = reviewed
    words = WORDS[locale]
    found = api.get(f"/api/v1/question-sets/{set_id}/trends")
    page = open_page(browser, server, width=width, locale=locale)
    try:
        page.goto(f"/evaluations/question-sets/{set_id}")
        page.click("#trends-link")
        expect(page.locator("h1")).to_contain_text(words["trends"])
        charts = page.locator("#trend-lines figure.chart")
        expect(charts).to_have_count(len(found["metrics"]))
        for number in range(charts.count()):
            chart = charts.nth(number)
            assert in_view(chart.locator("svg"))
            expect(chart.locator("circle.point")).to_have_count(len(made))
            chart.locator("details.table-view summary").click()
            rows = chart.locator("tbody tr")
            expect(rows).to_have_count(len(made))
            metric = chart.get_attribute("data-metric")
            first = found["points"][0]["values"][metric]
            cell = rows.first.locator("td.value")
            assert float(cell.inner_text()) == pytest.approx(first, rel=1e-2, abs=1e-3)
            assert in_view(rows.first)
        judge = page.locator('#trend-lines figure[data-metric="judge_score"]')
        expect(judge.locator("path.marker.down")).to_have_count(1)  # the harsh judge: a significant drop
        expect(judge.locator("tbody tr").nth(2).locator("td.change")).to_contain_text("▼")
        assert found["markers"]["judge_score"][made[2]]["direction"] == "down"
        scatters = page.locator("#trend-scatters figure.chart")
        expect(scatters).to_have_count(len(found["scatters"]))
        assert len(found["scatters"]) == 2  # against cost and against latency
        for number in range(scatters.count()):
            scatter = scatters.nth(number)
            expect(scatter.locator("circle.on-front")).to_have_count(
                sum(p["front"] for p in found["scatters"][number]["points"]))
            expect(scatter.locator("thead")).to_contain_text(words["front"])
        assert fits(page)
        if width == 1400 and locale == "zh-CN":
            shot(page, "trends", height=1100)
        assert page.errors == []
    finally:
        page.context.close()
