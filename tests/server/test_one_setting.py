"""One setting, one configuration key, from every surface; one default, from every surface.

The same retrieval settings (an integer: chunk_size, a float: bm25's k1 given as the text ``1.2`` on the command
line, a boolean: the embedder's input_type, a list: ks) are given through the command line, Python, a sweep grid
file and the web API, and every run gets the same configuration key. Then the defaults that matter (retriever,
model, ks, chunk size and overlap, the judges' endpoint) are read from each surface itself, `--help`, the API's
OpenAPI description and Python's signatures, and from what each surface does when a judge is asked for."""

from __future__ import annotations

import inspect
import json
import re

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.cli.fields import flag
from ragretrieval.runs import RunHistory
from ragretrieval.runs.identity import config_key
from ragretrieval.testing.chat_server import JUDGE_REPLY, ChatServer, Reply

from .conftest import CORPUS, Api, run_until_done
from .test_engine import ANSWER_QUESTIONS, answer_set

SETTINGS = dict(retriever="hybrid", model="hashing-64", chunk_size=200, ks=[1, 5],
                retriever_options={"k1": 1.2}, embed={"input_type": True})


def retrieval_key(config) -> str:
    """The configuration key of the retrieval settings alone (the same fingerprints for every surface)."""
    return config_key(config, "corpus", "questions", "labels")


@pytest.fixture
def web(client_on, sqlite_url, datasets):
    """(the API, run(eval_id) -> detail) on SQLite, with the built-in engine's worker run on demand."""
    api = Api(client_on(sqlite_url))
    return api, lambda eval_id: run_until_done(api, sqlite_url, datasets, eval_id)


def test_one_setting_has_one_key_from_the_cli_python_a_grid_file_and_the_web_api(demo_dataset, tmp_path, web,
                                                                                 sqlite_url, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    runs = f"sqlite:///{tmp_path / 'surfaces.sqlite'}"  # the web app's is sqlite_url
    cli = CliRunner().invoke(main, [
        "eval", "--dataset", str(demo_dataset), "--retriever", "hybrid", "--model", "hashing-64", "--chunk-size",
        "200", "--k", "1,5", "--retriever-option", "k1=1.2", "--embed-input-type", "--runs-db", runs, "--name",
        "cli", "--no-progress"])
    assert cli.exit_code == 0, cli.output
    rr.evaluate(demo_dataset, runs_db=runs, name="python", **SETTINGS)
    grid = tmp_path / "grid.toml"
    grid.write_text(f'dataset = "{demo_dataset}"\nretrievers = ["hybrid"]\nmodels = ["hashing-64"]\n'
                    'chunk_sizes = [200]\nks = [1, 5]\n[retriever_options]\nk1 = 1.2\n[embed]\ninput_type = true\n',
                    encoding="utf-8")
    swept = CliRunner().invoke(main, ["sweep", "--config", str(grid), "--runs-db", runs, "--no-progress"])
    assert swept.exit_code == 0, swept.output
    api, run = web
    question_set = api.post("/api/v1/question-sets/from-dataset", {"dataset": CORPUS}, expect=201)
    created = api.post("/api/v1/evaluations", {
        "name": "web", "dataset": CORPUS, "question_set_id": question_set["id"], "generator": "extractive",
        "retriever": "hybrid", "options": {"model": "hashing-64", "chunk_size": 200, "ks": [1, 5],
                                           "retriever_options": {"k1": 1.2}, "embed": {"input_type": True}}},
        expect=201)
    done = run(created["id"])
    assert done["status"] == "COMPLETED", done["error"]
    with RunHistory(runs) as history:
        stored = {s.name: history.get(s.id) for s in history.list()}
    with RunHistory(sqlite_url) as history:
        web_run = history.get(done["run_id"])
    retrieval = {name: run.report.config for name, run in stored.items()}
    retrieval["web"] = web_run.report.config.retrieval
    assert retrieval["cli"].retriever_options == {"k1": 1.2}  # the number, not the text "1.2"
    assert retrieval["cli"].embed == {"input_type": True} and retrieval["cli"].chunk_size == 200
    assert len({retrieval_key(config) for config in retrieval.values()}) == 1, {
        name: config.identity_settings() for name, config in retrieval.items()}
    assert len({run.config_key for run in stored.values()}) == 1, {  # the same data too: the same stored key
        name: (run.config_key, run.report.dataset.labels_fingerprint, run.report.config.identity_settings())
        for name, run in stored.items()}


def help_default(command: str, flag: str) -> str:
    """The ``[default: ...]`` of a flag in a command's --help (one option a line on a wide terminal)."""
    entries: list[str] = []
    for line in CliRunner().invoke(main, [command, "--help"], terminal_width=1000).output.splitlines():
        if line.lstrip().startswith("-"):
            entries.append(line.strip())
        elif entries and line.strip():
            entries[-1] += " " + line.strip()  # an option's help on the lines below it
    line = next(entry for entry in entries if entry.split(" ")[0].rstrip(",") == flag)
    found = re.search(r"\[default: ([^\]]+)\]", line)
    assert found, f"{flag} shows no default in {command} --help: {line}"
    return found.group(1)


def test_the_cli_the_web_api_and_python_share_every_default(web):
    api, _ = web
    schema = api.get("/openapi.json")["components"]["schemas"]
    web_options = schema["EvaluationOptions"]["properties"]
    python = inspect.signature(rr.evaluate).parameters
    python_answer = inspect.signature(rr.answer).parameters
    cli = {name: help_default("eval", flag) for name, flag in (
        ("retriever", "--retriever"), ("model", "--embed-model"), ("ks", "--k"), ("chunk_size", "--chunk-size"),
        ("chunk_overlap", "--chunk-overlap"))}
    assert cli == {"retriever": "dense", "model": "m3e-small", "ks": "1,3,5,10", "chunk_size": "300",
                   "chunk_overlap": "50"}
    assert schema["EvaluationIn"]["properties"]["retriever"]["default"] == cli["retriever"]
    assert {"retriever": cli["retriever"], "model": python["model"].default} == {
        "retriever": python["retriever"].default, "model": web_options["model"]["default"]}
    for name in ("model", "chunk_size", "chunk_overlap"):
        assert str(web_options[name]["default"]) == str(python[name].default) == cli[name] == \
            str(python_answer[name].default) == help_default("answer", flag(name))
    assert web_options["ks"]["default"] == python["ks"].default == [int(k) for k in cli["ks"].split(",")]
    assert python_answer["retriever"].default == cli["retriever"] == help_default("answer", "--retriever")
    assert web_options["context_k"]["default"] == python_answer["context_k"].default == int(
        help_default("answer", "--context-k"))


@pytest.mark.parametrize("generator, judge_model_expected", [("openai:gen-model", "gen-model"),
                                                             ("extractive", "gpt-4o-mini")])
def test_the_judges_endpoint_falls_back_alike_on_every_surface(generator, judge_model_expected, web, demo_dataset,
                                                               tmp_path, monkeypatch):
    """No judge model or endpoint given: the judges ask the generator's model (when it is openai:) at the
    generator's endpoint, else gpt-4o-mini; the same on the command line, the web API and Python."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fallback")
    api, run = web
    seen = {}

    def fresh_cache(surface: str) -> int:  # each surface asks the model itself (no answer from another's cache)
        monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / f"cache-{surface}"))
        return len(server.requests)

    with ChatServer(lambda request: Reply(JUDGE_REPLY)) as server:
        endpoint = {"base_url": server.url} if generator.startswith("openai:") else {"judge_base_url": server.url}
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in endpoint.items()]
        fresh_cache("cli")
        cli = CliRunner().invoke(main, ["answer", "--dataset", str(demo_dataset), "--questions", str(ANSWER_QUESTIONS),
                                        "--generator", generator, "--retriever", "bm25", "--judge", "score5",
                                        *flags, "--no-save", "--no-progress"])
        assert cli.exit_code == 0, cli.output
        seen["cli"] = sorted({r["model"] for r in server.requests[:]})
        asked = fresh_cache("python")
        rr.answer(demo_dataset, ANSWER_QUESTIONS, generator=generator, retriever="bm25", judges="score5", **endpoint)
        seen["python"] = sorted({r["model"] for r in server.requests[asked:]})
        asked = fresh_cache("web")
        question_set = answer_set(api)
        body = {"name": "judged", "dataset": CORPUS, "question_set_id": question_set["id"], "generator": generator,
                "retriever": "bm25", "judge": "score5", **endpoint}
        done = run(api.post("/api/v1/evaluations", body, expect=201)["id"])
        assert done["status"] == "COMPLETED", done["error"]
        seen["web"] = sorted({r["model"] for r in server.requests[asked:]})
    expected = [judge_model_expected]  # an openai: generator asks the same model as its judges
    assert seen == {"cli": expected, "python": expected, "web": expected}, json.dumps(seen)
