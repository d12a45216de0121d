"""The pages' layout and words, in Chromium: nothing wider than the window at 1024 and 1400 px (an unbroken
600-character question and 250-character name, a 2,000-character error), Resume always in view, long texts collapsed, answers as sanitised
Markdown, sources numbered once, errors without server paths, the lists' search and bulk delete, imports in GBK,
blank lines and empty rows reported, and the pages in Chinese from the browser's language or the switch."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import update

from ragretrieval.runs.schema import evaluations
from ragretrieval.server.db import Database

from ..conftest import new_evaluation, new_set, wait_for
from .conftest import fits, in_view, open_page, respond

UNBROKEN = "x" * 600
NAME = "y" * 240  # names hold at most 255 characters
LONG = "**Steps**\n\n" + "\n".join(f"{i}. 先把五花肉切块，冷水下锅焯水，再小火慢炖。" for i in range(1, 400))
HOSTILE = ("**bold** [click](javascript:window.__xss=3) <script>window.__xss = 1</script> "
           '<img src=x onerror="window.__xss = 2"> [ok](https://example.org/) [0]')
DEAD = "http://127.0.0.1:9/answer"
SECRET_PATH = "/srv/secret-folder/data/manifest.json"
GBK_CSV = ("question_type,question_text,ground_truth\r\n"
           "FACTUAL,红烧肉要炖多久？,小火炖四十分钟，再大火收汁\r\n"
           "INFERENTIAL,为什么要先炒糖色？,上色，增加焦香味\r\n"
           "FACTUAL,鱼香肉丝为什么没有鱼？,鱼香是一种调味方法，用泡辣椒、葱姜蒜、糖和醋调出来\r\n")


def answers(request: dict) -> dict:
    """The RAG service's answers here: long, hostile Markdown, or the default."""
    found = respond(request)
    if "long answer" in request["query"]:
        found["answer"] = LONG
    elif "markdown" in request["query"]:
        found["answer"] = HOSTILE
    return found


@pytest.fixture(scope="module")
def made(server, services):
    """A completed evaluation (an unbroken 600-character name and question, a long answer, hostile Markdown) and a
    failed one with a 2,000-character error naming a server path."""
    import httpx

    from ..conftest import Api

    rag, _ = services
    rag.respond = answers
    api = Api(httpx.Client(base_url=server.url, timeout=30))
    question_set = api.post("/api/v1/question-sets", {"name": NAME, "dataset": "dataset", "questions": [
        {"question_text": UNBROKEN, "ground_truth": UNBROKEN}, {"question_text": "a long answer, please"},
        {"question_text": "markdown, please"}]}, expect=201)
    done = new_evaluation(api, question_set["id"], rag.url, name=NAME)["id"]
    failed = new_evaluation(api, new_set(api, 6, name="six")["id"], DEAD, name="failed " + NAME)["id"]
    wait_for(lambda: api.get(f"/api/v1/evaluations/{done}?limit=0")["status"] == "COMPLETED", what="COMPLETED")
    wait_for(lambda: api.get(f"/api/v1/evaluations/{failed}?limit=0")["status"] == "FAILED", what="FAILED")
    error = f"cannot start: [Errno 2] No such file or directory: '{SECRET_PATH}' " + "because " * 250
    db = Database(server.runs_db)
    with db.write() as conn:
        conn.execute(update(evaluations).where(evaluations.c.id == failed).values(error=error))
    db.close()
    yield {"set": question_set["id"], "done": done, "failed": failed}
    api.client.close()


@pytest.mark.parametrize("width", [1024, 1400])
def test_nothing_is_wider_than_the_window_and_resume_stays_in_view(browser, server, made, width):
    page = open_page(browser, server, width=width)
    try:
        for path in ("/evaluations/list", f"/evaluations/{made['done']}", f"/evaluations/{made['failed']}",
                     "/evaluations/question-sets", f"/evaluations/question-sets/{made['set']}", "/evaluations/new",
                     f"/evaluations/new?again={made['done']}"):
            page.goto(path)
            assert fits(page), (path, page.evaluate("document.documentElement.scrollWidth"))
        page.goto("/evaluations/list")
        row = page.locator(f'tr.evaluation[data-id="{made["failed"]}"]')
        assert in_view(row.locator('button[data-action="resume"]'))
        assert row.bounding_box()["height"] < 400  # the 2,000-character error is clamped to three lines
        page.goto(f"/evaluations/{made['failed']}")
        assert in_view(page.locator('#live button[data-action="resume"]'))
        assert page.errors == []
    finally:
        page.context.close()


def test_long_texts_start_collapsed(page, made):
    from playwright.sync_api import expect

    page.goto(f"/evaluations/{made['done']}")
    card = page.locator("article.card", has_text="a long answer, please")
    assert card.bounding_box()["height"] < 900
    card.locator(".answer button.expand").click()
    expect(card.locator(".answer button.expand")).to_have_text("Show less")
    assert card.bounding_box()["height"] > 3000
    failed = page.locator("#live")
    page.goto(f"/evaluations/{made['failed']}")
    assert failed.locator(".evaluation-error").bounding_box()["height"] < 200
    assert page.errors == []


def test_answers_are_sanitised_markdown_and_sources_are_numbered_once(page, made):
    from playwright.sync_api import expect

    page.goto(f"/evaluations/{made['done']}")
    page.wait_for_load_state("networkidle")
    card = page.locator("article.card", has_text="markdown, please")
    expect(card.locator(".answer strong")).to_have_text("bold")
    expect(card.locator('.answer a[href="https://example.org/"]')).to_have_attribute("rel",
                                                                                      "noopener noreferrer nofollow")
    assert page.evaluate("""[...document.querySelectorAll('a[href]')]
        .filter(a => !/^(https?:|mailto:|\\/)/i.test(a.getAttribute('href')) && a.getAttribute('href') !== '')
        .map(a => a.getAttribute('href'))""") == []
    expect(card.locator(".answer")).to_contain_text("<script>window.__xss = 1</script>")  # shown as text
    assert page.locator("main img").count() == 0 and page.evaluate("window.__xss") is None
    long_card = page.locator("article.card", has_text="a long answer, please")
    expect(long_card.locator(".answer ol li").first).to_contain_text("先把五花肉切块")
    sources = card.locator("details.sources")
    sources.locator("summary").click()
    expect(sources.locator("ol")).to_have_count(0)  # one number per source: the one the answer cites
    expect(sources.locator("li .position")).to_have_text(["[0]", "[1]"])
    assert page.errors == []


def test_errors_name_no_server_path(page, made):
    from playwright.sync_api import expect

    for path in ("/evaluations/list", f"/evaluations/{made['failed']}"):
        page.goto(path)
        expect(page.locator("main")).to_contain_text("No such file or directory: '…/manifest.json'")
        assert "secret-folder" not in page.content(), path


def test_lists_search_by_name_and_delete_several_at_once(page, api):
    from playwright.sync_api import expect

    question_set = new_set(api, 1, name="for the list")
    for name in ("alpha one", "Alpha two", "beta"):
        new_evaluation(api, question_set["id"], DEAD, name=name)
    page.goto("/evaluations/list")
    page.fill('form.search input[name="q"]', "ALPHA")
    page.click('form.search button[type="submit"]')
    rows = page.locator("tr.evaluation")
    expect(rows).to_have_count(2)
    page.check('input[data-action="select-all"]')
    expect(page.locator(".bulk .selected-count")).to_have_text("2")
    page.click('button[data-action="delete-selected"]')
    expect(page.locator("#flash")).to_have_text("Deleted 2.")
    expect(rows).to_have_count(0)
    remaining = [e["name"] for e in api.get("/api/v1/evaluations?q=a")["items"]]
    assert "alpha one" not in remaining and "Alpha two" not in remaining and "beta" in remaining
    page.goto("/evaluations/list?status=failed")  # any case
    expect(page.locator("nav.filters a.on")).to_have_text("FAILED")

    free = new_set(api, 1, name="zz free set")
    page.goto("/evaluations/question-sets")
    page.locator(f'input[data-select="{free["id"]}"]').check()
    page.locator(f'input[data-select="{question_set["id"]}"]').check()  # used by "beta"
    page.click('button[data-action="delete-selected"]')
    expect(page.locator("#flash")).to_contain_text("Nothing was deleted: question set")
    assert api.get(f"/api/v1/question-sets/{free['id']}")["id"] == free["id"]
    assert [e for e in page.errors if "409 (Conflict)" not in e] == []  # the refused delete is a 409


def test_imports_convert_gbk_refuse_a_guess_and_report_blank_lines(page):
    from playwright.sync_api import expect

    page.goto("/evaluations/question-sets/new")
    rows = page.locator("tr.question-row")
    page.set_input_files("#import-file", files=[{"name": "excel.csv", "mimeType": "text/csv",
                                                 "buffer": GBK_CSV.encode("gbk")}])
    expect(page.locator("#flash")).to_have_text("Added 3 question(s) from excel.csv. excel.csv is not UTF-8: it was "
                                                "read as GB18030 and converted.")
    expect(rows.nth(0).locator("textarea.question_text")).to_have_value("红烧肉要炖多久？")
    page.set_input_files("#import-file", files=[{"name": "short.csv", "mimeType": "text/csv",
                                                 "buffer": "question_text\n宫保鸡丁放什么辣椒？\n".encode("gbk")}])
    expect(page.locator("#flash")).to_contain_text('save it as "CSV UTF-8" and import it again')
    expect(rows).to_have_count(3)
    page.set_input_files("#import-file", files=[{"name": "gaps.csv", "mimeType": "text/csv",
                                                 "buffer": b"question_text\r\nq1\r\n\r\n,\r\nq2\r\n"}])
    expect(page.locator("#flash")).to_have_text("Added 2 question(s) from gaps.csv. Blank lines skipped: 3, 4.")
    page.click("#add-row")
    page.fill('input[name="name"]', "with an empty row")
    page.click("#save")
    expect(page.locator("#flash")).to_have_text("Rows 6 are empty: write their question or delete them.")
    assert "/new" in page.url  # nothing was saved, nothing dropped
    assert [e for e in page.errors if "400 (Bad Request)" not in e] == []  # the refused decode is a 400


def test_the_pages_speak_the_browser_s_language_and_switch(browser, server, api):
    from playwright.sync_api import expect

    page = open_page(browser, server, locale="zh-CN")
    try:
        page.goto("/evaluations/list")
        assert page.locator("html").get_attribute("lang") == "zh"
        expect(page.locator("header.top nav").first).to_contain_text("问题集")
        question_set = new_set(api, 1, name="删我")
        page.goto("/evaluations/question-sets")
        page.locator(f'tr[data-id="{question_set["id"]}"] button[data-action="delete-set"]').click()
        expect(page.locator("#flash")).to_have_text("已删除“删我”。")  # the scripts speak it too
        page.click("header.top nav.languages a[lang=en]")
        page.wait_for_url(re.compile(r"/evaluations/question-sets$"))
        assert page.locator("html").get_attribute("lang") == "en"
        expect(page.locator("h1")).to_have_text("Question sets")
        page.goto("/evaluations/list")  # the choice is kept
        assert page.locator("html").get_attribute("lang") == "en"
        assert page.errors == []
    finally:
        page.context.close()
