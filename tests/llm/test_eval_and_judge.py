"""LLM question sets feed `eval` through their spans; `judge` pools runs, and its labels feed `eval --judgements`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.dataset import load_dataset
from ragretrieval.errors import MissingInputError
from ragretrieval.scoring.trec import read_qrels
from ragretrieval.testing.chat_server import ChatServer, Reply, document_in

from .conftest import API_KEY, good_reply


def grade_of(passage: str) -> int:
    return len(passage) % 4


def judge_reply(request: dict) -> Reply:
    passage = document_in(request)
    return Reply("```json\n" + json.dumps({"score": grade_of(passage), "reasoning": "length rule"}) + "\n```")


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def llm_dataset(tmp_path, demo_corpus, llm_env):
    out = tmp_path / "dataset"
    with ChatServer(good_reply) as server:
        invoke("dataset", "build", demo_corpus, "--out", out, "--generator", "filename,llm", "--max-docs", "10",
               "--base-url", server.url, "--model", "fake-model", "--no-progress")
    dataset = load_dataset(out)
    llm_only = [q for q in dataset.questions if q.provenance.generator == "llm"]
    questions = tmp_path / "llm-questions.jsonl"
    questions.write_text("".join(q.model_dump_json() + "\n" for q in llm_only), encoding="utf-8")
    return out, questions


def trec_dict(qrels) -> dict:
    rows = {}
    for i, query_id in enumerate(qrels.query_ids):
        lo, hi = qrels.indptr[i], qrels.indptr[i + 1]
        rows[query_id] = {qrels.doc_ids[c]: int(g) for c, g in zip(qrels.doc_codes[lo:hi], qrels.labels[lo:hi])}
    return rows


def precision_at_5(report, chunks, relevant) -> float:
    """Mean over questions of the share of the top 5 retrieved chunks that `relevant(question_id, chunk)` accepts."""
    values = [sum(relevant(q["id"], chunks[hit["chunk_id"]]) for hit in q["retrieved_chunks"][:5]) / 5
              for q in report["questions"]]
    return sum(values) / len(values)


def test_filename_and_llm_questions_in_one_set(llm_dataset):
    out, _ = llm_dataset
    dataset = load_dataset(out)
    generators = [q.provenance.generator for q in dataset.questions]
    assert generators.count("llm") == 20 and generators.count("filename") >= 30
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["builder"]["generators"] == ["filename", "llm"]
    assert manifest["builder"]["llm"]["model"] == "fake-model" and manifest["builder"]["llm"]["documents"] == 10


def test_eval_scores_chunks_by_spans_then_by_judgements(tmp_path, llm_dataset):
    out, questions = llm_dataset
    dataset = load_dataset(out, questions)
    chunks = {c.chunk_id: c for c in chunk_corpus(dataset.documents, ChunkPolicy(300, 50))}
    run = tmp_path / "run.json"
    invoke("eval", "--dataset", out, "--questions", questions, "--retriever", "bm25", "--granularity", "chunk",
           "--rel-level", "2", "--k", "1,5", "--out", run, "--no-save", "--no-progress")
    report = json.loads(run.read_text(encoding="utf-8"))
    spans = {q.id: (q.relevant[0].doc_id, q.relevant[0].spans) for q in dataset.questions}

    def in_span(question_id, chunk):
        doc_id, pairs = spans[question_id]
        return chunk.parent_id == doc_id and any(chunk.start < e and s < chunk.end for s, e in pairs)

    expected = precision_at_5(report, chunks, in_span)
    assert report["means"]["chunk"]["precision@5"] == pytest.approx(expected)
    assert 0 < expected < 1  # the span labels really decide something here

    with ChatServer(judge_reply) as server:
        invoke("judge", "chunks", "--dataset", out, "--runs", run, "--depth", "3", "--out", tmp_path / "j3.json",
               "--base-url", server.url, "--model", "fake-judge", "--no-progress")
        pairs3 = len(server.requests)
        result = invoke("judge", "chunks", "--dataset", out, "--runs", run, run, "--depth", "5", "--out",
                        tmp_path / "j5.json", "--qrels-out", tmp_path / "j5.qrels", "--base-url", server.url,
                        "--model", "fake-judge", "--no-progress")
        pairs5 = len(server.requests)
    judged3 = json.loads((tmp_path / "j3.json").read_text(encoding="utf-8"))
    judged5 = json.loads((tmp_path / "j5.json").read_text(encoding="utf-8"))
    assert len(judged3["labels"]) == pairs3 == sum(min(3, len(q["retrieved_chunks"])) for q in report["questions"])
    assert pairs5 - pairs3 == len(judged5["labels"]) - len(judged3["labels"])  # only new pairs were asked
    assert f"{pairs5 - pairs3} requests, {pairs3} from cache" in result.output
    assert judged5["format_version"] == 1 and judged5["judge"]["model"] == "fake-judge"
    for label in judged5["labels"]:
        assert label["grade"] == grade_of(chunks[label["chunk_id"]].text) and label["reasoning"] == "length rule"
    assert set(server.authorizations) == {f"Bearer {API_KEY}"}
    trec = read_qrels(tmp_path / "j5.qrels")  # the same grades, for the scorer and trec_eval
    assert sorted((q, d, g) for q, rows in trec_dict(trec).items() for d, g in rows.items()) == sorted(
        (label["question_id"], label["chunk_id"], label["grade"]) for label in judged5["labels"])

    judged_run = tmp_path / "judged-run.json"
    invoke("eval", "--dataset", out, "--questions", questions, "--retriever", "bm25", "--granularity", "chunk",
           "--k", "1,5", "--judgements", tmp_path / "j5.json", "--out", judged_run, "--no-save", "--no-progress")
    judged_report = json.loads(judged_run.read_text(encoding="utf-8"))
    grade = {(label["question_id"], label["chunk_id"]): label["grade"] for label in judged5["labels"]}
    expected = precision_at_5(report, chunks, lambda question_id, chunk: grade[(question_id, chunk.chunk_id)] >= 1)
    assert judged_report["means"]["chunk"]["precision@5"] == pytest.approx(expected)
    assert "judge:fake-judge" in judged_report["dataset"]["label_sources"]
    assert any("labels from an LLM judge (fake-judge" in note for note in judged_report["notes"])


def test_judgements_for_other_chunks_are_refused(tmp_path, llm_dataset):
    out, questions = llm_dataset
    run = tmp_path / "run.json"
    invoke("eval", "--dataset", out, "--retriever", "bm25", "--k", "2", "--out", run, "--no-save", "--no-progress")
    with ChatServer(judge_reply) as server:
        invoke("judge", "chunks", "--dataset", out, "--runs", run, "--depth", "1", "--out", tmp_path / "j.json",
               "--base-url", server.url, "--model", "fake-judge", "--no-progress")
    result = CliRunner().invoke(main, ["eval", "--dataset", str(out), "--retriever", "bm25", "--chunk-size", "200",
                                       "--judgements", str(tmp_path / "j.json"), "--no-save", "--no-progress"])
    assert result.exit_code != 0
    assert "evaluate with --chunk-size 300 and --chunk-overlap 50" in result.output


def test_a_bad_judgements_file_is_named_with_its_problem(tmp_path):
    from ragretrieval.llm.judge.judgements import Judgements, JudgementsError

    (tmp_path / "latin1.json").write_bytes(b'{"format_version": 1, "judge": "caf\xe9"}')
    (tmp_path / "old.json").write_text('{"format_version": 99}')
    with pytest.raises(JudgementsError, match=r"latin1.json: not a judgements file .*: not UTF-8 text$"):
        Judgements.load(tmp_path / "latin1.json")
    with pytest.raises(JudgementsError, match=r"old.json: not a judgements file \(--out of "
                                              r"`ragretrieval judge chunks`\): "
                                              r"field 'format_version': format_version 99 is not supported"):
        Judgements.load(tmp_path / "old.json")
    with pytest.raises(MissingInputError, match=r"missing.json: cannot read"):  # the command must name another
        Judgements.load(tmp_path / "missing.json")


def test_a_judged_and_an_unjudged_run_are_different_runs(tmp_path, llm_dataset):
    from ragretrieval.runs import RunHistory

    out, _ = llm_dataset
    run, store = tmp_path / "run.json", f"sqlite:///{tmp_path / 'runs.sqlite'}"
    invoke("eval", "--dataset", out, "--retriever", "bm25", "--k", "3", "--out", run, "--no-save", "--no-progress")
    with ChatServer(judge_reply) as server:
        invoke("judge", "chunks", "--dataset", out, "--runs", run, "--depth", "2", "--out", tmp_path / "j.json",
               "--base-url", server.url, "--model", "fake-judge", "--no-progress")
    common = ("eval", "--dataset", out, "--retriever", "bm25", "--k", "3,5", "--runs-db", store, "--no-progress")
    invoke(*common, "--name", "plain")
    invoke(*common, "--name", "plain-top-3", "--top-k", "3")  # what is shown changes no number: the same run
    invoke(*common, "--name", "judged", "--judgements", tmp_path / "j.json")
    with RunHistory(store) as history:
        keys = {summary.name: history.get(summary.id).config_key for summary in history.list()}
        fingerprints = {summary.name: history.get(summary.id).report.dataset.labels_fingerprint
                        for summary in history.list()}
    assert keys["plain"] == keys["plain-top-3"] != keys["judged"]
    assert fingerprints["plain"] != fingerprints["judged"]
