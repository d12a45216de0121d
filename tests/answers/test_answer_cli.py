"""``ragretrieval answer`` on the demo dataset, offline (extractive, BM25): the table, the stored run, ``runs``,
``compare`` and ``report`` on answer runs, and the retrieval metrics of the same ranking that ``eval`` gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.runs import RunHistory


def run(*args, code=0):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def history_url(tmp_path):
    return str(tmp_path / "runs.sqlite")


def test_answer_runs_offline_and_is_stored(demo_dataset, history_url, tmp_path):
    result = run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--retriever", "bm25",
                 "--runs-db", history_url, "--name", "floor", "--tag", "demo", "--out", tmp_path / "a.json", "-v",
                 "--no-progress")
    out = result.stdout
    assert "[1/30] 如何做" in out and "score=" in out
    assert "answers (30 of 30 answered)\n  metric" in out and "95% CI" in out and "cite_f1" in out
    assert "retrieval, document level" in out and "recall@5" in out
    report = AnswerReport.load(tmp_path / "a.json")
    assert report.kind == "answer" and len(report.questions) == 30 and report.failed == 0
    first = report.questions[0]
    assert first.answer and first.contexts and first.contexts[0].chunk_id and first.citations
    assert len(first.contexts) == 5 and first.retrieved_documents and first.metrics["doc"]["recall@5"] in (0, 1)
    assert report.config.retrieval.retriever == "bm25" and report.config.context_k == 5
    listed = run("runs", "list", "--runs-db", history_url).stdout.splitlines()
    assert "generator" in listed[0] and "answer:score" in listed[0]
    assert "floor" in listed[2] and "extractive" in listed[2]
    with RunHistory(history_url) as history:
        stored = history.get("floor")
    assert stored.kind == "answer" and stored.report == report and stored.tags == ["demo"]
    shown = run("runs", "show", "--runs-db", history_url, "floor", "-v").stdout
    assert "[30/30]" in shown and "answers (30 of 30 answered)\n" in shown
    exported = json.loads(run("runs", "export", "--runs-db", history_url, "floor", "--format", "json").stdout)
    assert exported["report"]["kind"] == "answer"


def test_retrieval_metrics_match_eval_on_the_same_ranking(demo_dataset, tmp_path):
    run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--retriever", "bm25", "--chunk-size",
        200, "--no-save", "--out", tmp_path / "a.json", "--no-progress")
    run("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--chunk-size", 200, "--no-save",
        "--out", tmp_path / "e.json", "--no-progress")
    answered = AnswerReport.load(tmp_path / "a.json")
    evaluated = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    for level in ("doc", "chunk"):
        for name, value in evaluated["means"][level].items():
            assert answered.means[level][name] == pytest.approx(value), (level, name)
    assert [q.retrieved_documents for q in answered.questions] == \
        [q["retrieved_documents"] for q in evaluated["questions"]]


def test_compare_and_report_pair_two_answer_runs(demo_dataset, history_url, tmp_path):
    for name, sentences in (("two", 2), ("one", 1)):
        run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--generator-option",
            f"sentences={sentences}", "--retriever", "bm25", "--context-k", 3, "--runs-db", history_url, "--name",
            name, "--no-progress")
    compared = run("runs", "compare", "two", "one", "--runs-db", history_url).stdout
    assert "30 questions paired, answer level" in compared and "cite_f1" in compared and "score" in compared
    as_json = json.loads(run("runs", "compare", "two", "one", "--runs-db", history_url, "--json", "-m", "score",
                             "-m", "cite_precision").stdout)
    assert set(as_json["metrics"]) == {"score", "cite_precision"} and as_json["granularity"] == "answer"
    retrieval = json.loads(run("runs", "compare", "two", "one", "--runs-db", history_url, "--json", "--granularity", "doc",
                               "-m", "recall@3").stdout)
    assert retrieval["metrics"]["recall@3"]["diff"] == 0  # same retriever, same ranking
    run("runs", "report", "two", "one", "--runs-db", history_url, "--html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count('class="card"') == 30 and 'id="comparison"' in page and "<script" not in page
    assert "cited: [0]" in page and "✓ cite_f1" in page


def test_a_retrieval_run_and_an_answer_run_compare_on_a_shared_metric(demo_dataset, history_url):
    run("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--runs-db", history_url, "--name", "e",
        "--no-progress")
    run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--retriever", "bm25", "--runs-db",
        history_url, "--name", "a", "--no-progress")
    shared = json.loads(run("runs", "compare", "e", "a", "--runs-db", history_url, "-m", "mrr@10", "--json").stdout)
    assert shared["metrics"]["mrr@10"]["diff"] == 0
    missing = run("runs", "compare", "e", "a", "--runs-db", history_url, "--granularity", "answer", "-m", "score", code=2)
    assert "score" in missing.output
    mixed = run("runs", "report", "e", "a", "--runs-db", history_url, "--html", "x.html", code=2)
    assert "runs of one kind" in mixed.output


def test_bad_settings_fail_with_one_line(demo_dataset, tmp_path):
    unknown = run("answer", "--dataset", demo_dataset, "--generator", "gpt", "--no-save", code=2)
    assert "Error: --generator: unknown generator 'gpt'; known: extractive, file:..., http:..., openai:..." in \
        unknown.output
    given = run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--contexts", "given",
                "--no-save", code=1)
    assert "lists no 'context' documents, which contexts given shows" in given.output
    option = run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--generator-option", "x=1",
                 "--retriever", "bm25", "--no-save", code=2)
    assert "generator extractive: --generator-option x: unknown option (known: sentences)" in option.output
    pattern = run("answer", "--dataset", demo_dataset, "--generator", "extractive", "--citation-pattern", "(",
                  "--retriever", "bm25", "--no-save", code=2)
    assert "--citation-pattern is not a regular expression" in pattern.output
    missing = run("answer", "--dataset", demo_dataset, "--generator", f"file:{tmp_path / 'none.jsonl'}",
                  "--no-save", code=2)
    assert "none.jsonl: cannot read the answers file" in missing.output



def test_the_documented_demo_question_set(demo_dataset, tmp_path):
    """docs/answers/generate.md's worked example: five hand-written questions about the demo corpus, one unanswerable."""
    questions = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"
    result = run("answer", "--dataset", demo_dataset, "--questions", questions, "--generator", "extractive",
                 "--retriever", "bm25", "--no-save", "--out", tmp_path / "a.json", "-v", "--no-progress")
    report = AnswerReport.load(tmp_path / "a.json")
    assert len(report.questions) == 5 and set(report.by_type) == {"FACTUAL", "USER_DEFINED"}
    assert report.questions[0].ground_truth.startswith("大火蒸 8 分钟")
    assert report.means["answer"]["refuse"] == 0.0  # the extractive floor never refuses
    assert report.counts["doc"]["recall@5"] == 4  # the unanswerable question has no relevant document
    assert "note: 1 question(s) without relevant documents have no retrieval metrics" in result.output
