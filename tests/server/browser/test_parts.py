"""Parts of the pages read in Chromium, not only checked for sideways scrolling: a long question set's editor a
page at a time (a question on page 3 edited and saved), and, in English and Chinese at 1024 and 1400 px, the
three-way compare's metric names whole, the reviewer-agreement table unclipped and the editor's Delete button on
one line."""

from __future__ import annotations

import pytest

from .conftest import fits, open_page

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
        rows.nth(0).locator("textarea.question_text").fill("")  # emptied: the refusal names it by its number
        rows.nth(0).locator("textarea.ground_truth").fill("")
        page.click("#save")
        expect(page.locator("#flash")).to_contain_text("Rows 205 are empty")
        assert api.get(f"/api/v1/question-sets/{made['id']}")["questions"][204]["question_text"] == texts[204]
        assert page.errors == []
    finally:
        page.context.close()


WALKS = [(1024, "en-US"), (1400, "en-US"), (1024, "zh-CN"), (1400, "zh-CN")]
VERDICTS = ["correct", "incorrect", "partly_correct", "correct", "correct", "incorrect"]

# A cell's words cut: wider than its cell (clipped), or its longest word broken over lines (a cell 2-3 characters
# wide). The longest word is measured alone, on one line, in the cell's own font.
CUT_CELLS = """(selector) => {
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
  document.body.append(probe);
  const cut = [];
  for (const cell of document.querySelectorAll(selector)) {
    const style = getComputedStyle(cell);
    probe.style.font = style.font;
    const words = cell.textContent.trim().split(/\\s+/).filter(Boolean);
    const longest = Math.max(0, ...words.map((w) => { probe.textContent = w.slice(0, 24); return probe.offsetWidth; }));
    const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (cell.scrollWidth > cell.clientWidth + 1 || inner + 1 < longest) cut.push(cell.textContent.trim().slice(0, 40));
  }
  probe.remove();
  return cut;
}"""

# Whether a table can be read whole: inside the window, or inside a wrapper that scrolls sideways to it; and no
# ancestor that hides what passes its edge.
TABLE_REACHABLE = """(selector) => {
  const table = document.querySelector(selector);
  const right = table.getBoundingClientRect().right;
  for (let node = table.parentElement; node && node !== document.body; node = node.parentElement) {
    const style = getComputedStyle(node);
    const box = node.getBoundingClientRect();
    if (['auto', 'scroll'].includes(style.overflowX)) {
      return box.right <= window.innerWidth + 1 && node.scrollWidth >= table.offsetWidth - 1;
    }
    if (['hidden', 'clip'].includes(style.overflowX) && box.right + 1 < right) return false;
  }
  return right <= window.innerWidth + 1;
}"""


def judged_reply(request: dict):
    """The browser tests' model; as the judge, a verdict from 1 to 5 that depends on the question."""
    import json
    import zlib

    from ragretrieval.testing.chat_server import Reply

    from .conftest import model_reply

    if request["model"] != "judge-model":
        return model_reply(request)
    score = 1 + zlib.crc32(request["messages"][-1]["content"].encode("utf-8")) % 5
    return Reply(json.dumps({"score": score, "reasoning": f"verdict {score}"}))


@pytest.fixture(scope="module")
def made(server):
    """Three evaluations of the demo corpus's questions (the extractive baseline with 3, 1 and 2 contexts), and one
    judged by score5 with six answers reviewed."""
    import httpx

    from ragretrieval.testing.chat_server import ChatServer

    from ..conftest import Api, wait_for

    api = Api(httpx.Client(base_url=server.url, timeout=30))
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": "dataset"}, expect=201)
    made = {}
    with ChatServer(judged_reply) as model:
        for name, k in (("k3", 3), ("k1", 1), ("k2", 2)):
            made[name] = api.post("/api/v1/evaluations", {
                "name": name, "dataset": "dataset", "retriever": "bm25", "question_set_id": opened["id"],
                "generator": "extractive", "options": {"context_k": k}}, expect=201)["id"]
        questions = [{"question_type": "FACTUAL", "question_text": f"第 {i} 题：红烧肉要炖多久？", "ground_truth": f"{40 + i} 分钟"}
                     for i in range(12)]
        judged_set = api.post("/api/v1/question-sets", {"name": "judged", "dataset": "dataset",
                                                        "questions": questions}, expect=201)
        made["judged"] = api.post("/api/v1/evaluations", {
            "name": "judged", "dataset": "dataset", "retriever": "bm25", "question_set_id": judged_set["id"],
            "generator": "openai:test-model", "base_url": model.url, "judge": "score5", "judge_model": "judge-model",
            "judge_base_url": model.url}, expect=201)["id"]
        for eval_id in made.values():
            done = wait_for(lambda eid=eval_id: (e := api.get(f"/api/v1/evaluations/{eid}?limit=0"))["status"]
                            in ("COMPLETED", "FAILED") and e, timeout=180, what="the end of the evaluation")
            assert done["status"] == "COMPLETED", done["error"]
    results = api.get(f"/api/v1/evaluations/{made['judged']}?limit=6")["results"]
    for result, verdict in zip(results, VERDICTS):
        api.put(f"/api/v1/evaluations/{made['judged']}/results/{result['question_id']}/annotation",
                {"verdict": verdict, "version": 0, "reviewer": "reviewer with a long name"})
    made["set"] = opened["id"]
    yield made
    api.client.close()


@pytest.mark.parametrize(("width", "locale"), WALKS)
def test_compare_agreement_and_editor_parts_are_whole(browser, server, made, width, locale):
    page = open_page(browser, server, width=width, locale=locale)
    try:
        page.goto(f"/compare?ids={made['k3']},{made['k1']},{made['k2']}")
        assert page.locator("table.compare td.metric").count() > 10
        assert page.evaluate(CUT_CELLS, "table.compare td.metric") == [], "metric names cut"
        assert page.evaluate(CUT_CELLS, "table.compare th") == [], "compare headings cut"
        assert page.evaluate(TABLE_REACHABLE, "table.compare"), "the compare table cannot be scrolled to"
        assert fits(page)
        for path, selector in ((f"/evaluations/{made['judged']}", "#reviewed table.agreement"),
                               (f"/evaluations/{made['judged']}/review", "#judge-agreement")):
            page.goto(path)
            assert page.locator(selector).count() == 1, path
            assert page.evaluate(CUT_CELLS, f"{selector} th, {selector} td") == [], (path, "agreement cells cut")
            assert page.evaluate(TABLE_REACHABLE, selector), (path, "the agreement table is clipped")
            assert fits(page), path
        page.goto(f"/evaluations/question-sets/{made['set']}")
        assert page.evaluate(CUT_CELLS, "table.questions button.remove") == [], "Delete broken over lines"
        delete = page.locator("table.questions button.remove").first
        box = delete.bounding_box()
        line = page.evaluate("(b) => parseFloat(getComputedStyle(b).lineHeight) || 20", delete.element_handle())
        assert box["height"] < line * 2.2 and box["width"] > box["height"], box
        assert page.errors == []
    finally:
        page.context.close()
