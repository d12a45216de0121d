"""The review mode through the API (store/review.py, routes/review.py): the next unreviewed answer in an order that
puts uncertain answers first (the same for every call), j/k neighbours, every verdict recording its reviewer,
reviewers' agreement (kappa for two, alpha for more), a judge that never varied shown as undefined rather than 0,
the inverse-probability-weighted calibrated mean, and hostile input refused."""

from __future__ import annotations

import pytest

from ragretrieval.analysis.active_inference import active_mean, inclusion_probabilities
from ragretrieval.analysis.agreement import cohen_kappa, krippendorff_alpha
from ragretrieval.server.db import Database
from ragretrieval.server.store.review import draw, uncertainty

from .review import CASES, reviewed_evaluation

pytestmark = pytest.mark.databases  # the reviewers' own verdicts are written with SQL that differs between back ends

ANSWERED = [i for i, case in enumerate(CASES) if case[5] is None]  # positions 0, 1, 2, 4


def path(eval_id: str, question_id: str) -> str:
    return f"/api/v1/evaluations/{eval_id}/results/{question_id}/annotation"


def test_uncertainty_reads_thresholds_samples_and_disagreeing_judges():
    assert uncertainty(3.0, {}, ["score5"]) == 1.0  # score5's 3 is its threshold
    assert uncertainty(5.0, {}, ["score5"]) == 0.0
    assert uncertainty(5.0, {"correctness": {"value": 0}}, ["score5", "correctness"]) == 1.0  # judges disagree
    assert uncertainty(None, {"correctness": {"value": 1, "disagreement": True}}, ["correctness"]) == 1.0
    assert uncertainty(None, {"correctness": {"value": 1, "samples": [1, 1]}}, ["correctness"]) == 0.0
    assert uncertainty(None, {}, ["correctness"]) == 1.0  # no verdict: as unsure as can be


def test_next_walks_the_draw_order_and_skips_reviewed_answers(api, db_url):
    created = reviewed_evaluation(api, db_url)
    eid = created["id"]
    first = api.get(f"/api/v1/evaluations/{eid}/review/next")
    assert first["order"] == "uncertain" and first["index"] == 0 and first["total"] == len(ANSWERED)
    assert api.get(f"/api/v1/evaluations/{eid}/review/next") == first  # a fixed draw: every call the same
    db = Database(db_url)
    try:
        with db.read() as conn:
            ids = draw(conn, eid).ids
    finally:
        db.close()
    assert first["result"]["question_id"] == ids[0] and first["next"] == ids[1] and first["previous"] is None
    answer = first["result"]
    assert answer["question_text"] and answer["ground_truth"] and answer["rag_answer"] is not None
    assert "llm_judge_reasoning" in answer and "rag_answer_sources" in answer and "checks" in answer
    api.put(path(eid, ids[0]), {"verdict": "correct", "version": 0, "reviewer": "ana"})
    assert api.get(f"/api/v1/evaluations/{eid}/review/next")["result"]["question_id"] == ids[1]
    assert api.get(f"/api/v1/evaluations/{eid}/review/next?after={ids[2]}")["result"]["question_id"] == ids[3]
    middle = api.get(f"/api/v1/evaluations/{eid}/review/items/{ids[1]}")
    assert (middle["previous"], middle["next"]) == (ids[0], ids[2])
    uniform = api.get(f"/api/v1/evaluations/{eid}/review/next?order=uniform")
    assert uniform["order"] == "uniform" and uniform["weight"] == 1.0
    for qid in ids[1:]:
        api.put(path(eid, qid), {"verdict": "incorrect", "version": 0, "reviewer": "ana"})
    assert api.request("GET", f"/api/v1/evaluations/{eid}/review/next").status_code == 204


def test_every_verdict_records_its_reviewer_and_reviewers_agree_by_kappa_then_alpha(api, db_url):
    created = reviewed_evaluation(api, db_url)
    eid = created["id"]
    ids = [r["question_id"] for r in api.get(f"/api/v1/evaluations/{eid}")["results"] if r["error"] is None]
    ana = ["correct", "incorrect", "partly_correct", "correct"]
    bo = ["correct", "incorrect", "correct", "correct"]
    cy = ["correct", "partly_correct", "correct", "incorrect"]
    version = {}
    for name, verdicts in (("ana", ana), ("bo", bo)):
        for qid, verdict in zip(ids, verdicts):
            saved = api.put(path(eid, qid), {"verdict": verdict, "version": version.get(qid, 0), "reviewer": name})
            assert saved["reviewer"] == name
            version[qid] = saved["version"]
    shown = api.get(f"/api/v1/evaluations/{eid}")["results"][0]["annotation"]
    assert shown["reviewer"] == "bo"  # the shared verdict says who gave it last
    summary = api.get(f"/api/v1/evaluations/{eid}/review/summary")
    assert summary["reviewers"]["statistic"] == "cohen_kappa" and summary["reviewers"]["names"] == ["ana", "bo"]
    assert summary["reviewers"]["value"] == pytest.approx(cohen_kappa(ana, bo).value, abs=1e-6)
    for qid, verdict in zip(ids, cy):
        version[qid] = api.put(path(eid, qid), {"verdict": verdict, "version": version[qid],
                                                "reviewer": "cy"})["version"]
    summary = api.get(f"/api/v1/evaluations/{eid}/review/summary")
    assert summary["reviewers"]["statistic"] == "krippendorff_alpha"
    assert summary["reviewers"]["value"] == pytest.approx(
        krippendorff_alpha(list(zip(ana, bo, cy))).value, abs=1e-6)
    judge = summary["judges"]["correctness"]
    assert set(judge["by_reviewer"]) == {"ana", "bo", "cy"}


def test_a_judge_that_never_varied_has_an_undefined_kappa_not_zero(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=2)  # score5 gave 5 and 2; correctness 1 and 1
    eid = created["id"]
    ids = [r["question_id"] for r in api.get(f"/api/v1/evaluations/{eid}")["results"]]
    for qid, verdict in zip(ids, ["correct", "incorrect"]):
        api.put(path(eid, qid), {"verdict": verdict, "version": 0, "reviewer": "ana"})
    judge = api.get(f"/api/v1/evaluations/{eid}/review/summary")["judges"]["correctness"]
    assert judge["kappa"] is None and judge["reason"] == "kappa undefined: the judge gave every answer 1"
    same = api.get(f"/api/v1/evaluations/{eid}")["summary"]["annotations"]["judges"]["correctness"]
    assert same["kappa"] is None and same["constant"] == 1
    page = api.client.get(f"/evaluations/{eid}/review")
    assert "kappa undefined: the judge gave every answer 1" in page.text and "0.00" not in page.text


def test_the_calibrated_mean_weighs_the_reviewed_prefix_by_its_probabilities(api, db_url):
    created = reviewed_evaluation(api, db_url)
    eid = created["id"]
    db = Database(db_url)
    try:
        with db.read() as conn:
            draws = {order: draw(conn, eid, order) for order in ("uncertain", "uniform")}
    finally:
        db.close()
    ids = draws["uncertain"].ids
    verdicts = {ids[0]: "correct", ids[1]: "incorrect", ids[3]: "correct"}  # ids[3]: off the uncertain order
    for qid, verdict in verdicts.items():
        api.put(path(eid, qid), {"verdict": verdict, "version": 0, "reviewer": "ana"})

    def prefix(order):
        k = 0
        while k < len(draws[order].ids) and draws[order].ids[k] in verdicts:
            k += 1
        return k

    order = "uniform" if prefix("uniform") > prefix("uncertain") else "uncertain"  # ties: uncertain
    chosen, k = draws[order], prefix(order)
    active = api.get(f"/api/v1/evaluations/{eid}/review/summary")["judges"]["correctness"]["active"]
    assert active["order"] == order and active["labelled"] == k and active["off_order"] == 3 - k
    values = {0: 1.0, 1: 1.0, 2: 0.0, 4: 0.0}  # correctness by position
    positions = {r["question_id"]: r["position"] for r in api.get(f"/api/v1/evaluations/{eid}")["results"]}
    labels = {"correct": 1.0, "incorrect": 0.0}
    f = [values[positions[q]] for q in chosen.ids]
    y = [labels[verdicts[q]] if i < k else float("nan") for i, q in enumerate(chosen.ids)]
    expected = active_mean(f, y, inclusion_probabilities(chosen.weights, chosen.keys, k))
    assert active["mean"] == pytest.approx(expected.mean) and active["ci"] == pytest.approx(list(expected.ci))
    assert any("optimistic" in note for note in active["notes"])  # the small-sample note


@pytest.mark.parametrize("reviewer, words", [
    ("a" * 101, "at most 100 characters"),
    ("x" * 1_000_000, "at most 100 characters"),
    ("ana\nbo", "control characters"),
    ("nul\x00", "control characters"),
    ("tab\there", "control characters"),
    (123, "reviewer must be a text"),
    (["ana"], "reviewer must be a text"),
    (None, "reviewer must be a text"),
    ({"name": "ana"}, "reviewer must be a text"),
])
def test_hostile_reviewer_names_are_refused(api, db_url, reviewer, words):
    created = reviewed_evaluation(api, db_url, answered=1)
    qid = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]["question_id"]
    response = api.request("PUT", path(created["id"], qid), json={"verdict": "correct", "version": 0,
                                                                  "reviewer": reviewer})
    assert response.status_code == 422 and words in response.text, response.text[:300]


def test_an_empty_or_blank_reviewer_is_unnamed_and_left_out_of_reviewer_agreement(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=2)
    ids = [r["question_id"] for r in api.get(f"/api/v1/evaluations/{created['id']}")["results"]]
    assert api.put(path(created["id"], ids[0]), {"verdict": "correct", "version": 0, "reviewer": "  "})["reviewer"] == ""
    assert api.put(path(created["id"], ids[1]), {"verdict": "correct", "version": 0, "reviewer": " 王 芳 "})[
        "reviewer"] == "王 芳"
    summary = api.get(f"/api/v1/evaluations/{created['id']}/review/summary")
    assert summary["reviewers"]["names"] == ["王 芳"] and summary["reviewers"]["value"] is None


@pytest.mark.parametrize("query, status", [
    ("order=random", 422), ("order=", 422), ("after=" + "q" * 25, 422), ("after=..%2F..", 422),
    ("order=uncertain&order=uniform", 200),
])
def test_hostile_review_queries_are_refused(api, db_url, query, status):
    created = reviewed_evaluation(api, db_url, answered=2)
    response = api.request("GET", f"/api/v1/evaluations/{created['id']}/review/next?{query}")
    assert response.status_code == status, response.text[:300]


def test_review_of_unknown_or_retrieval_evaluations(api, db_url):
    assert api.request("GET", "/api/v1/evaluations/eval_0000000000000000/review/next").status_code == 404
    created = reviewed_evaluation(api, db_url, answered=1)
    missing = api.request("GET", f"/api/v1/evaluations/{created['id']}/review/items/q_0000000000000000")
    assert missing.status_code == 404
