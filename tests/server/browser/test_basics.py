"""The pages as a person uses them, in Debian's headless Chromium driven by playwright, against `ragretrieval serve`
running as a process with its built-in engine: type a question set, import a CSV, evaluate it with the extractive
baseline (no model, no network) and watch it reach 100 %, open every card; open a corpus's questions as a set and
evaluate it with a model (the OpenAI-compatible test server); generate questions with that model; pause and resume
an evaluation answered by a RAG service from the list; and `<script>` in a question and in an answer stays text.
More flows: test_flows.py (editing a set, the form, the live page), test_layout.py (widths, long texts, Markdown,
lists, imports, languages).
"""

from __future__ import annotations

import re

from ..conftest import new_evaluation, new_set, wait_for
from .conftest import CSV_TEXT as CSV
from .conftest import EVIL, shot


def test_a_set_typed_and_imported_is_evaluated_by_the_extractive_baseline(page):
    from playwright.sync_api import expect

    page.goto("/evaluations/question-sets/new")
    page.fill('input[name="name"]', "菜谱 <b>手写</b>")
    page.click("#add-row")
    page.click("#add-row")
    rows = page.locator("tr.question-row")
    rows.nth(0).locator("textarea.question_text").fill("宫保鸡丁放什么辣椒？")
    rows.nth(0).locator("textarea.ground_truth").fill("干辣椒")
    rows.nth(1).locator("select.type").select_option("INFERENTIAL")
    rows.nth(1).locator("textarea.question_text").fill("为什么要先腌肉？")
    page.set_input_files("#import-file", files=[{"name": "questions.csv", "mimeType": "text/csv",
                                                 "buffer": CSV.encode("utf-8")}])
    expect(page.locator("#flash")).to_have_text("Added 3 question(s) from questions.csv.")
    expect(rows).to_have_count(5)
    assert rows.nth(3).locator("textarea.ground_truth").input_value() == 'It gives the colour\nand the "caramel" taste'
    assert rows.nth(4).locator("select.type").input_value() == "USER_DEFINED"
    shot(page, "question-set-editor")
    page.click("#save")
    page.wait_for_url(re.compile(r"/evaluations/question-sets/qs_[0-9a-f]{16}\?created=1$"))
    expect(page.locator("h1")).to_have_text("菜谱 <b>手写</b>")
    expect(rows).to_have_count(5)
    assert rows.nth(1).locator("select.type").input_value() == "INFERENTIAL"
    assert rows.nth(2).locator("textarea.ground_truth").input_value() == "小火炖 40 分钟, 再大火收汁"

    page.click("text=Evaluate this set")
    page.fill('input[name="name"]', "extractive baseline")
    expect(page.locator('input[name="system"][value="extractive"]')).to_be_checked()  # the default: no model
    expect(page.locator('#judges input[name="judge"][value="score5"]')).to_have_count(1)  # the registry's judges
    expect(page.locator('#judges input[name="judge"]:checked')).to_have_count(0)  # none unless chosen
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    expect(page.locator("#summary .percent")).to_have_text("100 %", timeout=300_000)  # m3e loads first
    expect(page.locator("#summary .status")).to_have_text("COMPLETED")
    expect(page.locator("#summary .average-label")).to_have_text("no judge score")
    expect(page.locator("#new-results")).to_be_visible()
    page.click("#new-results a")
    expect(page.locator("#summary")).to_contain_text("Stored run")
    cards = page.locator("article.card")
    expect(cards).to_have_count(5)
    for number, (question, truth) in enumerate([("宫保鸡丁放什么辣椒？", "干辣椒"), ("为什么要先腌肉？", "–"),
                                                ("红烧肉要炖多久？", "小火炖 40 分钟, 再大火收汁"),
                                                ("Why brown the sugar first, before the meat?", None),
                                                ("没有类型的问题", "–")]):
        card = cards.nth(number)
        expect(card.locator(".question")).to_have_text(question)
        if truth:
            expect(card.locator(".truth .text")).to_have_text(truth)
        expect(card.locator(".answer .text")).not_to_have_text("–")  # sentences of the contexts, or the refusal
        expect(card.locator(".score")).to_have_count(0)  # no judge: no score shown, not a zero
        expect(card.locator("details.sources > summary")).to_have_text(re.compile(r"^Sources \(5(, \d cited)?\)$"))
        expect(card.locator("footer")).to_contain_text(" s")  # its latency
    first = cards.nth(0)
    expect(first.locator(".answer .text")).to_contain_text("[0]")  # it cites the contexts it quotes
    first.locator("details.sources > summary").click()
    expect(first.locator("details.sources li.cited").first).to_contain_text("cited")
    expect(page.locator("#score-filter")).to_have_count(0)
    assert page.errors == []


def answered_by_the_model(page, url: str) -> None:
    """The form's choice of the test model at `url`, with bm25."""
    page.check('input[name="system"][value="openai"]')
    page.fill('input[name="openai_model"]', "test-model")
    page.fill('input[name="base_url"]', url)
    page.select_option('select[name="retriever"]', "bm25")


def test_a_corpus_s_questions_answered_by_a_model(page, services):
    from playwright.sync_api import expect

    _, model = services
    page.goto("/evaluations/question-sets")
    page.locator("button", has_text="Open questions as a set").first.click()
    page.wait_for_url(re.compile(r"/evaluations/question-sets/qs_[0-9a-f]{16}"))
    page.click("text=Evaluate this set")
    page.fill('input[name="name"]', "model with bm25")
    answered_by_the_model(page, model.url)
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    expect(page.locator("#summary .status")).to_have_text("COMPLETED", timeout=120_000)
    page.reload()
    cards = page.locator("article.card")
    expect(cards.first.locator(".answer .text")).to_have_text("根据文档 [0]，做法见上 [1]。")
    expect(cards.first.locator("ul.checks li", has_text="cite_f1")).to_have_count(1)  # its relevant documents
    expect(cards.first.locator("footer")).to_contain_text("tokens")
    expect(page.locator("table.means.grid[data-level=\"doc\"] td[title=\"doc/recall@5\"]")).to_have_count(1)
    expect(page.locator("#summary")).to_contain_text("Stored run")
    cards.first.locator("details.sources > summary").click()
    expect(cards.first.locator("details.sources li.cited")).to_have_count(2)
    shot(page, "evaluation-detail", height=2400)
    assert page.errors == []


def test_a_judge_scores_each_answer_on_the_page(page, api, services):
    from playwright.sync_api import expect

    _, model = services
    question_set = new_set(api, 3, name="judged set")
    page.goto(f"/evaluations/new?question_set={question_set['id']}")
    page.fill('input[name="name"]', "judged by score5")
    answered_by_the_model(page, model.url)
    page.check('input[name="judge"][value="score5"]')
    page.fill('input[name="judge_model"]', "judge-model")  # at the model's base URL: the judge field is empty
    page.fill('input[name="judge_samples"]', "3")  # each verdict the majority of 3 requests
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    expect(page.locator("#summary .status")).to_have_text("COMPLETED", timeout=120_000)
    assert api.get(f"/api/v1/evaluations/{page.url.rsplit('/', 1)[1]}?limit=0")["options"] == {"judge_samples": 3}
    page.reload()
    expect(page.locator("#summary .average")).to_have_text("4")
    cards = page.locator("article.card")
    expect(cards).to_have_count(3)
    expect(cards.locator(".judge-score .score")).to_have_text(["4", "4", "4"])
    expect(cards.first.locator(".reasoning .text")).to_have_text("做法对，<b>火候</b>没说")  # text, not markup
    expect(page.locator("#score-filter")).to_be_visible()
    assert page.errors == []


def test_pause_and_resume_from_the_list(page, api, services):
    from playwright.sync_api import expect

    rag, _ = services
    rag.delay = 0.25
    try:
        question_set = new_set(api, 24, name="slow set")
        eval_id = new_evaluation(api, question_set["id"], rag.url, name="slow one")["id"]
        page.goto("/evaluations/list")
        row = page.locator(f'tr.evaluation[data-id="{eval_id}"]')
        wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["completed_questions"] >= 2,
                 what="two answers")
        row.locator('button[data-action="pause"]').click()
        expect(row.locator(".status")).to_have_text("PAUSED")
        expect(row.locator('button[data-action="resume"]')).to_be_visible()
        expect(row.locator('button[data-action="pause"]')).to_be_hidden()
        paused_at = wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["summary"]
                             ["running"] == 0 and e, what="the questions in hand")
        with page.expect_response(lambda response: "/api/v1/evaluations?" in response.url, timeout=30_000):
            pass  # one more refresh of the list while paused: time for a worker that ignored the pause to show it
        assert api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["completed_questions"] == \
            paused_at["completed_questions"] < 24
        shot(page, "evaluation-list")
        row.locator('button[data-action="resume"]').click()
        expect(row.locator(".status")).to_have_text(re.compile("RUNNING|COMPLETED"))
        expect(row.locator(".percent")).to_have_text("100 %", timeout=60_000)
        expect(row.locator(".status")).to_have_text("COMPLETED")
        expect(row.locator("progress")).to_have_attribute("value", "24")
        expect(row.locator('button[data-action="resume"]')).to_be_hidden()
        expect(row.locator('button[data-action="pause"]')).to_be_hidden()
    finally:
        rag.delay = 0.0
    assert page.errors == []


def test_script_in_a_question_and_an_answer_stays_text(page, api, services):
    from playwright.sync_api import expect

    rag, _ = services
    question_set = api.post("/api/v1/question-sets", {"name": EVIL, "description": EVIL, "questions": [
        {"question_type": "FACTUAL", "question_text": EVIL, "ground_truth": EVIL}]}, expect=201)
    eval_id = new_evaluation(api, question_set["id"], rag.url, name=EVIL)["id"]
    wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["status"] == "COMPLETED", what="COMPLETED")
    for path in (f"/evaluations/{eval_id}", "/evaluations/list", "/evaluations/question-sets",
                 f"/evaluations/question-sets/{question_set['id']}", "/evaluations/new"):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__xss") is None, path
        assert page.locator("main img").count() == 0, path
    page.goto(f"/evaluations/{eval_id}")
    card = page.locator("article.card").first
    expect(card.locator(".question")).to_have_text(EVIL)
    expect(card.locator(".answer .text")).to_have_text(f"answer to: {EVIL} [0]")
    expect(card.locator("details.sources li").nth(1)).to_contain_text(EVIL)
    page.goto(f"/evaluations/question-sets/{question_set['id']}")
    assert page.locator("textarea.question_text").input_value() == EVIL
    assert page.evaluate("window.__xss") is None and page.errors == []


def test_generate_questions_in_the_dialog_and_keep_the_checked_ones(page, services):
    from playwright.sync_api import expect

    _, model = services
    page.goto("/evaluations/question-sets/new")
    page.click("#open-generate")
    dialog = page.locator("#generate-dialog")
    expect(dialog).to_be_visible()
    assert "$document" in dialog.locator('textarea[name="prompt"]').input_value()
    dialog.locator('input[name="model"]').fill("test-model")
    dialog.locator('input[name="base_url"]').fill(model.url)
    dialog.locator('input[name="count"]').fill("3")
    dialog.locator("#generate-run").click()
    items = dialog.locator("li.generated")
    expect(items).to_have_count(3, timeout=60_000)
    expect(dialog.locator("#generate-status")).to_contain_text("3 question(s) from 2 document(s)")
    dialog.locator("#generate-status").scroll_into_view_if_needed()
    shot(page, "generate-dialog")
    items.nth(1).locator("input[type=checkbox]").uncheck()
    dialog.locator("#generate-append").click()
    expect(dialog).to_be_hidden()
    rows = page.locator("tr.question-row")
    expect(rows).to_have_count(2)
    assert rows.nth(0).locator("select.type").input_value() in ("FACTUAL", "INFERENTIAL")
    assert rows.nth(0).locator("textarea.ground_truth").input_value()
    assert page.errors == []


def test_a_file_that_cannot_be_read_says_why(page):
    from playwright.sync_api import expect

    page.goto("/evaluations/question-sets/new")
    page.set_input_files("#import-file", files=[{"name": "bad.csv", "mimeType": "text/csv",
                                                 "buffer": b"question,answer\nq,a\n"}])
    expect(page.locator("#flash")).to_have_text(
        "bad.csv: line 1 must name the columns (question_type, question_text, ground_truth); found: question, answer")
    page.set_input_files("#import-file", files=[{"name": "bad.json", "mimeType": "application/json",
                                                 "buffer": b'[{"question_text": "ok"}, {"ground_truth": "x"}]'}])
    expect(page.locator("#flash")).to_have_text("bad.json: item 2: question_text is empty")
    expect(page.locator("tr.question-row")).to_have_count(0)


def test_the_api_docs_render_from_this_machine(page):
    from playwright.sync_api import expect

    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto("/docs")
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/evaluations/{eval_id}/pause")).to_have_count(1,
                                                                                                       timeout=30_000)
    assert all(url.startswith(page.url.split("/docs")[0]) for url in requests), requests  # no CDN
    assert page.errors == []
