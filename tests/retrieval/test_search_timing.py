"""The per-question search timing pass and the distance from exact search (retrieval/search_timing.py, exact.py),
run through `evaluate` with the dense retriever and the test embedder of tests/embedders."""

from __future__ import annotations

import numpy as np
import pytest
from embedders.test_embedding_cache import evaluate_through as run

from ragretrieval.analysis.settings import PAIRED
from ragretrieval.analysis.stats import paired_stats
from ragretrieval.data.dataset import load_dataset
from ragretrieval.embedders import EmbeddingCache
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig, EvalReport
from ragretrieval.retrieval.exact import overlap_at, paired_sentence, paired_test
from ragretrieval.retrieval.search_timing import RETRIEVER_SCOPE, STORE_SCOPE, percentiles, sample_positions
from ragretrieval.runs.identity import config_key
from ragretrieval.work.options import SettingsError


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return EmbeddingCache(tmp_path_factory.mktemp("timing-cache"))


def test_hnsw_reports_latency_qps_and_exact_overlap(demo_dataset, cache):
    report = run(demo_dataset, cache, "faiss", kind="hnsw", ef_search=16)
    search = report.search
    assert search.scope == STORE_SCOPE and search.sampled == report.dataset.n_questions
    assert 0 < search.search_latency_ms.p50 <= search.search_latency_ms.p95 <= search.search_latency_ms.p99
    assert search.search_qps > 0 and search.concurrency == 4 and search.concurrent_qps > 0
    assert search.index_build_seconds is not None and search.index_memory_bytes > 0
    assert set(report.exact.overlap) == {f"exact_overlap@{k}" for k in report.config.ks}
    assert all(0.0 <= v <= 1.0 for q in report.questions for v in q.exact_overlap.values())
    assert report.exact.test.metric == "recall@5" and "recall@5" in report.exact.test.sentence
    text = str(report)
    assert "search_latency_ms" in text and "search_qps" in text and "exact_overlap@10" in text
    assert EvalReport.model_validate_json(report.model_dump_json()).search == search  # it survives a save


def test_flat_faiss_is_exact_by_construction(demo_dataset, cache):
    report = run(demo_dataset, cache, "faiss")
    assert report.exact.exact_store and report.exact.test is None and report.search.scope == STORE_SCOPE
    assert set(report.exact.overlap.values()) == {1.0}
    assert all(q.exact_overlap == {f"exact_overlap@{k}": 1.0 for k in report.config.ks} for q in report.questions)
    assert "(the store searches exactly)" in str(report)


def test_an_ann_setting_that_finds_everything_measures_1(demo_dataset, cache):
    """A 104-vector HNSW graph searched with ef 512 finds the exact top-k: the measured overlap, not an assumed one,
    is 1.0 (ties with the k-th count as found), and the paired test finds no difference."""
    report = run(demo_dataset, cache, "faiss", kind="hnsw", ef_search=512)
    assert not report.exact.exact_store and set(report.exact.overlap.values()) == {1.0}
    assert report.exact.test.diff == 0.0 and report.exact.test.sentence.startswith("no significant difference")


def test_timing_changes_neither_identity_nor_metrics(demo_dataset, cache):
    one = run(demo_dataset, cache, "numpy", search_concurrency=1)
    many = run(demo_dataset, cache, "numpy", search_concurrency=8)
    assert one.means == many.means
    assert one.search.concurrent_qps is None and many.search.concurrency == 8
    assert config_key(one.config, "c", "q", "l") == config_key(many.config, "c", "q", "l")
    assert config_key(one.config, "c", "q", "l") == config_key(EvalConfig(model="test-characters", store="numpy"),
                                                               "c", "q", "l")


def test_bm25_times_its_own_call(demo_dataset):
    report = evaluate(load_dataset(demo_dataset), EvalConfig(retriever="bm25", search_concurrency=2), progress=False)
    assert report.search.scope == RETRIEVER_SCOPE and report.search.search_qps > 0 and report.exact is None


@pytest.mark.parametrize("bad", [0, -1, "two", 257, True])
def test_search_concurrency_is_bounded(bad):
    with pytest.raises(SettingsError) as error:
        EvalConfig(search_concurrency=bad)
    assert error.value.field == "search_concurrency"


def test_ties_with_the_exact_kth_count_as_found():
    chunks = np.array([[1.0, 0.0], [0.6, 0.8], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    query = np.array([[1.0, 0.0]], dtype=np.float32)
    exact_scores = np.array([[1.0, 0.6, 0.6, 0.0]], dtype=np.float32)  # exact lists chunk 1 second
    assert overlap_at(2, np.array([[0, 2]]), query, chunks, exact_scores).tolist() == [1.0]  # 2 is tied with 1
    assert overlap_at(2, np.array([[0, 3]]), query, chunks, exact_scores).tolist() == [0.5]
    assert overlap_at(2, np.array([[0, -1]]), query, chunks, exact_scores).tolist() == [0.5]  # a short answer
    assert overlap_at(10, np.array([[0, 1, 2, 3]]), query, chunks, exact_scores).tolist() == [1.0]  # k > chunks


def test_sample_and_percentiles():
    assert sample_positions(5).tolist() == list(range(5))
    picked = sample_positions(5000, 1000)
    assert len(picked) == 1000 and len(set(picked.tolist())) == 1000
    assert (picked == sample_positions(5000, 1000)).all()  # the same questions every run
    ms = percentiles([0.001] * 99 + [0.1])
    assert ms.p50 == 1.0 and ms.p99 > ms.p50


def test_the_paired_test_is_runs_compares_t_test():
    rng = np.random.default_rng(3)
    exact = rng.integers(0, 2, 50).astype(float)
    ann = np.where(rng.random(50) < 0.2, 0.0, exact)
    reference = paired_stats(exact, ann, test="t")
    ours = paired_test("recall@5", "doc", ann, exact)
    assert ours.p == pytest.approx(reference.p) and ours.diff == pytest.approx(reference.diff)
    assert paired_test("recall@5", "doc", exact, exact).p == 1.0
    assert paired_test("recall@5", "doc", exact[:1], exact[:1]).p is None


def test_paired_sentence():
    assert paired_sentence("recall@5", -0.012, 0.003) == ("this setting loses relevant documents: recall@5 -0.012, "
                                                          "p = 0.003")
    assert paired_sentence("recall@5", 0.0, 1.0).startswith("no significant difference")


def test_the_sentence_is_worded_at_compares_default_level():
    """The level is `runs compare`'s default alpha (work/significance.py declares it for both)."""
    assert paired_sentence("recall@5", -0.01, PAIRED.alpha * 0.99).startswith("this setting loses")
    assert paired_sentence("recall@5", 0.01, PAIRED.alpha * 0.99).startswith("this setting finds more")
    assert paired_sentence("recall@5", -0.01, PAIRED.alpha).startswith("no significant difference")


@pytest.mark.engine
@pytest.mark.parametrize("store, options, exact", [("qdrant", {}, True), ("chroma", {"search_ef": 16}, False),
                                                   ("lancedb", {}, True), ("milvus", {"index": "HNSW", "ef": 16},
                                                                           False)])
def test_engine_stores_are_timed_from_threads_and_tell_their_disk(demo_dataset, cache, store, options, exact):
    """The concurrent pass searches an engine from several threads at once; an embedded engine's data folder is its
    size on disk."""
    pytest.importorskip(f"ragretrieval_{store}")
    report = run(demo_dataset, cache, store, search_concurrency=3, **options)
    assert report.search.concurrent_qps > 0 and report.search.index_disk_bytes > 0
    assert report.search.index_memory_bytes is None  # engines do not tell
    assert report.exact.exact_store is exact and 0 < report.exact.overlap["exact_overlap@10"] <= 1.0
