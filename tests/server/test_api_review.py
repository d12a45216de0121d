"""Finding the bad answers, expected next to retrieved and reviewers' annotations through the API, on SQLite and PostgreSQL: server-side filters and sorts that page, each source marked against
the question's labels with its recall and MRR, annotations stored, versioned, counted, agreed with the judges
(kappa) and calibrated, and every hostile input refused."""

from __future__ import annotations

import threading

import pytest

from ragretrieval.analysis.agreement import cohen_kappa
from ragretrieval.analysis.calibration import calibrated_mean
from ragretrieval.server.db import Database
from ragretrieval.server.schemas import AnnotationIn
from ragretrieval.server.store import Conflict
from ragretrieval.server.store.annotations import Annotations, annotated

from .conftest import Api
from .review import reviewed_evaluation

pytestmark = pytest.mark.databases  # SQLite and PostgreSQL differ here: filters and sorts in SQL, concurrent annotations


def positions(api, eval_id: str, query: str) -> list[int]:
    shown = api.get(f"/api/v1/evaluations/{eval_id}?limit=500&{query}")
    assert shown["results_total"] == len(shown["results"])
    return [r["position"] for r in shown["results"]]


@pytest.mark.parametrize("query, expected", [
    ("", [0, 1, 2, 3, 4]),
    ("score=5", [0]),
    ("score=1,2", [1]),
    ("score=none", [2, 3]),
    ("type=INFERENTIAL", [2, 3]),
    ("type=FACTUAL,USER_DEFINED", [0, 1, 4]),
    ("check=include:fail", [1]),
    ("check=include:part", [4]),
    ("check=correctness:fail", [2, 4]),
    ("check=any:fail", [1, 2, 4]),
    ("check=include:pass,correctness:pass", [0]),
    ("failed=true", [3]),
    ("failed=false", [0, 1, 2, 4]),
    ("retrieval=hit", [0, 1, 4]),
    ("retrieval=miss", [2]),
    ("sort=score", [1, 4, 0, 2, 3]),
    ("sort=-score", [0, 4, 1, 2, 3]),
    ("sort=check_score", [1, 4, 0, 2, 3]),
    ("sort=-check_score", [0, 2, 4, 1, 3]),
    ("sort=recall", [2, 1, 0, 4, 3]),
    ("sort=-recall&retrieval=hit", [0, 4, 1]),
    ("type=INFERENTIAL&failed=false&check=any:fail", [2]),
    ("score=&type=&check=&sort=", [0, 1, 2, 3, 4]),  # a page's form sends its empty fields
])
def test_filters_and_sorts_find_the_bad_answers(api, db_url, query, expected):
    created = reviewed_evaluation(api, db_url)
    assert positions(api, created["id"], query) == expected


def test_filters_page_on_the_server(api, db_url):
    created = reviewed_evaluation(api, db_url)
    second = api.get(f"/api/v1/evaluations/{created['id']}?retrieval=hit&sort=-recall&offset=1&limit=1")
    assert second["results_total"] == 3 and [r["position"] for r in second["results"]] == [4]
    beyond = api.get(f"/api/v1/evaluations/{created['id']}?check=any:fail&offset=10&limit=5")
    assert beyond["results"] == [] and beyond["results_total"] == 3


@pytest.mark.parametrize("query, status, words", [
    ("check=include", 422, "check must be NAME:pass"),
    ("check=include:maybe", 422, "check must be NAME:pass"),
    ("sort=loudest", 422, "sort"),
    ("retrieval=perhaps", 422, "retrieval"),
    ("failed=perhaps", 422, "failed"),
    ("annotation=great", 422, "annotation"),
    ("type=" + "T" * 600, 422, "type"),
    ("score=9", 400, "score filter must be scores 1-5"),
    ("offset=-1", 422, "offset"),
])
def test_hostile_filters_are_refused_naming_the_parameter(api, db_url, query, status, words):
    created = reviewed_evaluation(api, db_url, answered=1)
    response = api.request("GET", f"/api/v1/evaluations/{created['id']}?{query}")
    assert response.status_code == status and words in response.text, response.text


def test_each_source_is_marked_against_the_questions_labels(api, db_url):
    created = reviewed_evaluation(api, db_url)
    results = api.get(f"/api/v1/evaluations/{created['id']}")["results"]
    first, second, third, failed, repeated = results
    assert first["relevant_documents"] == ["a.md"]
    assert [s["relevant"] for s in first["rag_answer_sources"]] == [True, False]
    assert first["retrieval"] == {"recall": 1.0, "mrr": 1.0, "found": ["a.md"], "missing": []}
    assert second["retrieval"] == {"recall": 0.5, "mrr": 0.5, "found": ["c.md"], "missing": ["a.md"]}
    assert third["retrieval"] == {"recall": 0.0, "mrr": 0.0, "found": [], "missing": ["d.md"]}
    assert failed["retrieval"] is None and failed["relevant_documents"] == []
    assert repeated["retrieval"]["mrr"] == 1.0 and repeated["retrieval"]["recall"] == 1.0  # e.md counted once


def test_recall_and_mrr_are_the_scorers_at_document_level():
    """The figures are those of ragretrieval.score on the document ranking the sources make."""
    import ragretrieval as rr
    from ragretrieval.server.store.relevance import expected_vs_retrieved

    sources = [{"doc_id": d} for d in ("x", "y", "x", "z", "w")]
    found = expected_vs_retrieved(["z", "q", "y"], sources)
    scored = rr.score({"t": {"z": 1, "q": 1, "y": 1}}, {"t": ["x", "y", "z", "w"]}, ["recall@4", "mrr@4"])
    assert found["recall"] == pytest.approx(scored.means["recall@4"]) and found["mrr"] == pytest.approx(
        scored.means["mrr@4"])
    assert found["missing"] == ["q"] and expected_vs_retrieved([], sources) is None


def test_labels_below_the_evaluations_rel_level_are_not_relevant(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=1, options={"rel_level": 2})
    first = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]
    assert first["relevant_documents"] == [] and first["retrieval"] is None


# --------------------------------------------------------------------------------------------------- annotations
def annotation_path(eval_id: str, question_id: str) -> str:
    return f"/api/v1/evaluations/{eval_id}/results/{question_id}/annotation"


def test_annotations_are_stored_versioned_counted_and_agreed_with_the_judges(api, db_url):
    created = reviewed_evaluation(api, db_url)
    results = api.get(f"/api/v1/evaluations/{created['id']}")["results"]
    ids = [r["question_id"] for r in results]
    verdicts = {0: "correct", 1: "incorrect", 2: "partly_correct", 4: "correct"}
    for position, verdict in verdicts.items():
        saved = api.put(annotation_path(created["id"], ids[position]), {"verdict": verdict, "note": f"n{position}",
                                                                       "version": 0})
        assert (saved["verdict"], saved["version"]) == (verdict, 1)
    again = api.put(annotation_path(created["id"], ids[1]), {"verdict": "partly_correct", "version": 1})
    assert (again["version"], again["note"]) == (2, "")
    stale = api.request("PUT", annotation_path(created["id"], ids[1]), json={"verdict": "correct", "version": 1})
    assert stale.status_code == 409 and "annotated by someone else meanwhile" in stale.text
    verdicts[1] = "partly_correct"
    shown = api.get(f"/api/v1/evaluations/{created['id']}")
    assert shown["results"][0]["annotation"]["note"] == "n0" and shown["results"][3]["annotation"] is None
    summary = shown["summary"]["annotations"]
    assert {k: summary[k] for k in ("annotated", "correct", "partly_correct", "incorrect")} == {
        "annotated": 4, "correct": 2, "partly_correct": 2, "incorrect": 0}
    # score5 on 0-1: 5 -> 1 (correct), 2 -> 0.25 (incorrect), 4 -> 0.75 (correct); question 2 has no score
    expected = cohen_kappa(["correct", "partly_correct", "correct"], ["correct", "incorrect", "correct"])
    assert summary["judges"]["score5"]["kappa"] == pytest.approx(expected.value)
    assert summary["judges"]["score5"]["n"] == 3
    # correctness 1, 1, 0, 0 on questions 0, 1, 2, 4
    correctness = summary["judges"]["correctness"]
    labels = {ids[p]: {"correct": 1.0, "partly_correct": 0.5, "incorrect": 0.0}[v] for p, v in verdicts.items()}
    judged = {ids[0]: 1.0, ids[1]: 1.0, ids[2]: 0.0, ids[4]: 0.0}
    calibrated = calibrated_mean(judged, labels, metric="correctness").to_json()
    assert correctness["calibrated"] == calibrated
    assert api.get(f"/api/v1/evaluations/{created['id']}?annotation=none")["results_total"] == 1
    assert positions(api, created["id"], "annotation=partly_correct") == [1, 2]
    assert positions(api, created["id"], "annotation=any&sort=-score") == [0, 4, 1, 2]
    api.delete(annotation_path(created["id"], ids[0]))
    assert api.get(f"/api/v1/evaluations/{created['id']}")["summary"]["annotations"]["annotated"] == 3


@pytest.mark.parametrize("body, status, words", [
    ({"verdict": "maybe"}, 422, "verdict"),
    ({"verdict": "correct", "note": "x" * (10 * 2**20)}, 422, "at most 10000 characters"),
    ({"verdict": "correct", "version": -1}, 422, "version"),
    ({"verdict": "correct", "version": "one"}, 422, "version"),
    ({"verdict": None}, 422, "verdict"),
    ({}, 422, "verdict"),
    ({"verdict": "correct", "version": 0, "reviewer_token": "x"}, 422, "Extra inputs are not permitted"),
    ({"verdict": "correct"}, 422, "version"),  # without it, a colleague's verdict would be replaced unchecked
    ({"verdict": "correct", "version": None}, 422, "version"),
])
def test_hostile_annotations_are_refused(api, db_url, body, status, words):
    created = reviewed_evaluation(api, db_url, answered=1)
    question = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]["question_id"]
    response = api.request("PUT", annotation_path(created["id"], question), json=body)
    assert response.status_code == status and words in response.text, response.text[:300]


def test_annotations_need_an_answered_question_of_an_evaluation(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=4)
    results = api.get(f"/api/v1/evaluations/{created['id']}")["results"]
    every = api.get(f"/api/v1/question-sets/{created['question_set_id']}")["questions"]
    cases = [("eval_0000000000000000", results[0]["question_id"], 404, "no evaluation"),
             (created["id"], "q_0000000000000000", 404, "no question 'q_0000000000000000'"),
             (created["id"], every[4]["id"], 409, "has no answer yet (PENDING)"),
             (created["id"], results[3]["question_id"], 409, "got no answer")]
    for eval_id, question_id, status, words in cases:
        response = api.request("PUT", annotation_path(eval_id, question_id), json={"verdict": "correct",
                                                                                   "version": 0})
        assert response.status_code == status and words in response.text, response.text
    no_token = api.client.put(annotation_path(created["id"], results[0]["question_id"]),
                              json={"verdict": "correct", "version": 0})
    assert no_token.status_code == 403
    other_site = api.request("PUT", annotation_path(created["id"], results[0]["question_id"]),
                             json={"verdict": "correct", "version": 0}, headers={"Origin": "http://evil.example"})
    assert other_site.status_code == 403


def test_html_in_a_note_stays_text(api, db_url, make_client):
    created = reviewed_evaluation(api, db_url, answered=1)
    question = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]["question_id"]
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    assert api.put(annotation_path(created["id"], question), {"verdict": "incorrect", "note": evil,
                                                              "version": 0})["note"] == evil
    page = api.client.get(f"/evaluations/{created['id']}").text
    assert evil not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_token_server_takes_annotations_with_the_bearer_token_only(make_client, db_url):
    token = "a-long-enough-test-token"
    client = make_client(token=token)
    api = Api(client)
    headers = {"Authorization": f"Bearer {token}"}
    made = client.post("/api/v1/question-sets", json={"name": "s", "questions": [{"question_text": "q"}]},
                       headers=headers)
    assert made.status_code == 201
    path = annotation_path("eval_0000000000000000", "q_0000000000000000")
    assert api.request("PUT", path, json={"verdict": "correct", "version": 0}).status_code == 401
    assert client.put(path, json={"verdict": "correct", "version": 0}, headers=headers).status_code == 404  # no such


def test_concurrent_edits_keep_one_whole_annotation(api, db_url):
    created = reviewed_evaluation(api, db_url, answered=1)
    question = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]["question_id"]
    db = Database(db_url)
    store, errors = Annotations(db), []

    def seen() -> int:
        with db.read() as conn:
            now = annotated(conn, created["id"], [question]).get(question)
        return now.version if now else 0

    def edit(number: int) -> None:
        try:
            for round_ in range(5):
                while True:  # a colleague saved meanwhile (409): read their version and save over it, knowingly
                    try:
                        store.put(created["id"], question, AnnotationIn(
                            verdict=("correct", "incorrect")[number % 2], note=f"reviewer {number}, edit {round_}",
                            version=seen()))
                        break
                    except Conflict:
                        continue
        except Exception as error:  # pragma: no cover - what the test would report
            errors.append(error)

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    final = api.get(f"/api/v1/evaluations/{created['id']}")["results"][0]["annotation"]
    assert final["version"] == 20
    reviewer = int(final["note"].split()[1].rstrip(","))
    assert final["verdict"] == ("correct", "incorrect")[reviewer % 2]  # one reviewer's edit, whole
    # two reviewers who both saw version 20: one is stored, the other told
    outcomes = []

    def careful(verdict: str) -> None:
        try:
            store.put(created["id"], question, AnnotationIn(verdict=verdict, version=20))
            outcomes.append("stored")
        except Exception as error:
            outcomes.append(type(error).__name__)

    pair = [threading.Thread(target=careful, args=(v,)) for v in ("correct", "incorrect")]
    for thread in pair:
        thread.start()
    for thread in pair:
        thread.join()
    db.close()
    assert sorted(outcomes) == ["Conflict", "stored"]


def test_a_retrieval_evaluation_has_no_answers_to_annotate(api, db_url):
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": "dataset"}, expect=201)
    created = api.post("/api/v1/evaluations", {"name": "grid", "kind": "retrieval", "dataset": "dataset",
                                               "question_set_id": opened["id"], "retriever": "bm25"}, expect=201)
    question = opened["questions"][0]["id"]
    response = api.request("PUT", annotation_path(created["id"], question), json={"verdict": "correct", "version": 0})
    assert response.status_code == 409 and "no answers to annotate" in response.text
