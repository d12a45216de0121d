"""The flows a team repeats every day, in Chromium: editing an existing question set (the same set changes, no copy
appears, the import limit holds), evaluating a set on its own corpus (preselected, with a warning when another is
chosen), the form's defaults and memory, judges that need reference answers, a running evaluation's page whose
figures all come from one snapshot (polling on while paused, off once it ends), and a failed run's endpoint
corrected from its page, then run again with the same settings.

The server here has two corpora: the demo dataset as ``dataset`` and a copy of it as ``second``.
"""

from __future__ import annotations

import re
import shutil

import pytest

from ragretrieval.server.jobs.options import EvaluationOptions, default_retriever
from ragretrieval.testing.chat_server import ChatServer, Reply

from ..conftest import new_evaluation, new_set, wait_for
from ..processes import Server, environment
from .conftest import model_reply

DEAD = "http://127.0.0.1:9/answer"  # nothing listens there


def slow_reply(request: dict) -> Reply:
    """The browser tests' model, 0.6 s slower for questions that say "slow"."""
    reply = model_reply(request)
    if "slow" in request["messages"][-1]["content"]:
        reply.delay = 0.6
    return reply


@pytest.fixture(scope="module")
def model():
    with ChatServer(slow_reply) as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory, datasets):
    folder = tmp_path_factory.mktemp("flows")
    corpora = folder / "datasets"
    shutil.copytree(datasets / "dataset", corpora / "dataset")
    shutil.copytree(datasets / "dataset", corpora / "second")
    env = environment(OPENAI_API_KEY="sk-browser-test", RAGRETRIEVAL_CACHE_DIR=str(folder / "cache"))
    process = Server(f"sqlite:///{folder / 'runs.sqlite'}", corpora, folder / "serve.log", env=env)
    yield process
    process.stop()


def set_names(api) -> list[str]:
    return sorted(s["name"] for s in api.get("/api/v1/question-sets?limit=500")["items"])


def test_editing_a_set_changes_it_and_makes_no_copy(page, api):
    from playwright.sync_api import expect

    created = api.post("/api/v1/question-sets", {"name": "to edit", "dataset": "second", "questions": [
        {"question_type": "FACTUAL", "question_text": "first question", "ground_truth": "first truth"},
        {"question_type": "FACTUAL", "question_text": "second question", "ground_truth": "second truth"}]},
        expect=201)
    before = set_names(api)
    page.goto(f"/evaluations/question-sets/{created['id']}")
    rows = page.locator("tr.question-row")
    expect(rows).to_have_count(2)
    rows.nth(0).locator("textarea.question_text").fill("first question, edited")
    rows.nth(1).locator("button.remove").click()
    page.click("#add-row")
    rows.nth(1).locator("textarea.question_text").fill("a new one")
    page.fill('input[name="name"]', "edited")
    page.click("#save")
    expect(page.locator("#flash")).to_have_text("Saved: 2 questions.")
    assert page.url.endswith(f"/evaluations/question-sets/{created['id']}")  # no ?created=1: not a new set
    saved = api.get(f"/api/v1/question-sets/{created['id']}")
    assert saved["name"] == "edited" and saved["dataset"] == "second"
    assert [q["question_text"] for q in saved["questions"]] == ["first question, edited", "a new one"]
    assert saved["questions"][0]["id"] == created["questions"][0]["id"]  # the same row, updated in place
    assert set_names(api) == sorted([*before[:before.index("to edit")], "edited", *before[before.index("to edit") + 1:]])
    page.reload()
    expect(rows.nth(0).locator("textarea.question_text")).to_have_value("first question, edited")
    assert page.errors == []


def test_the_import_limit_holds_when_a_set_is_edited(page, api):
    from playwright.sync_api import expect

    created = new_set(api, 1, name="limit")
    page.goto(f"/evaluations/question-sets/{created['id']}")
    big = b"question_text\n" + b"q" * (8 * 2**20 + 10)  # past half of the 16 MiB body limit
    page.set_input_files("#import-file", files=[{"name": "big.csv", "mimeType": "text/csv", "buffer": big}])
    expect(page.locator("#flash")).to_have_text("big.csv is 8.0 MiB; files up to 8.0 MiB can be imported.")
    expect(page.locator("tr.question-row")).to_have_count(1)
    assert page.errors == []


def test_evaluate_preselects_the_set_s_corpus_and_warns_when_another_is_chosen(page, api):
    from playwright.sync_api import expect

    own = api.post("/api/v1/question-sets", {"name": "second's questions", "dataset": "second", "questions": [
        {"question_text": "清蒸鲈鱼蒸几分钟？", "ground_truth": "8 分钟"}]}, expect=201)
    loose = new_set(api, 1, name="no corpus")
    page.goto(f"/evaluations/question-sets/{own['id']}")
    page.click("text=Evaluate this set")
    form = page.locator("#new-evaluation")
    expect(form.locator('select[name="question_set_id"]')).to_have_value(own["id"])
    expect(form.locator('select[name="dataset"]')).to_have_value("second")  # not the first corpus, "dataset"
    warning = page.locator("#corpus-warning")
    expect(warning).to_be_hidden()
    form.locator('select[name="dataset"]').select_option("dataset")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("This question set was made for the corpus “second”")
    form.locator('select[name="dataset"]').select_option("second")
    expect(warning).to_be_hidden()
    form.locator('select[name="question_set_id"]').select_option(loose["id"])  # a set without a corpus: no warning
    form.locator('select[name="dataset"]').select_option("dataset")
    expect(warning).to_be_hidden()
    form.locator('select[name="question_set_id"]').select_option(own["id"])  # its corpus follows the set
    expect(form.locator('select[name="dataset"]')).to_have_value("second")
    page.fill('input[name="name"]', "on its own corpus")
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    assert api.get(f"/api/v1/evaluations/{page.url.rsplit('/', 1)[1]}?limit=0")["dataset"] == "second"
    expect(page.locator("dl.facts")).to_contain_text("second's questions")  # the set named, not its id
    assert own["id"] not in page.locator("dl.facts").inner_text()
    expect(page.locator("#corpus-mismatch")).to_have_count(0)
    elsewhere = new_evaluation(api, own["id"], DEAD, name="on another corpus")  # through the API: no form to warn
    page.goto(f"/evaluations/{elsewhere['id']}")
    expect(page.locator("#corpus-mismatch")).to_contain_text("made for the corpus “second”; this evaluation ran on "
                                                             "“dataset”")
    assert page.errors == []


def test_the_form_shows_its_defaults_requires_a_model_and_remembers(page, api, model):
    from playwright.sync_api import expect

    question_set = new_set(api, 2, name="defaults")
    page.goto(f"/evaluations/new?question_set={question_set['id']}")
    defaults = EvaluationOptions()
    expect(page.locator('input[name="context_k"]')).to_have_value(str(defaults.context_k))
    expect(page.locator('input[name="judge_samples"]')).to_have_value(str(defaults.judge_samples))
    expect(page.locator('select[name="retriever"]')).to_have_value(default_retriever())
    expect(page.locator('input[name="judge"]:checked')).to_have_count(0)  # no judge unless one is checked
    expect(page.locator("#judges")).to_contain_text("None checked: answers are scored by each question's "
                                                    "deterministic checks")
    count = api.get("/api/v1/evaluations")["total"]
    page.fill('input[name="name"]', "no model chosen")
    page.check('input[name="system"][value="openai"]')
    page.click('button[type="submit"]')  # the empty model is refused by the browser, not replaced by a paid one
    assert page.locator('input[name="openai_model"]').evaluate("field => field.validity.valueMissing")
    page.wait_for_load_state("networkidle")  # a submission that got through would be on the wire by now
    assert api.get("/api/v1/evaluations")["total"] == count
    page.fill('input[name="openai_model"]', "test-model")
    page.fill('input[name="base_url"]', model.url)
    page.select_option('select[name="retriever"]', "bm25")
    page.fill('input[name="context_k"]', "3")
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    created = api.get(f"/api/v1/evaluations/{page.url.rsplit('/', 1)[1]}?limit=0")
    assert (created["generator"], created["base_url"], created["options"]) == ("openai:test-model", model.url,
                                                                                {"context_k": 3})
    page.goto("/evaluations/new")  # the last endpoint and model, remembered by this browser
    expect(page.locator('input[name="system"][value="openai"]')).to_be_checked()
    expect(page.locator('input[name="openai_model"]')).to_have_value("test-model")
    expect(page.locator('input[name="base_url"]')).to_have_value(model.url)
    expect(page.locator('input[name="context_k"]')).to_have_value(str(defaults.context_k))  # a setting, not memory
    assert page.errors == []


def test_judges_that_need_reference_answers_are_warned_about_or_refused(page, api):
    from playwright.sync_api import expect

    some = api.post("/api/v1/question-sets", {"name": "half without truths", "questions": [
        {"question_text": "with", "ground_truth": "yes"}, {"question_text": "without"}]}, expect=201)
    none = api.post("/api/v1/question-sets", {"name": "no truths", "questions": [{"question_text": "q"}]},
                    expect=201)
    page.goto(f"/evaluations/new?question_set={some['id']}")
    warning = page.locator("#reference-warning")
    page.check('input[name="judge"][value="groundedness"]')  # needs contexts, not a reference
    expect(warning).to_be_hidden()
    page.check('input[name="judge"][value="score5"]')
    expect(warning).to_have_text("score5 needs a reference answer: 1 of the 2 questions of this set have none, and "
                                 "will not be judged.")
    page.select_option('select[name="question_set_id"]', none["id"])
    expect(warning).to_contain_text("no question of this set has one")
    count = api.get("/api/v1/evaluations")["total"]
    page.fill('input[name="name"]', "cannot judge")
    page.click('button[type="submit"]')
    expect(page.locator("#flash")).to_contain_text("no question of this set has one")
    assert api.get("/api/v1/evaluations")["total"] == count
    page.uncheck('input[name="judge"][value="score5"]')
    expect(warning).to_be_hidden()
    assert page.errors == []


def figures(page) -> dict:
    """The live part's figures, read in one go (the page's script may put a new live part in place between two
    separate reads)."""
    return page.evaluate("""() => {
        const live = document.getElementById("live");
        const text = (selector) => live.querySelector(selector).innerText;
        return {status: live.dataset.status, count: text(".count"), answered: text("#answered-line"),
                tokens: text(".tokens"), latency: text(".latency"), cost: text(".cost")};
    }""")


def test_a_running_evaluation_s_page_takes_every_figure_from_one_snapshot(browser, server, api, model):
    from playwright.sync_api import expect

    from .conftest import open_page

    questions = [{"question_text": f"slow question {i:02d}: 红烧肉要炖多久？", "ground_truth": "四十分钟"}
                 for i in range(20)]
    question_set = api.post("/api/v1/question-sets", {"name": "slow", "dataset": "dataset", "questions": questions},
                            expect=201)
    eval_id = api.post("/api/v1/evaluations", {
        "name": "live figures", "dataset": "dataset", "question_set_id": question_set["id"],
        "generator": "openai:test-model", "base_url": model.url, "retriever": "bm25",
        "options": {"price_in": 1.0, "price_out": 2.0}}, expect=201)["id"]
    page = open_page(browser, server)
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "/live" in request.url else None)
    try:
        wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["completed_questions"] >= 1,
                 what="a first answer")
        page.goto(f"/evaluations/{eval_id}")
        seen = [figures(page)]
        paused = False
        while seen[-1]["status"] != "COMPLETED":
            # sampled on a clock, not on the page's responses: the response that ends the run may come before the
            # last snapshot is read, and then no further response comes to wait for (seen failing once in CI)
            page.wait_for_timeout(400)
            seen.append(figures(page))
            done = int(seen[-1]["count"].split(" / ")[0])
            if not paused and done >= 4:
                api.post(f"/api/v1/evaluations/{eval_id}/pause")
                expect(page.locator("#live .status")).to_have_text("PAUSED", timeout=10_000)
                with page.expect_response(lambda response: "/live" in response.url, timeout=30_000):
                    pass  # the page goes on asking while paused ...
                api.post(f"/api/v1/evaluations/{eval_id}/resume")  # ... so a resume from elsewhere shows up
                paused = True
            assert len(seen) < 400, seen[-1]
        for shown in seen:  # each snapshot's figures agree with each other
            done = int(shown["count"].split(" / ")[0])
            assert shown["answered"].startswith(f"{done} of 20 answered"), shown
        changes = [(a, b) for a, b in zip(seen, seen[1:]) if a["count"] != b["count"]]
        assert changes and all(a["tokens"] != b["tokens"] for a, b in changes)  # every answer brings tokens
        assert all(a["tokens"] == b["tokens"] for a, b in zip(seen, seen[1:]) if a["count"] == b["count"])
        final = api.get(f"/api/v1/evaluations/{eval_id}?limit=0")  # the page, never reloaded, matches the API
        summary = final["summary"]
        assert seen[-1]["tokens"] == (f"{summary['total_tokens']} ({summary['input_tokens']} in, "
                                      f"{summary['output_tokens']} out)")
        assert seen[-1]["cost"] == f"${summary['cost']:.4f}" and summary["cost"] > 0
        assert seen[-1]["latency"].startswith(f"mean {summary['latency_mean']:.2f} s")
        expect(page.locator("#live .stored-run")).to_contain_text(final["run_id"])  # the stored-run line appears
        expect(page.locator("#new-results")).to_be_visible()
        before = len(asked)
        # the one window left: that nothing is asked can only be seen by waiting longer than the poll interval
        page.wait_for_timeout(4500)  # evaluation.js POLL_MS is 2000
        assert len(asked) == before  # the run is over: no more polling
        assert page.errors == []
    finally:
        page.context.close()


def test_a_failed_run_is_corrected_from_its_page_then_run_again(page, api, services):
    from playwright.sync_api import expect

    rag, _ = services
    question_set = new_set(api, 6, name="to a dead port")
    eval_id = new_evaluation(api, question_set["id"], DEAD, name="wrong port")["id"]
    wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["status"] == "FAILED", what="FAILED")
    wait_for(lambda: api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["summary"]["running"] == 0,
             what="the questions in hand settled")
    page.goto(f"/evaluations/{eval_id}")
    expect(page.locator("#live .status")).to_have_text("FAILED")
    page.click("#endpoint summary")
    page.fill('#endpoint-form input[name="http_url"]', rag.url)
    page.click('#endpoint-form button[type="submit"]')
    expect(page.locator("#flash")).to_have_text("Saved and resumed: the questions left are asked at the new "
                                                "endpoint.")
    expect(page.locator("#live .status")).to_have_text("COMPLETED", timeout=60_000)
    expect(page.locator("#live dl.facts")).to_contain_text(rag.url)
    expect(page.locator("#endpoint")).to_be_hidden()
    assert api.get(f"/api/v1/evaluations/{eval_id}?limit=0")["summary"]["errors"] == 0

    page.click("text=Run again")
    page.wait_for_url(re.compile(rf"/evaluations/new\?again={eval_id}$"))
    expect(page.locator('input[name="name"]')).to_have_value("wrong port (again)")
    expect(page.locator('input[name="system"][value="http"]')).to_be_checked()
    expect(page.locator('input[name="http_url"]')).to_have_value(rag.url)
    expect(page.locator('select[name="question_set_id"]')).to_have_value(question_set["id"])
    expect(page.locator("#extra-options")).to_contain_text("generator_options")
    page.click('button[type="submit"]')
    page.wait_for_url(re.compile(r"/evaluations/eval_[0-9a-f]{16}$"))
    again = api.get(f"/api/v1/evaluations/{page.url.rsplit('/', 1)[1]}?limit=0")
    original = api.get(f"/api/v1/evaluations/{eval_id}?limit=0")
    for field in ("dataset", "question_set_id", "generator", "retriever", "judge", "options"):
        assert again[field] == original[field], field
    assert page.errors == []
