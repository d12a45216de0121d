"""Evaluations side by side through the API: the statistics are those of ``ragretrieval compare``
on the stored runs, level by level (both outputs compared); paired questions are shown with each evaluation's
result and can be narrowed to those that changed; hostile id lists are refused, and evaluations over different
question sets say what is paired and what is not."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main

from .conftest import CORPUS, Api, new_evaluation, new_set, run_until_done


@pytest.fixture(scope="module")
def compared(tmp_path_factory, datasets):
    """Three completed evaluations of the demo corpus's questions on one SQLite database: the extractive baseline
    with 3 and with 1 context, and a retrieval evaluation; and a set of typed questions (not evaluated)."""
    from fastapi.testclient import TestClient

    from ragretrieval.server import ServeSettings, create_app

    from .conftest import FAST

    folder = tmp_path_factory.mktemp("compare")
    url = f"sqlite:///{folder / 'runs.sqlite'}"
    client = TestClient(create_app(ServeSettings(runs_db=url, datasets=datasets, worker=False,
                                                 worker_settings=FAST)), base_url="http://127.0.0.1")
    api = Api(client)
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    made = {}
    for name, body in (("k3", {"generator": "extractive", "options": {"context_k": 3}}),
                       ("k1", {"generator": "extractive", "options": {"context_k": 1}}),
                       ("grid", {"kind": "retrieval", "options": {"ks": [1, 3]}})):
        created = api.post("/api/v1/evaluations", {"name": name, "dataset": CORPUS, "question_set_id": opened["id"],
                                                   "retriever": "bm25", **body}, expect=201)
        done = run_until_done(api, url, datasets, created["id"])
        assert done["status"] == "COMPLETED", done["error"]
        made[name] = done
    yield api, url, made, opened
    client.close()


def same(ours, theirs) -> bool:
    """Equal, numbers to 1e-9 (the web's statistics take every metric at once: paired_batch.py)."""
    if isinstance(ours, list):
        return len(ours) == len(theirs) and all(same(x, y) for x, y in zip(ours, theirs))
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    return ours == theirs


def cli_json(url: str, *args: str) -> dict:
    result = CliRunner().invoke(main, ["runs", "compare", *args, "--json", "--runs-db", url])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_each_level_is_what_ragretrieval_compare_says_of_the_stored_runs(compared):
    api, url, made, _ = compared
    a, b = made["k3"], made["k1"]
    shown = api.get(f"/api/v1/compare?ids={a['id']},{b['id']}&limit=100")
    assert shown["paired"] == 30 and all(u["count"] == 0 for u in shown["unpaired"])
    assert set(shown["levels"]) == {"answer", "doc", "chunk"}
    for level, found in shown["levels"].items():
        metrics = [m for name in found["metrics"] for m in ("-m", name)]
        cli = cli_json(url, a["run_id"], b["run_id"], "--granularity", level, *metrics)
        assert found["metrics"].keys() == cli["metrics"].keys()
        assert len(found["metrics"]) >= (2 if level == "answer" else 20)  # every metric, not two defaults
        for name, entry in found["metrics"].items():
            theirs = cli["metrics"][name]
            assert entry.keys() == theirs.keys()
            assert all(same(value, theirs[key]) for key, value in entry.items()), (level, name, entry, theirs)
        assert {k: found[k] for k in ("test", "correction", "alpha", "n_questions", "granularity")} == {
            k: cli[k] for k in ("test", "correction", "alpha", "n_questions", "granularity")}
    assert shown["levels"]["doc"]["metrics"]["recall@3"]["a"] > shown["levels"]["doc"]["metrics"]["recall@1"]["a"]
    # the question rows: both results side by side, and only those that changed when asked
    rows = shown["questions"]["items"]
    assert len(rows) == 30 and all(len(r["results"]) == 2 and all(r["results"]) for r in rows)
    assert rows[0]["results"][0]["rag_answer"] and rows[0]["question_text"]
    assert len(rows[0]["results"][0]["rag_answer_sources"]) == 3 and len(rows[0]["results"][1]["rag_answer_sources"]) == 1
    changed = api.get(f"/api/v1/compare?ids={a['id']},{b['id']}&changed=true&limit=100")
    assert changed["questions"]["total"] == changed["changed"] == sum(r["changed"] for r in rows)
    assert 0 < changed["changed"] < 30 and all(r["changed"] for r in changed["questions"]["items"])


def test_three_evaluations_each_against_the_first_and_a_retrieval_run_on_retrieval_metrics(compared):
    api, url, made, _ = compared
    ids = ",".join(made[name]["id"] for name in ("k3", "k1", "grid"))
    shown = api.get(f"/api/v1/compare?ids={ids}&limit=2")
    assert "answer" not in shown["levels"]  # the retrieval evaluation has no answers
    doc = shown["levels"]["doc"]
    assert doc["runs"] == ["k3", "k1", "grid"] and [p["b"] for p in doc["pairs"]] == ["k1", "grid"]
    assert set(doc["pairs"][0]["metrics"]) == {"recall@1", "precision@1", "hit_rate@1", "mrr@1", "f1@1", "ndcg@1",
                                               "map@1", "recall@3", "precision@3", "hit_rate@3", "mrr@3", "f1@3",
                                               "ndcg@3", "map@3"}  # the cutoffs all three hold
    metrics = [m for name in doc["pairs"][0]["metrics"] for m in ("-m", name)]
    cli = cli_json(url, *(made[n]["run_id"] for n in ("k3", "k1", "grid")), "--granularity", "doc", *metrics)
    assert doc["pairs"][1]["metrics"]["recall@3"]["p_corrected"] == pytest.approx(
        cli["pairs"][1]["metrics"]["recall@3"]["p_corrected"])
    assert len(shown["questions"]["items"]) == 2 and shown["questions"]["total"] == 30
    grid = shown["questions"]["items"][0]["results"][2]
    assert grid["rag_answer"] is None and grid["retrieval"]["recall"] in (0.0, 1.0)


def test_different_question_sets_say_what_is_paired_and_what_is_not(compared, datasets):
    api, url, made, opened = compared
    some = api.get(f"/api/v1/question-sets/{opened['id']}")["questions"][:10]
    subset = api.post("/api/v1/question-sets", {"name": "ten of them", "dataset": CORPUS, "questions": [
        {k: q[k] for k in ("question_type", "question_text", "ground_truth", "source_record")} for q in some]},
        expect=201)
    created = api.post("/api/v1/evaluations", {"name": "ten", "dataset": CORPUS, "question_set_id": subset["id"],
                                               "generator": "extractive", "retriever": "bm25"}, expect=201)
    ten = run_until_done(api, url, datasets, created["id"])
    shown = api.get(f"/api/v1/compare?ids={made['k3']['id']},{ten['id']}")
    assert shown["paired"] == 10
    assert [u["count"] for u in shown["unpaired"]] == [20, 0] and len(shown["unpaired"][0]["examples"]) == 5
    assert shown["levels"]["doc"]["n_questions"] == 10
    typed = new_set(api, 2)
    other = api.post("/api/v1/evaluations", {"name": "typed", "dataset": CORPUS, "question_set_id": typed["id"],
                                             "generator": "extractive", "retriever": "bm25"}, expect=201)
    run_until_done(api, url, datasets, other["id"])
    refused = api.request("GET", f"/api/v1/compare?ids={made['k3']['id']},{other['id']}")
    assert refused.status_code == 400 and "no question in common" in refused.json()["detail"]
    # compare is offered only where it can pair: "ten" (the corpus's questions) yes, "typed" disabled with the reason
    detail = api.client.get(f"/evaluations/{made['k3']['id']}").text
    assert f'<option value="{ten["id"]}">ten</option>' in detail
    assert (f'<option value="{other["id"]}" disabled>typed (another question set: its questions cannot be paired)'
            "</option>") in detail
    typed_page = api.client.get(f"/evaluations/{other['id']}").text
    assert 'disabled title="No other completed evaluation of this question set."' in typed_page
    listed = api.client.get("/evaluations/list").text
    keys = dict(re.findall(r'data-id="([^"]+)" data-status="[A-Z]+" data-question-set="([^"]+)"', listed))
    assert keys[ten["id"]] == keys[made["k3"]["id"]] == keys[made["k1"]["id"]] != keys[other["id"]]


def test_hostile_id_lists_are_refused(compared):
    api, url, made, opened = compared
    first = made["k3"]["id"]
    cases = [
        ("", 400, "compare takes 2 or 3 evaluations"),
        (first, 400, "got 1"),
        (",".join([first] * 2), 400, "is named twice"),
        (",".join([first, made["k1"]["id"], made["grid"]["id"], "eval_0000000000000000"]), 400, "got 4"),
        (",".join(f"eval_{i:016x}" for i in range(50)), 400, "got 50"),
        (" , ,", 400, "got 0"),
        (f"{first},eval_0000000000000000", 404, "no evaluation 'eval_0000000000000000'"),
        (f"{first},<script>", 404, "no evaluation '<script>'"),
        ("x" * 2100, 422, "at most 2000"),
    ]
    for ids, status, words in cases:
        response = api.request("GET", "/api/v1/compare", params={"ids": ids})
        assert response.status_code == status, (ids[:60], response.text)
        assert words in response.text, (ids[:60], response.text)
    pending = new_evaluation(api, opened["id"], "http://127.0.0.1:9/answer", name="never run")
    response = api.request("GET", f"/api/v1/compare?ids={first},{pending['id']}")
    assert response.status_code == 409 and "has no stored run to compare (it is PENDING)" in response.text
    for params, words in (({"test": "z"}, "test must be one of"), ({"correction": "fdr"}, "correction must be"),
                          ({"alpha": "2"}, "less than 1"), ({"n_resamples": "0"}, "greater than or equal to 1"),
                          ({"n_resamples": str(10**9)}, "less than or equal to 100000"),
                          ({"offset": "-1"}, "greater than or equal to 0"), ({"limit": "501"}, "less than or equal"),
                          ({"offset": str(2**60)}, "less than or equal"), ({"seed": "-3"}, "greater than or equal"),
                          ({"changed": "maybe"}, "valid boolean")):
        response = api.request("GET", "/api/v1/compare", params={"ids": f"{first},{made['k1']['id']}", **params})
        assert response.status_code in (400, 422) and words in response.text, response.text


@pytest.mark.parametrize("field, value", [
    ("test", ""), ("test", "T"), ("correction", ""), ("alpha", "true"), ("alpha", ""), ("alpha", "0"),
    ("alpha", "-0.05"), ("alpha", "1e30"), ("alpha", "nan"), ("n_resamples", "true"), ("n_resamples", ""),
    ("n_resamples", "-1"), ("n_resamples", "2.5"), ("n_resamples", str(10**30)), ("seed", "true"), ("seed", ""),
    ("seed", "-1"), ("seed", str(2**32)), ("seed", str(10**30)),
])
def test_hostile_statistics_settings_are_refused_naming_the_field(compared, field, value):
    api, _, made, _ = compared
    response = api.request("GET", "/api/v1/compare", params={"ids": f"{made['k3']['id']},{made['k1']['id']}",
                                                             field: value})
    assert response.status_code in (400, 422), response.text
    assert f'"{field}"' in response.text or response.json()["detail"].startswith(field), response.text


def test_a_removed_run_is_named(compared, datasets):
    api, url, made, opened = compared
    created = api.post("/api/v1/evaluations", {"name": "to remove", "dataset": CORPUS,
                                               "question_set_id": opened["id"], "generator": "extractive",
                                               "retriever": "bm25"}, expect=201)
    done = run_until_done(api, url, datasets, created["id"])
    removed = CliRunner().invoke(main, ["runs", "rm", done["run_id"], "--runs-db", url])
    assert removed.exit_code == 0, removed.output
    response = api.request("GET", f"/api/v1/compare?ids={made['k3']['id']},{done['id']}")
    assert response.status_code == 409 and f"its stored run {done['run_id']} was removed" in response.text


def test_the_compare_page_shows_the_tables_and_the_paired_questions(compared):
    api, url, made, _ = compared
    a, b, grid = made["k3"], made["k1"], made["grid"]
    page = api.client.get(f"/compare?ids={a['id']},{b['id']}")
    assert page.status_code == 200, page.text
    html = page.text
    assert 'data-level="answer"' in html and 'data-level="doc"' in html and 'data-level="chunk"' in html
    assert 'data-metric="recall@3"' in html and "30 questions paired" in html
    assert html.count('class="side-by-side"') == 30
    changed = api.client.get(f"/compare?ids={a['id']}&other={b['id']}&changed=true").text  # "Compare with"
    assert changed.count('class="side-by-side"') == api.get(f"/api/v1/compare?ids={a['id']},{b['id']}")["changed"]
    three = api.client.get(f"/compare?ids={a['id']},{b['id']},{grid['id']}&test=wilcoxon&correction=bonferroni")
    assert three.status_code == 200 and 'data-b="grid"' in three.text and "p (bonferroni)" in three.text
    assert api.client.get(f"/compare?ids={a['id']},{b['id']}&page=0").status_code == 422
    last = api.client.get(f"/compare?ids={a['id']},{b['id']}&page=99")  # past the end: the last page
    assert last.status_code == 200 and last.text.count('class="side-by-side"') == 30  # one page of 50 holds all
    refused = api.client.get(f"/compare?ids={a['id']}")
    assert refused.status_code == 400 and "compare takes 2 or 3 evaluations" in refused.text
    detail = api.client.get(f"/evaluations/{a['id']}").text
    assert f'<option value="{b["id"]}">k1 (same question set)</option>' in detail  # "Compare with"
    retrieval = api.client.get(f"/evaluations/{grid['id']}").text
    assert "retrieval alone (the grid of eval), retriever" in retrieval and 'class="card retrieval"' in retrieval
    assert "Your verdict" not in retrieval and "Your verdict" in detail


def test_a_token_server_compares_with_the_bearer_token_only(make_client):
    token = "a-long-enough-test-token"
    client = make_client(token=token)
    ids = "eval_0000000000000000,eval_0000000000000001"
    assert client.get(f"/api/v1/compare?ids={ids}").status_code == 401
    page = client.get(f"/compare?ids={ids}", follow_redirects=False)  # the page sends to the token form
    assert page.status_code in (302, 303, 307) and page.headers["location"].startswith("/login?next=%2Fcompare")
    found = client.get(f"/api/v1/compare?ids={ids}", headers={"Authorization": f"Bearer {token}"})
    assert found.status_code == 404 and "no evaluation 'eval_0000000000000000' (and 1 more)" in found.text


def test_triage_orders_regressions_first_and_filters_worse_better_and_classes(compared):
    api, url, made, _ = compared
    a, b = made["k3"], made["k1"]
    base = f"/api/v1/compare?ids={a['id']},{b['id']}&limit=500"
    everything = api.get(base)
    metric = everything["triage"]["metric"]
    assert metric in everything["triage"]["metrics"]
    items = everything["questions"]["items"]
    assert [item["number"] for item in items] == sorted(item["number"] for item in items)
    assert all(metric in item["differences"] and "transition" in item for item in items)
    ordered = api.get(base + "&order=regressions")["questions"]["items"]
    drops = [item["differences"][metric][0] for item in ordered if item["differences"][metric][0] is not None]
    assert drops == sorted(drops) and len(ordered) == len(items)
    worse = api.get(base + "&filter=worse")["questions"]["items"]
    better = api.get(base + "&filter=better")["questions"]["items"]
    assert all(item["differences"][metric][0] < 0 for item in worse)
    assert all(item["differences"][metric][0] > 0 for item in better)
    expected_worse = sum(1 for item in items if (item["differences"][metric][0] or 0) < -1e-9)
    assert len(worse) == expected_worse
    changed = api.get(base + "&filter=changed")
    assert changed["questions"]["total"] == api.get(base + "&changed=true")["questions"]["total"] == \
        everything["changed"]
    for name, count in everything["triage"]["transitions"].items():
        only = api.get(base + "&transition=" + name.replace(" ", "%20").replace(">", "%3E"))["questions"]["items"]
        assert len(only) == count and all(item["transition"] == name for item in only)
    by_recall = api.get(base + "&order=regressions&metric=doc/recall@3")
    assert by_recall["triage"]["metric"] == "doc/recall@3"
    assert api.client.get(base + "&filter=worst").status_code == 400
    assert api.client.get(base + "&order=random").status_code == 400
    assert api.client.get(base + "&metric=nope").status_code == 400


def test_the_compare_export_has_a_row_per_question_and_metric(compared):
    import csv
    import io

    api, url, made, _ = compared
    a, b = made["k3"], made["k1"]
    found = api.get(f"/api/v1/compare?ids={a['id']},{b['id']}&limit=500")
    as_json = api.client.get(f"/api/v1/compare/export?ids={a['id']},{b['id']}&format=json")
    assert as_json.status_code == 200 and "attachment" in as_json.headers["content-disposition"]
    rows = as_json.json()["rows"]
    assert len(rows) == found["paired"] * len(found["triage"]["metrics"])
    first = found["questions"]["items"][0]
    for row in (r for r in rows if r["question_id"] == first["id"]):
        shown = row["metric"] if row["level"] == "answer" else f"{row['level']}/{row['metric']}"
        difference = first["differences"][shown][0]
        assert (row["B-A"] is None and difference is None) or row["B-A"] == pytest.approx(difference)
        assert row["class_A"] == (first["transition"] or " -> ").split(" -> ")[0] or row["class_A"] is None
    as_csv = api.client.get(f"/api/v1/compare/export?ids={a['id']},{b['id']}&format=csv")
    assert as_csv.headers["content-type"].startswith("text/csv") and as_csv.content.startswith(b"\xef\xbb\xbf")
    table = list(csv.reader(io.StringIO(as_csv.content.decode("utf-8-sig"))))
    assert table[0] == ["question_id", "question_number", "level", "metric", "A", "B", "B-A", "class_A", "class_B"]
    assert len(table) == len(rows) + 1
    assert api.client.get(f"/api/v1/compare/export?ids={a['id']},{b['id']}&format=xlsx").status_code == 422


def test_the_export_neutralises_formula_cells():
    from ragretrieval.server.store.compare_export import neutralise

    assert neutralise("=cmd|' /C calc'!A0").startswith("'")


def test_a_permalink_opens_the_page_that_holds_the_question(compared):
    api, url, made, _ = compared
    a, b = made["k3"], made["k1"]
    items = api.get(f"/api/v1/compare?ids={a['id']},{b['id']}&limit=500")["questions"]["items"]
    last = items[-1]
    page = api.client.get(f"/compare?ids={a['id']},{b['id']}&q={last['id']}")
    assert page.status_code == 200 and f'id="q={last["id"]}"' in page.text
    assert f'>#{last["number"]}</a>' in page.text and "/static/permalink.js" in page.text
    regressions = api.client.get(f"/compare?ids={a['id']},{b['id']}&order=regressions&filter=worse").text
    assert 'name="order"' in regressions and "regressions first" in regressions


def test_a_card_permalink_opens_the_detail_page_that_holds_it(compared):
    api, url, made, _ = compared
    a = made["k3"]
    results = api.get(f"/api/v1/evaluations/{a['id']}?limit=500")["results"]
    last = results[-1]
    first_page = api.client.get(f"/evaluations/{a['id']}").text
    assert f'id="q={last["question_id"]}"' not in first_page  # 30 questions, 20 a page
    assert f'href="/evaluations/{a["id"]}#q={results[0]["question_id"]}"' in first_page
    assert "/static/permalink.js" in first_page
    held = api.client.get(f"/evaluations/{a['id']}?q={last['question_id']}").text
    assert f'id="q={last["question_id"]}"' in held
    assert api.client.get(f"/evaluations/{a['id']}?q=nope").status_code == 200  # unknown: the first page


def test_runs_stored_before_the_columns_compare_as_they_did(compared):
    """Runs stored by a ragretrieval without per-question columns (schema 6): the first comparison reads their
    reports, gives the same figures, and keeps their columns for the next one."""
    from sqlalchemy import create_engine, text

    from ragretrieval.server.store import comparing

    api, url, made, _ = compared
    a, b, grid = made["k3"], made["k1"], made["grid"]
    path = f"/api/v1/compare?ids={a['id']},{b['id']},{grid['id']}&limit=100"
    with_columns = api.get(path)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM rr_run_columns"))
    comparing._values.found.clear()
    comparing._comparisons.found.clear()
    assert api.get(path) == with_columns
    with engine.connect() as conn:
        kept = {row[0] for row in conn.execute(text("SELECT DISTINCT run_id FROM rr_run_columns"))}
    engine.dispose()
    assert kept == {a["run_id"], b["run_id"], grid["run_id"]}


def test_the_shown_results_are_found_by_position_or_else_by_their_records(compared):
    """The page's results are read by position when the stored run holds them in that order (as the worker stores
    it); a run in another order is matched by every result's record instead, to the same rows."""
    from ragretrieval.server.db import Database
    from ragretrieval.server.store.comparing import result_ids

    api, url, made, _ = compared
    evaluation = made["k3"]
    db = Database(url)
    try:
        run_ids = db.history.columns(evaluation["run_id"]).ids
        shown = set(run_ids[:5])
        with db.read() as conn:
            by_position = result_ids(conn, evaluation["id"], run_ids, shown)
            by_record = result_ids(conn, evaluation["id"], run_ids[::-1], shown)
    finally:
        db.close()
    assert by_position == by_record and sorted(by_position) == sorted(shown)
    assert all(qid.startswith("q_") for qid in by_position.values()) and not any(
        run_id.startswith("q_") for run_id in by_position)  # dataset ids in the run, the set's ids in the rows
