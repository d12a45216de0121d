"""Retrieval evaluations from the web: ``kind: "retrieval"`` runs the pipeline's `evaluate` over a
question set and stores a retrieval run with the configuration key and numbers of ``ragretrieval eval`` and
``rr.evaluate`` for the same settings; hostile creations are refused naming the field."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.runs import RunHistory

from .conftest import CORPUS, Api, new_set, run_until_done

SETTINGS = {"model": "hashing-64", "ks": [1, 5], "chunk_size": 200}


@pytest.fixture
def web(client_on, sqlite_url, datasets):
    api = Api(client_on(sqlite_url))
    return api, lambda eval_id: run_until_done(api, sqlite_url, datasets, eval_id)


def retrieval_body(set_id: str, **changes) -> dict:
    return {"name": "dense, hashing", "kind": "retrieval", "dataset": CORPUS, "question_set_id": set_id,
            "retriever": "dense", "options": dict(SETTINGS), **changes}


def test_a_retrieval_evaluation_is_the_run_of_eval_and_rr_evaluate(web, demo_dataset, sqlite_url, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    api, run = web
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    created = api.post("/api/v1/evaluations", retrieval_body(opened["id"]), expect=201)
    assert (created["kind"], created["generator"], created["retriever"]) == ("retrieval", None, "dense")
    done = run(created["id"])
    assert done["status"] == "COMPLETED", done["error"]
    runs = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    cli = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "dense", "--model",
                                    "hashing-64", "--k", "1,5", "--chunk-size", "200", "--runs-db", runs, "--name",
                                    "cli", "--no-progress"])
    assert cli.exit_code == 0, cli.output
    python = rr.evaluate(demo_dataset, retriever="dense", **SETTINGS)
    with RunHistory(sqlite_url) as history:
        web_run = history.get(done["run_id"])
    with RunHistory(runs) as history:
        cli_run = history.get("cli")
    assert web_run.report.kind == "retrieval" and web_run.name == "dense, hashing"
    assert web_run.config_key == cli_run.config_key
    assert web_run.report.means == cli_run.report.means == python.means
    # the page's figures are the run's: the summary's means and each question's metrics and ranking
    summary = done["summary"]["metrics"]
    for level, means in python.means.items():
        for name, value in means.items():
            assert summary[f"{level}/{name}"] == pytest.approx(value)
    by_text = {q.text: q for q in python.questions}
    for result in done["results"]:
        question = by_text[result["question_text"]]
        assert [s["doc_id"] for s in result["rag_answer_sources"]] == question.retrieved_documents
        assert result["metrics"]["doc/recall@5"] == question.metrics["doc"]["recall@5"]
        assert result["rag_answer"] is None and result["checks"] == {} and result["error"] is None


def test_questions_without_relevant_documents_are_left_out_as_eval_leaves_them_out(web, sqlite_url):
    api, run = web
    opened = api.get(f"/api/v1/question-sets/{api.post('/api/v1/question-sets/from-dataset', {'dataset': CORPUS}, expect=201)['id']}")
    questions = [{k: q[k] for k in ("question_type", "question_text", "ground_truth", "source_record")}
                 for q in opened["questions"][:3]]
    questions.append({"question_text": "a question typed by hand, with no relevant document"})
    mixed = api.post("/api/v1/question-sets", {"name": "mixed", "dataset": CORPUS, "questions": questions},
                     expect=201)
    created = api.post("/api/v1/evaluations", retrieval_body(mixed["id"], retriever="bm25", options={"ks": [1, 3]}),
                       expect=201)
    done = run(created["id"])
    assert done["status"] == "COMPLETED", done["error"]
    unscored = done["results"][3]
    assert unscored["metrics"] == {} and unscored["rag_answer_sources"] == [] and unscored["error"] is None
    with RunHistory(sqlite_url) as history:
        report = history.get(done["run_id"]).report
    assert len(report.questions) == 3
    assert any("without relevant documents were left out" in note for note in report.notes)


@pytest.mark.parametrize("changes, status, words", [
    ({"generator": "extractive"}, 422, "a retrieval evaluation asks no generator"),
    ({"judge": "score5"}, 422, "asks no generator and no judge"),
    ({"base_url": "http://127.0.0.1:9/v1"}, 422, "base_url"),
    ({"kind": "grid"}, 422, "'answer' or 'retrieval'"),
    ({"options": {"context_k": 3}}, 422, "options.context_k: a retrieval evaluation takes only"),
    ({"options": {"ks": [0]}}, 422, "every k must be a positive integer"),
    ({"options": {"ks": "1,x"}}, 422, "ks"),
    # a cutoff is bounded (a billion would be a MemoryError after the work), and a boolean is no integer
    ({"options": {"ks": [1000000000]}}, 422, '"options","ks"],"msg":"ks: a cutoff above 10,000 is refused'),
    ({"options": {"ks": [True, 5]}}, 422, '"options","ks",0],"msg":"must be an integer, got true"'),
    ({"options": {"chunk_size": True}}, 422, '"options","chunk_size"],"msg":"must be an integer, got true"'),
    ({"options": {"chunk_size": 100, "chunk_overlap": 100}}, 422, "chunk_overlap must be smaller"),
    # a model the server does not offer: 400, as for an answer evaluation
    ({"options": {"model": "/etc"}}, 400, "not a model this server offers"),
    ({"options": {"model": "openai:text-embedding-3-small"}}, 400, "not a model this server offers"),
    ({"options": {"model": "sentence-transformers/all-MiniLM-L6-v2"}}, 400, "not a model this server offers"),
    ({"options": {"retriever_options": {"k9": 1}}, "retriever": "bm25"}, 422, "unknown option"),
    ({"retriever": "run-file"}, 400, "unknown retriever 'run-file'"),
    ({"retriever": "nope"}, 400, "unknown retriever"),
    ({"options": {"api_key": "sk-x"}}, 422, "looks like a secret"),
])
def test_hostile_retrieval_evaluations_are_refused_naming_the_field(web, changes, status, words):
    api, _ = web
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    response = api.request("POST", "/api/v1/evaluations", json=retrieval_body(opened["id"], **changes))
    assert response.status_code == status, response.text
    assert words in response.text
    assert api.get("/api/v1/evaluations")["total"] == 0


def test_a_set_without_relevant_documents_cannot_be_evaluated_for_retrieval(web):
    api, _ = web
    typed = new_set(api, 3)
    response = api.request("POST", "/api/v1/evaluations", json=retrieval_body(typed["id"]))
    assert response.status_code == 400 and "none of the 3 questions" in response.json()["detail"]
    answer = api.request("POST", "/api/v1/evaluations", json={**retrieval_body(typed["id"]), "kind": "answer",
                                                              "options": {}})
    assert answer.status_code == 422 and "needs a generator" in answer.text
