"""`search_concurrency` (the search-timing pass's threads) is one setting with one default on every surface: the web
API, the command line, Python and a sweep grid; it is recorded in the run's configuration and leaves the run's
configuration key as it was (timing changes no number)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.runs import RunHistory
from ragretrieval.server.views import form_defaults

from .conftest import CORPUS, Api, run_until_done

SETTINGS = {"model": "hashing-64", "ks": [1, 5], "chunk_size": 200}


@pytest.fixture
def web(client_on, sqlite_url, datasets):
    api = Api(client_on(sqlite_url))
    return api, lambda eval_id: run_until_done(api, sqlite_url, datasets, eval_id)


def test_every_surface_takes_it_and_no_key_changes(web, demo_dataset, sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    api, run = web
    default = EvalConfig.model_fields["search_concurrency"].default
    schema = api.get("/openapi.json")["components"]["schemas"]["EvaluationOptions"]["properties"]
    assert schema["search_concurrency"]["default"] == default == form_defaults()["search_concurrency"]
    opened = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    created = api.post("/api/v1/evaluations", {
        "name": "web", "kind": "retrieval", "dataset": CORPUS, "question_set_id": opened["id"], "retriever": "dense",
        "options": {**SETTINGS, "search_concurrency": 2}}, expect=201)
    done = run(created["id"])
    assert done["status"] == "COMPLETED", done["error"]
    refused = api.post("/api/v1/evaluations", {
        "name": "bad", "kind": "retrieval", "dataset": CORPUS, "question_set_id": opened["id"], "retriever": "dense",
        "options": {**SETTINGS, "search_concurrency": 0}}, expect=422)
    assert "search_concurrency" in str(refused)
    runs = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    cli = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--model", "hashing-64", "--k", "1,5",
                                    "--chunk-size", "200", "--search-concurrency", "3", "--runs-db", runs,
                                    "--name", "cli", "--no-progress"])
    assert cli.exit_code == 0, cli.output
    python = rr.evaluate(demo_dataset, runs_db=runs, save=True, name="python", search_concurrency=1, **SETTINGS)
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"dataset: {demo_dataset}\nmodels: [hashing-64]\nchunk_sizes: [200]\nks: [1, 5]\n"
                    "search_concurrency: 5\n", encoding="utf-8")
    swept = CliRunner().invoke(main, ["sweep", "--config", str(grid), "--runs-db", runs, "--no-progress"])
    assert swept.exit_code == 0, swept.output
    with RunHistory(sqlite_url) as history:
        web_run = history.get(done["run_id"])
    with RunHistory(runs) as history:
        stored = [history.get(s.id) for s in history.list()]
    assert web_run.report.config.search_concurrency == 2 and web_run.report.search.concurrency == 2
    assert sorted(r.report.config.search_concurrency for r in stored) == [1, 3, 5]
    assert python.search.concurrent_qps is None  # one thread: no concurrent pass
    assert len({web_run.config_key, *(r.config_key for r in stored)}) == 1
