"""Nothing a web client sends reads a file on the server: a model must be a registry name or one
the operator allowed (`serve --allow-model`), retrievers that read files or need command-line settings are refused
when the evaluation is created, and no refusal tells an existing path from a missing one."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.server.jobs.options import offered_models, web_retrievers

from .conftest import CORPUS, Api, new_set


def create(api: Api, set_id: str, **fields):
    body = {"name": "e", "dataset": CORPUS, "question_set_id": set_id, "generator": "extractive", **fields}
    return api.request("POST", "/api/v1/evaluations", json=body)


@pytest.mark.parametrize("model", ["/root", "/etc", "/etc/passwd", "/nonexistent/folder", "..", "../../etc",
                                   "dataset", "st:/root", "sentence-transformers/all-MiniLM-L6-v2", "openai:x",
                                   "m3e-small/../../root", "hashing-../../etc", "hashing-8/x"])
def test_a_model_outside_the_registry_is_refused_the_same_way_whatever_the_disk_holds(api, model):
    question_set = new_set(api, 1)
    refused = create(api, question_set["id"], retriever="dense", options={"model": model})
    baseline = create(api, question_set["id"], retriever="dense", options={"model": "/no/such/path/at/all"})
    assert refused.status_code == baseline.status_code == 400
    assert refused.json() == baseline.json()  # identical: no probe of the server's files
    detail = refused.json()["detail"]
    assert detail.startswith("options.model: not a model this server offers (it offers m3e-small, ")
    assert "--allow-model" in detail and model not in detail.replace("m3e-small", "")
    assert api.get("/api/v1/evaluations")["total"] == 0


def test_registry_names_are_offered_and_the_operator_adds_others(make_client, tmp_path):
    folder = tmp_path / "my-model"
    folder.mkdir()
    api = Api(make_client(allow_models=(str(folder), "st:intfloat/e5-small")))
    question_set = new_set(api, 1)
    for model in ("m3e-small", "e5-small-q4", "m3e-small@int8", "hashing", "hashing-64", str(folder),
                  "st:intfloat/e5-small"):
        assert create(api, question_set["id"], retriever="dense", options={"model": model}).status_code == 201
    assert create(api, question_set["id"], retriever="dense", options={"model": str(tmp_path)}).status_code == 400
    assert offered_models([str(folder)])[-1] == str(folder) and "e5-small-q4" in offered_models()


@pytest.mark.parametrize("retriever", ["run-file", "http", "rerank"])
def test_retrievers_that_read_files_or_need_settings_are_refused_at_creation(api, retriever):
    question_set = new_set(api, 1)
    response = create(api, question_set["id"], retriever=retriever)
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(f"retriever {retriever!r} is not offered here")
    assert api.get("/api/v1/evaluations")["total"] == 0  # refused when created, not when a worker starts it
    assert web_retrievers() == ["bm25", "dense", "hybrid"]


def test_the_new_evaluation_page_offers_only_those_retrievers(api):
    page = api.client.get("/evaluations/new").text
    assert '<option value="bm25"' in page and '<option value="hybrid"' in page
    assert '<option value="run-file"' not in page and '<option value="http"' not in page


@pytest.mark.parametrize("options", [{"lemmatizer": "fst:/etc/passwd"}, {"lemmatizer": "fst:/no/such"},
                                     {"generator_options": {"mapping": "/etc/passwd"}}])
def test_other_options_naming_files_stay_refused(api, options):
    question_set = new_set(api, 1)
    response = create(api, question_set["id"], generator="http:http://127.0.0.1:9/ask", options=options)
    assert response.status_code == 422, response.text  # a setting that cannot work here, named by its field
    assert "/etc/passwd" not in response.text and "/no/such" not in response.text, response.text


def test_serve_takes_allow_model():
    shown = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "--allow-model NAME" in shown


@pytest.mark.parametrize("store, options", [("lancedb", {"path": "/etc"}), ("milvus", {"uri": "/tmp/x.db"}),
                                            ("qdrant", {"url": "http://user:pw@127.0.0.1:6333"}),
                                            ("chroma", {"host": "127.0.0.1"})])
def test_an_engine_stores_folder_or_server_stays_with_the_command_line(api, store, options):
    question_set = new_set(api, 1)
    response = create(api, question_set["id"], retriever="dense",
                      options={"model": "hashing", "store": store, "store_options": options})
    assert response.status_code == 422, response.text
    problem = response.json()["detail"][0]
    assert problem["loc"][-2:] == ["options", "store_options"] and "command line" in problem["msg"]
    assert "pw" not in response.text and api.get("/api/v1/evaluations")["total"] == 0


def test_a_built_in_store_takes_its_options_on_the_web(api):
    question_set = new_set(api, 1)
    body = {"model": "hashing", "store": "faiss", "store_options": {"kind": "flat"}}
    assert create(api, question_set["id"], retriever="dense", options=body).status_code == 201


def test_the_form_s_number_bounds_are_the_settings_model_s(api):
    """context_k once said max=100 on the page while the model took 1000: the page now reads each bound."""
    import re

    from ragretrieval.server.jobs.options import EvaluationOptions

    page = api.client.get("/evaluations/new").text
    for name in ("context_k", "judge_samples", "judge_temperature"):
        tag = re.search(rf'<input name="{name}"[^>]*>', page).group(0)
        bounds = {m.__class__.__name__: m for m in EvaluationOptions.model_fields[name].metadata}
        assert f'min="{bounds["Ge"].ge}"' in tag and f'max="{bounds["Le"].le}"' in tag, tag
    assert 'name="context_k" type="number" min="1" max="1000"' in page
    from ragretrieval.evaluation.report import EvalConfig

    tag = re.search(r'<input name="search_concurrency"[^>]*>', page).group(0)
    bounds = {m.__class__.__name__: m for m in EvalConfig.model_fields["search_concurrency"].metadata}
    assert f'min="{bounds["Ge"].ge}"' in tag and f'max="{bounds["Le"].le}"' in tag, tag
