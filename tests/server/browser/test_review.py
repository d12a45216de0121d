"""Deciding with the pages alone, in Chromium: compare two evaluations from the list and from
an evaluation's page, the changed questions only; export what the page shows as CSV, JSON and JSONL; sort and
filter the cards to find the bad answers; each card's sources marked against the question's relevant documents;
a reviewer's verdict saved on a card, edited, refused when a colleague changed it meanwhile, counted and agreed with
the judge; and a retrieval evaluation started from the form, then compared like the others.

The evaluations are the demo corpus's own questions (they carry relevance labels) answered by the extractive
baseline with 3 and with 1 context, and (with reference answers added, in another set) by the test model judged by
score5, whose verdict varies with the question.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zlib

import pytest

from ragretrieval.testing.chat_server import ChatServer, Reply

from ..conftest import wait_for
from .conftest import EVIL, model_reply, shot


def judged_reply(request: dict) -> Reply:
    """The browser tests' model; as the judge, a verdict from 1 to 5 that depends on the question (so sorting and
    filtering by judge score have something to order)."""
    if request["model"] != "judge-model":
        return model_reply(request)
    score = 1 + zlib.crc32(request["messages"][-1]["content"].encode("utf-8")) % 5
    return Reply(json.dumps({"score": score, "reasoning": f"verdict {score}"}))


@pytest.fixture(scope="module")
def model():
    with ChatServer(judged_reply) as server:
        yield server


def finished(api, eval_id: str) -> dict:
    return wait_for(lambda: (e := api.get(f"/api/v1/evaluations/{eval_id}?limit=0"))["status"] in (
        "COMPLETED", "FAILED") and e, timeout=180, what="the end of the evaluation")


@pytest.fixture(scope="module")
def made(server, model):
    """The demo corpus's questions as a set; k3 and k1 (the extractive baseline) and judged (the model, score5)."""
    import httpx

    from ..conftest import Api

    api = Api(httpx.Client(base_url=server.url, timeout=30))
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": "dataset"}, expect=201)
    bodies = {"k3": {"generator": "extractive", "options": {"context_k": 3}},
              "k1": {"generator": "extractive", "options": {"context_k": 1}},
              "judged": {"generator": "openai:test-model", "base_url": model.url, "judge": "score5",
                         "judge_model": "judge-model", "judge_base_url": model.url}}
    # score5 needs reference answers: the same questions (the same dataset ids, so they pair) with a ground truth
    questions = api.get(f"/api/v1/question-sets/{opened['id']}")["questions"]
    referenced = api.post("/api/v1/question-sets", {"name": "with references", "dataset": "dataset", "questions": [
        {"question_type": q["question_type"], "question_text": q["question_text"], "ground_truth": f"truth {i}",
         "source_record": q["source_record"]} for i, q in enumerate(questions)]}, expect=201)
    made = {}
    for name, body in bodies.items():
        question_set = referenced if name == "judged" else opened
        created = api.post("/api/v1/evaluations", {"name": name, "dataset": "dataset", "retriever": "bm25",
                                                   "question_set_id": question_set["id"], **body}, expect=201)
        made[name] = created["id"]
    for name, eval_id in made.items():
        done = finished(api, eval_id)
        assert done["status"] == "COMPLETED" and done["run_id"], (name, done["error"])
    made["set"] = opened["id"]
    yield api, made
    api.client.close()


def test_compare_two_evaluations_from_the_list_then_only_the_changed_questions(page, made):
    from playwright.sync_api import expect

    api, made = made
    shown = api.get(f"/api/v1/compare?ids={made['k3']},{made['k1']}&limit=0")
    page.goto("/evaluations/list")
    compare = page.locator('button[data-action="compare-selected"]')
    expect(compare).to_be_disabled()
    page.check(f'input[data-select="{made["k3"]}"]')  # the first checked is the baseline
    expect(compare).to_be_disabled()
    page.check(f'input[data-select="{made["k1"]}"]')
    page.check(f'input[data-select="{made["judged"]}"]')
    expect(compare).to_be_enabled()  # three at most
    page.uncheck(f'input[data-select="{made["judged"]}"]')
    compare.click()
    page.wait_for_url(re.compile(rf"/compare\?ids={made['k3']},{made['k1']}$"))
    expect(page.locator("h1")).to_contain_text("k3 · k1")
    expect(page.locator("#pairing .paired")).to_contain_text(f"{shown['paired']} questions paired")
    for level in ("answer", "doc", "chunk"):
        expect(page.locator(f'table.compare[data-level="{level}"]')).to_have_count(1)
    # every figure of a row is the API's: both means, the difference, its CI, p corrected, wins/ties/losses
    recall = shown["levels"]["doc"]["metrics"]["recall@3"]
    row = page.locator('table.compare[data-level="doc"] tr[data-metric="recall@3"]')
    cells = row.locator("td")
    expect(cells.nth(1)).to_have_text(f"{recall['a']:.4f}")
    expect(cells.nth(2)).to_have_text(f"{recall['b']:.4f}")
    expect(row.locator(".diff")).to_have_text(f"{recall['diff']:+.4f}")
    expect(cells.nth(4)).to_have_text(f"[{recall['ci'][0]:+.4f}, {recall['ci'][1]:+.4f}]")
    expect(row.locator(".p-corrected")).to_have_text(f"{recall['p_corrected']:.4f}")
    expect(row.locator(".wtl")).to_have_text(f"{recall['wins']}/{recall['ties']}/{recall['losses']}")
    rows = page.locator(".compare-rows article")
    expect(rows).to_have_count(min(shown["paired"], 50))
    expect(rows.first.locator(".side-by-side section")).to_have_count(2)
    page.click("#changed-filter a:has-text('changed')")
    expect(page.locator("#changed-filter a.on")).to_contain_text(f"changed ({shown['changed']})")
    expect(rows).to_have_count(min(shown["changed"], 50))
    for number in range(rows.count()):
        assert "changed" in (rows.nth(number).get_attribute("class") or "")
    page.select_option('select[name="test"]', "wilcoxon")
    page.select_option('select[name="correction"]', "bonferroni")
    page.click(".stats-settings button[type=submit]")
    expect(page.locator('table.compare[data-level="doc"] th', has_text="p (bonferroni)")).to_have_count(1)
    assert page.errors == []


def test_compare_with_from_an_evaluation_s_page(page, made):
    from playwright.sync_api import expect

    api, made = made
    page.goto(f"/evaluations/{made['judged']}")
    other = page.locator('#compare-with select[name="other"]')
    expect(other.locator(f'option[value="{made["k3"]}"]')).to_have_text("k3")  # another set, the same questions
    other.select_option(made["k3"])
    page.click("#compare-with button[type=submit]")
    page.wait_for_url(re.compile(r"/compare\?"))
    expect(page.locator("h1")).to_contain_text("judged · k3")
    # score5 is the judged run's alone: the answer table holds only what both have
    answer = page.locator('table.compare[data-level="answer"]')
    expect(answer).to_have_count(1)
    expect(answer.locator('tr[data-metric="llm_judge_score"]')).to_have_count(0)
    shot(page, "compare", height=1100)
    page.click("#changed-filter a:has-text('changed')")
    shot(page, "compare-questions", part=page.locator(".compare-rows article").first)
    assert page.errors == []


def download(page, selector: str) -> bytes:
    with page.expect_download() as info:
        page.click(selector)
    path = info.value.path()
    with open(path, "rb") as handle:
        return handle.read()


def test_export_what_the_page_shows(page, made):
    from playwright.sync_api import expect

    api, made = made
    everything = api.get(f"/api/v1/evaluations/{made['judged']}?limit=500")
    page.goto(f"/evaluations/{made['judged']}")
    data = download(page, 'a[data-export="csv"]')
    assert data.startswith("\ufeff".encode("utf-8"))
    table = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert len(table) == everything["results_total"] == 30
    assert [row["question_id"] for row in table] == [r["question_id"] for r in everything["results"]]
    assert [row["judge_score"] for row in table] == [f"{r['llm_judge_score']!r}" for r in everything["results"]]
    whole = json.loads(download(page, 'a[data-export="json"]'))
    assert whole["evaluation"]["id"] == made["judged"] and len(whole["results"]) == 30
    lines = download(page, 'a[data-export="jsonl"]').decode("utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 30
    assert {"request", "expected_response", "response", "retrieved_context", "expected_retrieved_context",
            "metrics"} <= first.keys()
    assert first["metrics"]["llm_judge_score"] == everything["results"][0]["llm_judge_score"]
    # with a filter on, the buttons export the cards shown
    page.goto(f"/evaluations/{made['judged']}?score=5")
    expect(page.locator("#review-tools")).to_contain_text("the filters apply")
    fives = [r for r in everything["results"] if r["llm_judge_score"] == 5]
    lines = download(page, 'a[data-export="jsonl"]').decode("utf-8").splitlines()
    assert [json.loads(line)["request_id"] for line in lines] == [r["question_id"] for r in fives]
    assert page.errors == []


def card_scores(page) -> list[float]:
    return [float(text) for text in page.locator("article.card .judge-score .score").all_inner_texts()]


def test_sort_and_filter_the_cards_to_find_the_bad_answers(page, made):
    from playwright.sync_api import expect

    api, made = made
    page.goto(f"/evaluations/{made['judged']}")
    page.select_option('#result-filters select[name="sort"]', "score")  # sent on change
    page.wait_for_url(re.compile(r"sort=score"))
    lowest = card_scores(page)
    assert lowest == sorted(lowest) and len(lowest) == 20 and lowest[0] == 1  # a page of 20, worst first
    page.select_option('#result-filters select[name="retrieval"]', "miss")
    page.wait_for_url(re.compile(r"retrieval=miss"))
    missed = api.get(f"/api/v1/evaluations/{made['judged']}?retrieval=miss&sort=score&limit=500")
    cards = page.locator("article.card")
    expect(cards).to_have_count(min(missed["results_total"], 20))
    for number in range(cards.count()):  # a miss: none of its relevant documents among the sources
        expect(cards.nth(number).locator(".expected")).to_contain_text("recall 0.00")
    assert card_scores(page) == [r["llm_judge_score"] for r in missed["results"][:20]]
    page.select_option('#result-filters select[name="retrieval"]', "hit")
    page.wait_for_url(re.compile(r"retrieval=hit"))
    hits = api.get(f"/api/v1/evaluations/{made['judged']}?retrieval=hit&limit=0")["results_total"]
    assert hits + missed["results_total"] == 30 and hits > 0
    page.click("text=Clear")
    page.goto(f"/evaluations/{made['k1']}?check=any:fail")
    failing = api.get(f"/api/v1/evaluations/{made['k1']}?check=any:fail&limit=0")["results_total"]
    expect(page.locator("article.card")).to_have_count(min(failing, 20))
    expect(page.locator('#result-filters select[name="check"]')).to_have_value("any:fail")
    page.select_option('#result-filters select[name="failed"]', "true")  # no question failed here
    page.wait_for_url(re.compile(r"failed=true"))
    expect(page.locator("article.card")).to_have_count(0)
    types = page.locator('#result-filters select[name="type"] option')
    if types.count() > 2:  # the demo corpus's question types, when it has several
        kind = types.nth(1).get_attribute("value")
        page.goto(f"/evaluations/{made['k1']}?type={kind}")
        expect(page.locator("article.card .type").first).to_have_text(kind)
        assert set(page.locator("article.card .type").all_inner_texts()) == {kind}
    assert page.errors == []


def test_each_card_marks_relevant_sources_and_names_those_not_retrieved(page, made):
    from playwright.sync_api import expect

    api, made = made
    results = api.get(f"/api/v1/evaluations/{made['k1']}?limit=20")["results"]
    page.goto(f"/evaluations/{made['k1']}")
    cards = page.locator("article.card")
    expect(cards).to_have_count(20)
    for number, result in enumerate(results):
        card, found = cards.nth(number), result["retrieval"]
        assert found is not None  # every demo question is labelled
        expect(card.locator(".expected")).to_contain_text(f"recall {found['recall']:.2f} · MRR {found['mrr']:.2f}")
        relevant = [s["doc_id"] for s in result["rag_answer_sources"] if s.get("relevant")]
        expect(card.locator("details.sources li.relevant")).to_have_count(len(relevant))
        if found["missing"]:
            expect(card.locator(".expected .missing code")).to_have_text(found["missing"])
        else:
            expect(card.locator(".expected .missing")).to_have_count(0)
    assert any(r["retrieval"]["missing"] for r in results) and any(r["retrieval"]["found"] for r in results)
    assert page.errors == []


def test_a_reviewer_s_verdict_is_saved_edited_counted_and_agreed_with(page, made):
    from playwright.sync_api import expect

    api, made = made
    page.goto(f"/evaluations/{made['judged']}")
    card = page.locator("article.card").first
    question = card.get_attribute("data-question")
    form = card.locator("form.annotation")
    form.locator('button[type="submit"]').click()  # nothing chosen yet
    expect(page.locator("#flash")).to_contain_text("Choose correct, partly correct or incorrect first.")
    form.locator('input[value="incorrect"]').check()
    form.locator('input[name="note"]').fill(EVIL)
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Verdict saved.")
    expect(form).to_have_attribute("data-version", "1")
    page.reload()
    expect(page.locator("#reviewed")).to_contain_text("Reviewed 1 of 30: 0 correct, 0 partly correct, 1 incorrect")
    expect(page.locator('#reviewed tr[data-judge="score5"] .kappa')).to_contain_text("1 answers")
    form = page.locator(f'article.card[data-question="{question}"] form.annotation')
    expect(form.locator('input[value="incorrect"]')).to_be_checked()
    expect(form.locator('input[name="note"]')).to_have_value(EVIL)  # text, never markup
    assert page.evaluate("window.__xss") is None
    expect(form.locator(".judges-read")).to_contain_text("score5")
    # edit it: the next version
    form.locator('input[value="correct"]').check()
    form.locator('input[name="note"]').fill("on second reading, right")
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_have_text("Verdict saved.")
    expect(form).to_have_attribute("data-version", "2")
    stored = api.get(f"/api/v1/evaluations/{made['judged']}?annotation=any")
    assert [(r["question_id"], r["annotation"]["verdict"], r["annotation"]["note"], r["annotation"]["version"])
            for r in stored["results"]] == [(question, "correct", "on second reading, right", 2)]
    assert stored["summary"]["annotations"]["correct"] == 1 and stored["summary"]["annotations"]["incorrect"] == 0
    # a colleague changes it meanwhile: this page's save is refused and says so, theirs is kept
    api.put(f"/api/v1/evaluations/{made['judged']}/results/{question}/annotation",
            {"verdict": "partly_correct", "note": "colleague", "version": 2})
    form.locator('input[value="incorrect"]').check()
    form.locator('button[type="submit"]').click()
    expect(page.locator("#flash")).to_contain_text("annotated by someone else meanwhile")
    kept = api.get(f"/api/v1/evaluations/{made['judged']}?annotation=any")["results"][0]["annotation"]
    assert (kept["verdict"], kept["note"], kept["version"]) == ("partly_correct", "colleague", 3)
    # the filter finds the reviewed card; the summary counts it
    page.goto(f"/evaluations/{made['judged']}?annotation=partly_correct")
    expect(page.locator("article.card")).to_have_count(1)
    expect(page.locator("#reviewed")).to_contain_text("Reviewed 1 of 30: 0 correct, 1 partly correct")
    assert [e for e in page.errors if "409 (Conflict)" not in e] == []  # the refused save's, and no other


def test_a_retrieval_evaluation_from_the_form_is_compared_like_the_others(page, made):
    from playwright.sync_api import expect

    api, made = made
    page.goto(f"/evaluations/new?question_set={made['set']}")
    page.fill('input[name="name"]', "bm25 grid")
    page.check('input[name="kind"][value="retrieval"]')
    expect(page.locator("#grid")).to_be_visible()
    expect(page.locator("#judges")).to_be_hidden()
    page.select_option('select[name="grid_retriever"]', "bm25")
    page.fill('input[name="ks"]', "1, 3")
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    grid = page.url.rsplit("/", 1)[1]
    expect(page.locator("#summary .status")).to_have_text("COMPLETED", timeout=180_000)
    stored = api.get(f"/api/v1/evaluations/{grid}?limit=0")
    assert stored["kind"] == "retrieval" and stored["options"]["ks"] == [1, 3] and stored["run_id"]
    page.reload()
    expect(page.locator('table.means.grid[data-level="doc"] td[title="doc/recall@3"]')).to_have_count(1)
    expect(page.locator('table.means.grid[data-level="chunk"]')).to_have_count(1)
    cards = page.locator("article.card.retrieval")
    expect(cards.first.locator(".aggregates")).to_contain_text("doc/recall@3")
    expect(cards.first.locator("form.annotation")).to_have_count(0)  # no answer to review
    page.locator('#compare-with select[name="other"]').select_option(made["k3"])
    page.click("#compare-with button[type=submit]")
    page.wait_for_url(re.compile(r"/compare\?"))
    expect(page.locator('table.compare[data-level="answer"]')).to_have_count(0)  # retrieval metrics only
    expect(page.locator('table.compare[data-level="doc"] tr[data-metric="recall@3"]')).to_have_count(1)
    assert page.errors == []


def test_the_embedding_precision_is_chosen_on_the_form_and_kept_by_run_again(page, made):
    from playwright.sync_api import expect

    api, made = made
    page.goto(f"/evaluations/new?question_set={made['set']}")
    page.fill('input[name="name"]', "bf16 grid")
    page.check('input[name="kind"][value="retrieval"]')
    page.select_option('select[name="grid_retriever"]', "bm25")
    expect(page.locator('select[name="embed_dtype"]')).to_be_hidden()  # bm25 embeds nothing
    page.select_option('select[name="grid_retriever"]', "dense")
    expect(page.locator('select[name="embed_dtype"]')).to_be_visible()
    expect(page.locator('select[name="embed_dtype"]')).to_have_value("auto")
    page.select_option('select[name="embed_dtype"]', "bfloat16")
    with page.expect_request(lambda r: r.url.endswith("/api/v1/evaluations") and r.method == "POST") as sent:
        page.click('button[type="submit"]')
    assert json.loads(sent.value.post_data)["options"]["embed"] == {"dtype": "bfloat16"}
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    created = page.url.rsplit("/", 1)[1]
    assert api.get(f"/api/v1/evaluations/{created}?limit=0")["options"]["embed"] == {"dtype": "bfloat16"}
    page.goto(f"/evaluations/new?again={created}")
    expect(page.locator('select[name="embed_dtype"]')).to_have_value("bfloat16")
    page.select_option('select[name="embed_dtype"]', "auto")  # back to the default: nothing is sent
    with page.expect_request(lambda r: r.url.endswith("/api/v1/evaluations") and r.method == "POST") as sent:
        page.click('button[type="submit"]')
    assert "embed" not in json.loads(sent.value.post_data)["options"]
    assert page.errors == []
