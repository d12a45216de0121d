"""`--retriever http` against a real BM25 service on 127.0.0.1: same numbers as the in-process BM25 retriever."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval.external import ExternalRetrieverError
from ragretrieval.retrieval.external.http import HttpRetriever, load_mapping

MAPPING = {"chunk_id": "results[].id", "parent_id": "results[].metadata.parent_id", "score": "results[].score",
           "text": "results[].text", "body": {"query": "{question}", "k": "{k}"}}


def url(server, path="/search"):
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def http_config(server, path="/search", **fields):
    return EvalConfig(retriever="http", model=None, retriever_options={"url": url(server, path), **MAPPING, **fields})


def test_http_gives_the_same_metrics_as_in_process_bm25(demo, bm25_service):
    local = evaluate(demo, EvalConfig(retriever="bm25", model=None), progress=False)
    remote = evaluate(demo, http_config(bm25_service), progress=False)
    assert set(remote.means) == {"doc", "chunk"}
    for granularity in ("doc", "chunk"):
        assert remote.means[granularity].keys() == local.means[granularity].keys()
        for name, value in local.means[granularity].items():
            assert remote.means[granularity][name] == pytest.approx(value, abs=1e-12), (granularity, name)
    assert [q.retrieved_documents for q in remote.questions] == [q.retrieved_documents for q in local.questions]
    assert remote.questions[0].retrieved_chunks[0].chunk_id == local.questions[0].retrieved_chunks[0].chunk_id
    assert not any("not in the corpus" in note for note in remote.notes)


def test_document_hits_score_document_level_only(demo, bm25_service):
    config = http_config(bm25_service, "/documents", chunk_id=None, parent_id="documents[].uri", score=None, text=None)
    report = evaluate(demo, config, progress=False)
    local = evaluate(demo, EvalConfig(retriever="bm25", model=None, granularity="doc"), progress=False)
    assert set(report.means) == {"doc"}
    assert report.means["doc"] == pytest.approx(local.means["doc"], abs=1e-12)
    assert "chunk level not scored: the retriever named documents, not chunks" in report.notes


def test_retries_a_503_then_succeeds(demo, bm25_service):
    retriever = HttpRetriever(load_mapping({"url": url(bm25_service, "/flaky"), "backoff": 0, **MAPPING}),
                              progress=False)
    hits = retriever.search_ids(demo.questions[:3], 5)
    assert [len(row) for row in hits] == [5, 5, 5]
    assert hits[0][0].parent_id == hits[0][0].chunk_id.split("#")[0]


def test_non_2xx_is_a_clear_error(demo, bm25_service):
    retriever = HttpRetriever(load_mapping({"url": url(bm25_service, "/missing"), **MAPPING}), progress=False)
    with pytest.raises(ExternalRetrieverError, match=r"POST http://127\.0\.0\.1:\d+/missing \(question q-\w+\): "
                                                     r"HTTP 404 Not Found: .*no such index"):
        retriever.search_ids(demo.questions[:1], 5)


def test_response_that_does_not_match_the_mapping_names_the_path(demo, bm25_service):
    options = {**MAPPING, "url": url(bm25_service), "parent_id": "results[].meta.parent_id"}
    retriever = HttpRetriever(load_mapping(options), progress=False)
    with pytest.raises(ExternalRetrieverError, match=r"hit 0: path 'results\[\]\.meta\.parent_id': no key 'meta' "
                                                     r"\(keys: id, score, text, metadata\)"):
        retriever.search_ids(demo.questions[:1], 3)
    retriever = HttpRetriever(load_mapping({"url": url(bm25_service), "chunk_id": "hits[].id"}), progress=False)
    with pytest.raises(ExternalRetrieverError, match=r"path 'hits\[\]\.id': no key 'hits' \(keys: results\)"):
        retriever.search_ids(demo.questions[:1], 3)


def test_bad_mappings_are_refused_with_the_field(tmp_path):
    with pytest.raises(ExternalRetrieverError, match="give chunk_id or parent_id"):
        load_mapping({"url": "http://127.0.0.1:1/x"})
    with pytest.raises(ExternalRetrieverError, match=r"mapping field 'score': path 'results\.score' must mark"):
        load_mapping({"url": "http://127.0.0.1:1/x", "chunk_id": "results[].id", "score": "results.score"})
    with pytest.raises(ExternalRetrieverError, match="must share one list of hits"):
        load_mapping({"url": "http://127.0.0.1:1/x", "chunk_id": "results[].id", "score": "scores[].value"})
    bad = tmp_path / "mapping.yaml"
    bad.write_text("url: ftp://example\nchunk_id: results[].id\n", encoding="utf-8")
    with pytest.raises(ExternalRetrieverError, match=r"mapping.yaml: field 'url': 'ftp://example' is not an http"):
        load_mapping({"mapping": str(bad)})


def test_secret_headers_come_from_the_environment_and_stay_out_of_the_report(
        demo_dataset, bm25_service, tmp_path, monkeypatch):
    monkeypatch.setenv("SERVICE_TOKEN", "s3cret-value")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(
        "version: 1\n"
        f"url: {url(bm25_service)}\n"
        "headers: {Authorization: 'Bearer ${SERVICE_TOKEN}'}\n"
        "body: {query: '{question}', k: '{k}'}\n"
        "chunk_id: results[].id\n"
        "parent_id: results[].metadata.parent_id\n"
        "score: results[].score\n",
        encoding="utf-8")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "http",
                                       "--retriever-option", f"mapping={mapping}", "--out", str(out),
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert bm25_service.seen[-1][2] == "Bearer s3cret-value"
    text = out.read_text(encoding="utf-8")
    assert "s3cret-value" not in text
    assert json.loads(text)["config"]["retriever_options"] == {"mapping": str(mapping)}
    assert "document level" in result.output


def test_missing_environment_variable_is_named(demo, bm25_service, monkeypatch):
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    retriever = HttpRetriever(load_mapping({"url": url(bm25_service), **MAPPING,
                                            "headers": {"X-Key": "${NOT_SET_TOKEN}"}}), progress=False)
    with pytest.raises(ExternalRetrieverError, match=r"\$\{NOT_SET_TOKEN\}, which is not set"):
        retriever.search_ids(demo.questions[:1], 3)


def test_a_retriever_that_finds_nothing_is_an_error_not_a_zero_table(demo, bm25_service, tmp_path):
    from ragretrieval.evaluation.pipeline import EvaluationError

    with pytest.raises(EvaluationError, match=r"the http retriever returned nothing for any of the \d+ questions; "
                                              r"check its index, URL or field mapping"):
        evaluate(demo, http_config(bm25_service, "/empty"), progress=False)
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"version": 1, "url": url(bm25_service, "/empty"), **MAPPING}), encoding="utf-8")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo.path), "--retriever", "http",
                                       "--retriever-option", f"mapping={mapping}", "--out", str(out), "--no-save",
                                       "--no-progress"])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: the http retriever returned nothing")
    assert not out.exists()


def test_some_empty_rankings_are_counted_and_no_false_note_is_printed(demo, bm25_service):
    report = evaluate(demo, http_config(bm25_service, "/half"), progress=False)
    empty = sum(len(q.text) % 2 == 0 for q in demo.questions)
    assert 0 < empty < len(demo.questions)
    assert any(note.startswith(f"{empty} of {len(demo.questions)} questions got an empty ranking")
               for note in report.notes), report.notes
    (roll_up,) = [note for note in report.notes if note.startswith("document level")]
    assert roll_up.endswith(f"or the retriever had no more ({empty} questions have fewer than k documents)")
    assert not any("named documents, not chunks" in note for note in report.notes)


def test_a_200_page_that_is_not_json_is_retried_then_named(demo, bm25_service):
    before = sum(path == "/html" for path, _, _ in bm25_service.seen)
    retriever = HttpRetriever(load_mapping({"url": url(bm25_service, "/html"), "backoff": 0, "retries": 1,
                                            **MAPPING}), progress=False)
    with pytest.raises(ExternalRetrieverError, match=r"/html \(question q-\w+\): .*not JSON.*<!DOCTYPE html>"):
        retriever.search_ids(demo.questions[:1], 5)
    assert sum(path == "/html" for path, _, _ in bm25_service.seen) - before == 2
