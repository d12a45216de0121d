"""Regression triage on /compare in Chromium, in English and Chinese at 1024 and 1400 px: two evaluations chosen on
the list, the questions that got worse first, each with its differences (a colour and a sign), the two answers'
word diff and the two source lists side by side; a question's permalink opens it; the compare export downloads.

The evaluations are the demo corpus's questions answered by the extractive baseline with 3 and with 1 context."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from ..conftest import wait_for
from .conftest import fits, in_view, open_page, shot

WALKS = [(1024, "en-US"), (1400, "en-US"), (1024, "zh-CN"), (1400, "zh-CN")]


@pytest.fixture(scope="module")
def made(server):
    import httpx

    from ..conftest import Api

    api = Api(httpx.Client(base_url=server.url, timeout=30))
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": "dataset"}, expect=201)
    made = {}
    for name, k in (("k3", 3), ("k1", 1), ("k2", 2)):
        made[name] = api.post("/api/v1/evaluations", {"name": name, "dataset": "dataset", "retriever": "bm25",
                                                      "question_set_id": opened["id"], "generator": "extractive",
                                                      "options": {"context_k": k}}, expect=201)["id"]
    for eval_id in made.values():
        done = wait_for(lambda eval_id=eval_id: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"]
                        in ("COMPLETED", "FAILED") and e, timeout=180, what="the end of the evaluation")
        assert done["status"] == "COMPLETED", done["error"]
    yield api, made
    api.client.close()


@pytest.mark.parametrize(("width", "locale"), WALKS)
def test_regressions_first_with_the_answers_diff(browser, server, made, width, locale):
    from playwright.sync_api import expect

    api, made = made
    zh = locale.startswith("zh")
    ids = f"{made['k3']},{made['k1']}"
    worse = api.get(f"/api/v1/compare?ids={ids}&filter=worse&order=regressions&limit=500")
    page = open_page(browser, server, width=width, locale=locale)
    try:
        page.goto("/evaluations/list")
        page.check(f'input[data-select="{made["k3"]}"]')
        button = page.locator('button[data-action="compare-selected"]')
        expect(button).to_be_disabled()  # one checked: the reason is the button's title
        assert button.get_attribute("title")
        page.check(f'input[data-select="{made["k1"]}"]')
        expect(button).to_be_enabled()
        button.click()
        page.wait_for_url(re.compile(r"/compare\?ids="))
        page.select_option('#triage select[name="order"]', "regressions")
        page.select_option('#triage select[name="filter"]', "worse")
        page.click("#triage button[type=submit]")
        page.wait_for_url(re.compile(r"order=regressions"))
        expect(page.locator("#triage")).to_contain_text("退步最多的在前" if zh else "regressions first")
        rows = page.locator(".compare-rows article")
        expect(rows).to_have_count(worse["questions"]["total"])
        assert worse["questions"]["total"] >= 1
        first, metric = rows.first, worse["triage"]["metric"]
        expected = worse["questions"]["items"][0]
        expect(first).to_have_attribute("data-question", expected["id"])
        expect(first.locator("h3 .permalink")).to_have_text(f"#{expected['number']}")  # its number, not its id
        drop = first.locator(f'ul.differences li.worse[data-metric="{metric}"]')
        expect(drop).to_contain_text("▼")  # a sign, not the colour alone
        expect(drop).to_contain_text(f"{expected['differences'][metric][0]:+.4g}")
        # the answers side by side, the words only one of them has marked; their sources side by side
        sections = first.locator(".side-by-side section")
        expect(sections).to_have_count(2)
        a_box, b_box = sections.nth(0).bounding_box(), sections.nth(1).bounding_box()
        assert abs(a_box["y"] - b_box["y"]) < 2 and a_box["x"] + a_box["width"] <= b_box["x"]  # side by side
        if expected["results"][0]["rag_answer"] != expected["results"][1]["rag_answer"]:
            assert sections.nth(0).locator(".answer-diff del").count() + \
                sections.nth(1).locator(".answer-diff ins").count() > 0
        for n in range(2):
            assert in_view(sections.nth(n)) and in_view(first.locator("ul.differences"))
        relevant = [s for r in expected["results"] for s in r["rag_answer_sources"] if s.get("relevant")]
        assert first.locator("li.relevant .relevant-mark").count() == len(relevant)
        if expected["transition"]:
            shown_class = "无法核实" if zh and expected["transition"].startswith("unverified") else ""
            expect(first.locator("p.transition")).to_contain_text(shown_class)
        assert fits(page), "sideways scrolling"
        if width == 1400 and not zh:
            shot(page, "compare-triage", part=first)  # one question: its differences, classes, diff, sources
        # a permalink: the question's link, then the address opened afresh, even for a question on no page shown
        first.locator("h3 .permalink").click()
        assert page.url.endswith("#q=" + quote(expected["id"], safe=""))
        everything = api.get(f"/api/v1/compare?ids={ids}&limit=500")["questions"]["items"]
        target = everything[-1]["id"]
        page.goto(f"/compare?ids={ids}&filter=better#q={quote(target, safe='')}")
        found = page.locator(f'article[data-question="{target}"]')
        expect(found).to_have_class(re.compile("permalink-target"))
        assert found.bounding_box()["y"] < page.viewport_size["height"]
        with page.expect_download() as download:
            page.click('#triage a[data-export="csv"]')
        text = open(download.value.path(), encoding="utf-8-sig").read()
        assert text.startswith("question_id,question_number,level,metric,A,B,B-A,class_A,class_B")
        assert page.errors == []
    finally:
        page.context.close()


@pytest.mark.parametrize("width", [1024, 1400])
def test_layout_three_way_compare_metric_names_and_the_editor_delete_button(browser, server, made, width):
    """The parts themselves are read: every metric name of a three-way compare is whole on one line, and each
    question's Delete button in the editor is one line wide enough for its word."""
    api, made = made
    page = open_page(browser, server, width=width)
    try:
        page.goto(f"/compare?ids={made['k3']},{made['k1']},{made['k2']}")
        names = page.locator("table.compare td.metric")
        assert names.count() > 10
        cut = page.evaluate("""() => [...document.querySelectorAll('table.compare td.metric')].filter((cell) => {
            const code = cell.querySelector('code');
            const line = parseFloat(getComputedStyle(code).lineHeight) || code.getBoundingClientRect().height;
            return code.scrollWidth > cell.clientWidth + 1 || code.getBoundingClientRect().height > line * 1.5;
        }).map((cell) => cell.textContent.trim())""")
        assert cut == [], f"metric names cut or wrapped at {width} px: {cut[:5]}"
        assert fits(page), "the page scrolls sideways (only a table's wrapper may)"
        question_set = api.get("/api/v1/question-sets")["items"][0]
        page.goto(f"/evaluations/question-sets/{question_set['id']}")
        delete = page.locator("table.questions button.remove").first
        box = delete.bounding_box()
        height = page.evaluate("(b) => parseFloat(getComputedStyle(b).lineHeight) || 20", delete.element_handle())
        assert box["height"] < height * 2.2 and box["width"] > box["height"], (width, box)
        set_delete = page.locator('button[data-action="delete-set"]')
        assert set_delete.bounding_box()["height"] < height * 2.2
        assert page.errors == []
    finally:
        page.context.close()
