"""The BM25 baseline and the `eval` command on the demo corpus: per-question lines, summary table, report JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.chunking import Chunk
from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.report import EvalReport
from ragretrieval.retrieval import BM25Retriever, tokenize

QUESTION_LINE = re.compile(r"^\[(\d+)/30\] (如何做.+？)\.\.\. Recall=(\d\.\d\d), Precision=(\d\.\d\d), MRR=(\d\.\d\d)$")


def test_tokenizer_chinese_unigrams_and_bigrams_other_text_by_words():
    assert tokenize("宫保鸡丁") == ["宫", "保", "鸡", "丁", "宫保", "保鸡", "鸡丁"]
    assert tokenize("红烧肉 Braised Pork-2份，加Coca-Cola！") == [
        "红", "烧", "肉", "红烧", "烧肉", "braised", "pork", "2", "份", "加", "coca", "cola"]
    assert tokenize("。！？ ，") == []


def test_bm25_ranks_the_chunk_that_shares_the_most_terms_first():
    texts = ["红烧肉要先焯水", "红烧排骨用小排", "西红柿炒鸡蛋", "清蒸鲈鱼"]
    chunks = [Chunk(f"d{i}.md#0", f"d{i}.md", 0, len(t), (), t) for i, t in enumerate(texts)]
    retriever = BM25Retriever()
    retriever.index(chunks)
    result = retriever.search(["如何做红烧排骨？", "鸡蛋"], depth=6)
    assert result.positions[0, :2].tolist() == [1, 0]
    assert result.positions[1, 0] == 2
    assert result.positions.shape == (2, 6) and result.positions[:, 4:].tolist() == [[-1, -1], [-1, -1]]
    assert result.scores[0, 0] > result.scores[0, 1] > 0


@pytest.fixture(scope="module")
def bm25_run(demo_dataset, tmp_path_factory):
    report_path = tmp_path_factory.mktemp("bm25-report") / "report.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25", "--top-k", "5",
                                       "-v", "--no-progress", "--no-save", "--out", str(report_path)])
    assert result.exit_code == 0, result.output
    return result, report_path


def test_verbose_prints_one_line_per_question(bm25_run):
    result, _ = bm25_run
    lines = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == 30
    assert [int(QUESTION_LINE.match(line).group(1)) for line in lines] == list(range(1, 31))
    assert lines[0] == "[1/30] 如何做油焖大虾？... Recall=1.00, Precision=0.20, MRR=1.00"
    shared = next(line for line in lines if "紫菜蛋花汤" in line)  # two relevant documents, both found in the top 5
    assert shared.endswith("... Recall=1.00, Precision=0.40, MRR=1.00")


def test_summary_table_has_a_row_per_k_for_each_granularity(bm25_run):
    out = bm25_run[0].stdout.splitlines()
    header = "     k      Recall@k   Precision@k         MRR@k    Hit Rate@k          F1@k        nDCG@k"
    for title in ("document level (30 questions, 31 documents, 104 chunks)",
                  "chunk level (30 questions, 31 documents, 104 chunks)"):
        at = out.index(title)
        assert out[at + 1] == header
        assert [row.split()[0] for row in out[at + 2:at + 6]] == ["1", "3", "5", "10"]
    doc_rows = {row.split()[0]: row.split()[1:] for row in out[out.index(header) + 1:out.index(header) + 5]}
    assert doc_rows["5"][0] == "1.0000"  # Recall@5: every recipe is found by its name
    assert "retriever: bm25; chunks: size 300, overlap 50" in out
    timing = next(line for line in out if line.startswith("time: "))
    assert timing.endswith("; texts embedded: 0")
    assert "loaded 30 questions over 31 documents" in bm25_run[0].stderr


def test_report_json_validates_and_holds_config_fingerprint_ids_and_means(bm25_run, demo_dataset):
    _, path = bm25_run
    report = EvalReport.model_validate_json(path.read_text(encoding="utf-8"))
    dataset = load_dataset(demo_dataset)
    assert report.report_version == 1
    assert report.config.retriever == "bm25" and report.config.model is None
    assert report.config.ks == [1, 3, 5, 10] and report.config.top_k == 5
    assert (report.config.chunk_size, report.config.chunk_overlap, report.config.granularity) == (300, 50, "both")
    assert report.dataset.corpus_fingerprint == dataset.fingerprint
    assert (report.dataset.n_documents, report.dataset.n_questions, report.dataset.n_chunks) == (31, 30, 104)
    assert report.embedder_identity is None and report.embedded_texts == 0
    assert [q.id for q in report.questions] == [q.id for q in dataset.questions]
    first = report.questions[0]
    assert first.relevant == ["aquatic/油焖大虾.md"]
    assert len(first.retrieved_chunks) == 10 and first.retrieved_chunks[0].parent_id == "aquatic/油焖大虾.md"
    assert first.retrieved_chunks[0].chunk_id.startswith("aquatic/油焖大虾.md#")
    assert first.retrieved_documents[0] == "aquatic/油焖大虾.md" and len(set(first.retrieved_documents)) == 10
    for granularity in ("doc", "chunk"):
        for metric in ("recall@5", "precision@5", "mrr@5", "hit_rate@5", "f1@5", "ndcg@5"):
            mean = sum(q.metrics[granularity][metric] for q in report.questions) / 30
            assert report.means[granularity][metric] == pytest.approx(mean, abs=1e-12)
    assert report.means["doc"]["recall@5"] == 1.0
    assert report.notes[0].startswith("document level: each document is ranked at its best-ranked chunk")
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert "如何做油焖大虾？" in path.read_text(encoding="utf-8")  # written as UTF-8, not \\u escapes
    assert set(raw) >= {"report_version", "config", "dataset", "means", "questions", "timings"}


def test_granularity_and_k_options(demo_dataset):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25", "--k", "2,4",
                                       "--granularity", "doc", "--no-progress", "--no-save"])
    assert result.exit_code == 0, result.output
    assert "chunk level" not in result.stdout
    rows = [line.split()[0] for line in result.stdout.splitlines() if re.match(r"^\s+\d+\s+\d\.\d{4}", line)]
    assert rows == ["2", "4"]


@pytest.mark.parametrize("args, message", [
    (["--k", "0,5"], "Error: --k: every k must be a positive integer; got [0, 5]"),
    (["--k", "1,x"], "Error: --k: expected comma-separated positive integers, got '1,x'"),
    (["--chunk-size", "100", "--chunk-overlap", "100"],
     "Error: --chunk-overlap must be smaller than --chunk-size (100); got 100"),
    (["--chunk-size", "0"], "Error: --chunk-size: Input should be greater than or equal to 1"),
])
def test_bad_eval_options_are_clear_errors(demo_dataset, args, message):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25", "--no-save",
                                       *args])
    assert result.exit_code != 0
    assert message in result.stderr


def test_eval_on_a_folder_that_is_not_a_dataset(tmp_path):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(tmp_path), "--retriever", "bm25", "--no-save"])
    assert result.exit_code == 2  # input the user must change
    assert result.stderr == (f"Error: {tmp_path}: not a dataset folder (manifest.json not found); "
                             "build one with `ragretrieval dataset build`\n")


NO_TORCH = """
import sys
from ragretrieval.cli import main
try:
    main(["eval", "--dataset", sys.argv[1], "--retriever", "bm25", "--no-progress", "--no-save"])
except SystemExit as done:
    assert done.code in (0, None), done.code
print("torch imported:", "torch" in sys.modules, "sentence_transformers imported:", "sentence_transformers" in sys.modules)
"""


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_bm25_eval_does_not_import_torch(demo_dataset):
    run = subprocess.run([sys.executable, "-c", NO_TORCH, str(demo_dataset)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "torch imported: False sentence_transformers imported: False"
