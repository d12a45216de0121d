"""`eval` stores runs; `runs list | show | rm | export | tag | rename` on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.runs.export import read_json
from ragretrieval.scoring.trec import read_run


def run_cli(*args, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def test_eval_stores_the_run_and_prints_its_id(dataset_dir, history_url):
    out = run_cli("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--no-progress", "--runs-db", history_url,
                  "--name", "lexical", "--tag", "baseline", "--tag", "bm25")
    run_id = re.search(r"run (r-\d{8}-\d{6}-[0-9a-f]{4}) saved to ", out).group(1)
    with RunHistory(history_url) as history:
        stored = history.get(run_id)
    assert (stored.name, stored.tags) == ("lexical", ["baseline", "bm25"])
    assert stored.report.config.retriever == "bm25"
    run_cli("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--no-progress", "--runs-db", history_url,
            "--no-save")
    with RunHistory(history_url) as history:
        assert [r.id for r in history.list()] == [run_id]


def test_eval_refuses_a_bad_history_url_before_evaluating(dataset_dir):
    out = run_cli("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--runs-db", "nosuchdb://x", code=1)
    assert "nosuchdb" in out and "loaded" not in out


def test_list_show_tag_rename_rm(history, history_url, bm25_reports):
    first = history.save(bm25_reports[0], name="small chunks")
    second = history.save(bm25_reports[1])
    listed = run_cli("runs", "list", "--runs-db", history_url, "-m", "recall@5", "-m", "chunk:ndcg@10")
    lines = listed.splitlines()
    assert lines[0].split()[-3:] == ["recall@5", "chunk:ndcg@10", "time"]
    assert lines[2].startswith(first) and "small chunks" in lines[2] and "300/50" in lines[2]
    assert f"{bm25_reports[0].means['chunk']['ndcg@10']:.4f}" in lines[2]
    assert lines[3].startswith(second) and "500/50" in lines[3]

    assert run_cli("runs", "tag", "--runs-db", history_url, "small chunks", "good", "bm25") \
        == f"{first}: bm25, good\n"
    assert run_cli("runs", "rename", "--runs-db", history_url, first, "renamed") == f"{first}: renamed\n"
    assert [json.loads(line)["id"] for line in
            run_cli("runs", "list", "--runs-db", history_url, "--tag", "good", "--json").splitlines()] == [first]

    shown = run_cli("runs", "show", "--runs-db", history_url, "renamed", "-v")
    assert shown.startswith(f"run       {first}  (renamed)\ntags      bm25, good\n")
    assert f"{bm25_reports[0].dataset.corpus_fingerprint}" in shown
    assert "document level (" in shown and f"[1/{len(bm25_reports[0].questions)}]" in shown

    assert run_cli("runs", "rm", "--runs-db", history_url, first) == f"removed {first}\n"
    assert "no run 'renamed'" in run_cli("runs", "show", "--runs-db", history_url, "renamed", code=2)
    assert run_cli("runs", "list", "--runs-db", history_url, "--json").count("\n") == 1


def test_export_trec_reproduces_the_stored_rankings(history, history_url, bm25_reports, tmp_path):
    report = bm25_reports[0]
    run_id = history.save(report)
    run_cli("runs", "export", "--runs-db", history_url, run_id, "--format", "trec", "--granularity", "both",
            "--out", tmp_path / "run.trec")
    first_question = report.questions[0]
    doc_lines = (tmp_path / "run.doc.trec").read_text(encoding="utf-8").splitlines()
    assert doc_lines[0].split() == [first_question.id, "Q0", first_question.retrieved_documents[0], "1",
                                    str(len(first_question.retrieved_documents)), run_id]
    for level, path in (("doc", "run.doc.trec"), ("chunk", "run.chunk.trec")):
        run = read_run(tmp_path / path)
        assert run.query_ids.tolist() == [q.id for q in report.questions]
        for i, question in enumerate(report.questions):
            expected = question.retrieved_documents if level == "doc" else \
                [c.chunk_id for c in question.retrieved_chunks]
            assert [run.doc_ids[c] for c in run.codes[i] if c >= 0] == expected
    printed = run_cli("runs", "export", "--runs-db", history_url, run_id, "--format", "trec")
    assert printed == (tmp_path / "run.doc.trec").read_text(encoding="utf-8")


def test_export_json_round_trips(history, history_url, bm25_reports, tmp_path):
    run_id = history.save(bm25_reports[1], name="json", tags=["x"])
    run_cli("runs", "export", "--runs-db", history_url, run_id, "--format", "json", "--out", tmp_path / "run.json")
    exported = read_json(tmp_path / "run.json")
    assert exported == history.get(run_id)
    assert json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))["format_version"] == 1
    printed = run_cli("runs", "export", "--runs-db", history_url, run_id[:-2], "--format", "json")
    assert json.loads(printed)["report"]["config"]["chunk_size"] == 500


def test_export_both_levels_needs_a_file(history, history_url, bm25_reports):
    run_id = history.save(bm25_reports[0])
    out = run_cli("runs", "export", "--runs-db", history_url, run_id, "--format", "trec", "--level", "both", code=2)
    assert "--granularity both writes two files: give --out" in out


@pytest.mark.model
def test_runs_list_shows_a_reranked_run_apart_from_its_first_stage(dataset_dir, history_url):
    """A reranked run and the run of its first stage alone differ in their numbers, so `runs list` must not show
    them alike: the retriever column names the reranking stage, and the JSON lines carry it as `rerank`."""
    common = ("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--no-progress", "--granularity", "doc",
              "--runs-db", history_url)
    run_cli(*common, "--name", "plain")
    run_cli(*common, "--name", "reranked", "--rerank", "embed:e5-small-q4", "--rerank-depth", "5")
    table = run_cli("runs", "list", "--runs-db", history_url).splitlines()
    cells = {line.split()[1]: line for line in table[2:]}
    assert " bm25 > embed:e5-small-q4 " in cells["reranked"] and " bm25 " in cells["plain"]
    assert ">" not in cells["plain"]
    rows = [json.loads(line) for line in run_cli("runs", "list", "--runs-db", history_url, "--json").splitlines()]
    assert [(r["name"], r["retriever"], r["rerank"]) for r in rows] == [
        ("plain", "bm25", None), ("reranked", "bm25", "embed:e5-small-q4")]
