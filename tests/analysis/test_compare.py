"""`compare` and ``ragretrieval compare`` on real BM25 reports, report files and TREC files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.analysis.compare import CompareError, compare, from_report, recompute_doc_metric, report_values
from ragretrieval.cli import main
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig, QuestionResult


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def broken(report):
    """The same questions with nothing retrieved: every metric 0, stored and recomputable."""
    questions = [QuestionResult(id=q.id, text=q.text, relevant=q.relevant, retrieved_chunks=[],
                                retrieved_documents=[],
                                metrics={g: {name: 0.0 for name in values} for g, values in q.metrics.items()})
                 for q in report.questions]
    return report.model_copy(update={"questions": questions})


def test_compare_reports_means_diff_and_counts(reports):
    a, b = reports
    result = compare([from_report(a, "small", "a"), from_report(b, "large", "b")], ["recall@3", "ndcg@10"])
    pair = result.pairs[0]
    for name, m in pair.metrics.items():
        assert m.stats.mean_a == pytest.approx(a.means["doc"][name])
        assert m.stats.mean_b == pytest.approx(b.means["doc"][name])
        assert m.stats.diff == pytest.approx(b.means["doc"][name] - a.means["doc"][name])
        assert m.stats.wins + m.stats.ties + m.stats.losses == len(a.questions) == m.stats.n
    recall = pair.metrics["recall@3"].stats  # q-tang newly passes at k = 3, q-suan newly fails
    assert (recall.wins, recall.losses) == (1, 1)


def test_stored_metrics_recompute_identically(reports):
    for report in reports:
        for name in ("recall@5", "ndcg@10", "mrr@3", "precision@1"):
            stored = [q.metrics["doc"][name] for q in report.questions]
            assert recompute_doc_metric(report, name) == pytest.approx(stored, abs=1e-12)


def test_missing_metric_is_recomputed_or_refused_with_the_list(reports):
    a = reports[0]
    expected = [len(set(q.retrieved_documents[:2]) & set(q.relevant)) / 2 for q in a.questions]
    assert report_values(a, "precision@2", "doc") == pytest.approx(expected)
    with pytest.raises(CompareError, match=r"small: metric precision@2 is not stored at chunk level and cannot be "
                                           r"recomputed \(chunk labels .*\); stored chunk-level metrics: f1@1, f1@10"):
        report_values(a, "precision@2", "chunk", "small")
    with pytest.raises(CompareError, match=r"metric recall@20 .* holds rankings to depth 10 only"):
        report_values(a, "recall@20", "doc")


def test_different_question_sets_are_refused_with_the_ids(reports):
    a, b = reports
    b_fewer = b.model_copy(update={"questions": b.questions[2:]})
    with pytest.raises(CompareError) as error:
        compare([from_report(a, "A", "a"), from_report(b_fewer, "B", "b")], ["recall@3"])
    message = str(error.value)
    assert "runs A (A) and B (B) cover different question sets" in message
    assert f"2 only in A ({', '.join(sorted(q.id for q in a.questions[:2]))})" in message
    assert "0 only in B" in message


def test_cli_table_json_and_three_runs(report_files, tmp_path):
    a, b = report_files
    table = run_cli("runs", "compare", a, b, "-m", "recall@3", "-m", "ndcg@10", "--test", "wilcoxon")
    assert table.exit_code == 0, table.output
    assert "A = small_chunks" in table.output and "Wilcoxon signed-rank test" in table.output
    assert table.output.count("recall@3") == 1

    out = run_cli("runs", "compare", a, b, "-m", "recall@3", "-m", "mrr@5", "--json", "--test", "permutation",
                  "--n-resamples", "2000")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)  # exactly one JSON object on stdout
    assert (data["a"], data["b"], data["test"], data["n_questions"]) == ("small_chunks", "large_chunks",
                                                                         "permutation", 14)
    entry = data["metrics"]["recall@3"]
    assert set(entry) >= {"a", "b", "diff", "ci", "p", "p_corrected", "effect_size", "wins", "ties", "losses"}
    assert entry["diff"] == pytest.approx(entry["b"] - entry["a"]) and len(entry["ci"]) == 2
    assert (entry["wins"], entry["ties"], entry["losses"]) == (1, 12, 1)

    three = run_cli("runs", "compare", a, b, a, "-m", "recall@3", "--json")
    data = json.loads(three.stdout)
    assert data["baseline"] == "small_chunks" and data["runs"] == ["small_chunks", "large_chunks", "small_chunks#2"]
    assert [(p["a"], p["b"]) for p in data["pairs"]] == [("small_chunks", "large_chunks"),
                                                        ("small_chunks", "small_chunks#2")]
    assert data["pairs"][1]["metrics"]["recall@3"]["p"] == 1.0


def test_fail_on_regression_exit_codes(reports, report_files, tmp_path):
    good = report_files[0]
    bad = tmp_path / "broken.json"
    broken(reports[0]).save(bad)
    worse = run_cli("runs", "compare", good, bad, "-m", "recall@5", "--fail-on-regression")
    assert worse.exit_code == 1
    assert "* worse" in worse.stdout
    assert "significantly worse than small_chunks: recall@5 (broken)" in worse.stderr
    assert run_cli("runs", "compare", good, bad, "-m", "recall@5").exit_code == 0  # no flag: report only
    assert run_cli("runs", "compare", bad, good, "-m", "recall@5", "--fail-on-regression").exit_code == 0  # better
    assert run_cli("runs", "compare", *report_files, "-m", "recall@5", "--fail-on-regression").exit_code == 0


def write_trec(report, path, qrels_path=None):
    with open(path, "w", encoding="utf-8") as f:
        for q in report.questions:
            for rank, doc in enumerate(q.retrieved_documents, start=1):
                f.write(f"{q.id} Q0 {doc} {rank} {100 - rank} test\n")
    if qrels_path:
        with open(qrels_path, "w", encoding="utf-8") as f:
            f.writelines(f"{q.id} 0 {doc} 1\n" for q in report.questions for doc in q.relevant)


def test_trec_run_files_with_qrels(reports, tmp_path):
    a, b = reports
    write_trec(a, tmp_path / "a.run", tmp_path / "qrels.txt")
    write_trec(b, tmp_path / "b.run")
    out = run_cli("runs", "compare", tmp_path / "a.run", tmp_path / "b.run", "--qrels", tmp_path / "qrels.txt",
                  "-m", "recall@3", "-m", "ndcg@10", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    for name in ("recall@3", "ndcg@10"):
        assert data["metrics"][name]["a"] == pytest.approx(a.means["doc"][name])
        assert data["metrics"][name]["b"] == pytest.approx(b.means["doc"][name])
    no_qrels = run_cli("runs", "compare", tmp_path / "a.run", tmp_path / "b.run")
    assert no_qrels.exit_code == 2
    assert "a.run: not a JSON report; to compare a TREC run file, give --qrels, the TREC judgements to score it against" in no_qrels.output


def test_bad_inputs_exit_2_with_a_message(report_files, tmp_path):
    missing = run_cli("runs", "compare", report_files[0], tmp_path / "nope.json")
    assert missing.exit_code == 2 and "nope.json' is neither a file nor a run in the history" in missing.output
    (tmp_path / "bad.json").write_text('{"report_version": 1}', encoding="utf-8")
    bad = run_cli("runs", "compare", report_files[0], tmp_path / "bad.json")
    assert bad.exit_code == 2 and "bad.json: not an eval report (--out of `ragretrieval eval`): field 'ragretrieval_version'" in bad.output
    metric = run_cli("runs", "compare", *report_files, "-m", "recal@5")
    assert metric.exit_code == 2 and "unknown metric 'recal'" in metric.output
    one = run_cli("runs", "compare", report_files[0])
    assert one.exit_code == 2 and "at least two runs" in one.output


def test_chunk_granularity_uses_stored_chunk_metrics(reports):
    a, b = reports
    result = compare([from_report(a, "a", "a"), from_report(b, "b", "b")], ["recall@5"], granularity="chunk")
    assert result.pairs[0].metrics["recall@5"].stats.mean_a == pytest.approx(a.means["chunk"]["recall@5"])
    assert np.isfinite(result.pairs[0].metrics["recall@5"].p_corrected)


def test_runs_from_the_history_by_id_and_name(reports, report_files, tmp_path):
    from ragretrieval.runs import RunHistory

    db = tmp_path / "runs.sqlite"
    with RunHistory(str(db)) as history:
        small = history.save(reports[0], name="small")
        history.save(reports[1], name="large")
    out = run_cli("runs", "compare", small, "large", "--runs-db", db, "-m", "recall@3", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert (data["a"], data["b"]) == ("small", "large")
    assert data["metrics"]["recall@3"]["b"] == pytest.approx(reports[1].means["doc"]["recall@3"])
    mixed = run_cli("runs", "compare", small, report_files[1], "--runs-db", db, "-m", "recall@3", "--json")
    assert json.loads(mixed.stdout)["b"] == "large_chunks"  # a history run against a report file
    unknown = run_cli("runs", "compare", small, "nosuchrun", "--runs-db", db)
    assert unknown.exit_code == 2 and "'nosuchrun' is neither a file nor a run in the history: no run" in unknown.output


def test_recomputed_ndcg_uses_the_stored_grades(dataset):
    """nDCG uses raw grades: a recompute that treated every relevant document as grade 1 would differ here."""
    graded = [q.model_copy(update={"relevant": [r.model_copy(update={"grade": 1 + 2 * i}) for i, r in enumerate(q.relevant)]})
              for q in dataset.questions]
    graded_dataset = type(dataset)(dataset.path, dataset.documents, tuple(graded), dataset.manifest)
    report = evaluate(graded_dataset, EvalConfig(retriever="bm25", model=None, chunk_size=40, chunk_overlap=10,
                                                 ks=[1, 3, 10], top_k=3), progress=False)
    donggua = next(q for q in report.questions if q.id == "q-donggua")
    assert donggua.relevant_grades == {"soup/冬瓜排骨汤.md": 1, "meat_dish/红烧排骨.md": 3}
    stored = np.array([q.metrics["doc"]["ndcg@10"] for q in report.questions])
    np.testing.assert_allclose(recompute_doc_metric(report, "ndcg@10"), stored, atol=1e-12)
    ungraded = report.model_copy(update={"questions": [q.model_copy(update={"relevant_grades": {}})
                                                       for q in report.questions]})
    with pytest.raises(CompareError, match="without their grades"):
        report_values(ungraded, "ndcg@7", "doc", "old")
