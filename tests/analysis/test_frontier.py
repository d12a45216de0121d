"""The quality-against-latency section of the HTML report (analysis/frontier.py)."""

from __future__ import annotations

import pytest
from embedders.test_embedding_cache import CharacterEmbedder  # tests/embedders: a top-level test package

from ragretrieval.analysis.compare import from_report
from ragretrieval.analysis.frontier import Point, cheapest_table, frontier_points, frontier_section
from ragretrieval.analysis.html import render_html
from ragretrieval.data.dataset import load_dataset
from ragretrieval.embedders import EmbeddingCache
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval import DenseRetriever


@pytest.fixture(scope="module")
def runs(demo_dataset, tmp_path_factory):
    cache = EmbeddingCache(tmp_path_factory.mktemp("frontier-cache"))
    dataset = load_dataset(demo_dataset)
    out = []
    for store, options in (("numpy", {}), ("faiss", {"kind": "hnsw", "ef_search": 8}),
                           ("faiss", {"kind": "ivf", "nlist": 16, "nprobe": 1})):
        config = EvalConfig(model="test-characters", store=store, store_options=options, search_concurrency=1)
        retriever = DenseRetriever(CharacterEmbedder(dim=256), cache, store, options, progress=False)
        report = evaluate(dataset, config, progress=False, retriever=retriever)
        out.append(from_report(report, f"{store} {options}", "test"))
    return out


def test_points_reference_and_pareto(runs):
    points, exact = frontier_points(runs, "recall@5", "doc")
    assert len(points) == 3 and points[0].exact and exact == pytest.approx(points[0].quality)
    assert all(p.diff is not None for p in points[1:])  # paired against the exact run
    assert any(p.pareto for p in points)
    fastest = min(points, key=lambda p: p.p95_ms)
    assert fastest.pareto  # nothing is faster, so nothing dominates it


def test_ann_runs_alone_use_their_own_exact_reference(runs):
    points, exact = frontier_points(runs[1:], "recall@5", "doc")
    assert exact == pytest.approx(runs[1].report.exact.exact_means["recall@5"])
    assert all(p.diff is not None for p in points)


def test_the_section_in_the_page(runs):
    page = render_html(runs, metrics=["recall@5"])
    assert "Quality against search latency" in page and '<svg class="frontier"' in page and 'class="exact"' in page
    assert "<script" not in page and "//cdn" not in page
    assert frontier_section(runs[:1], "recall@5", "doc") == ""  # one point: no frontier


def test_cheapest_setting_per_engine():
    points = [Point("exact", "faiss", "kind=flat", 5.0, 0.9, exact=True),
              Point("fast but lossy", "faiss", "ef_search=8", 0.5, 0.7, False, diff=-0.2, p=0.001),
              Point("fast and fine", "faiss", "ef_search=32", 1.0, 0.89, False, diff=-0.01, p=0.4),
              Point("chroma", "chroma", "search_ef=8", 1.0, 0.5, False, diff=-0.4, p=0.0001),
              Point("lance", "lancedb", "-", 1.0, 0.5, False)]
    table = cheapest_table(points, 0.05, "recall@5")
    assert "<td>faiss</td><td>ef_search=32</td>" in table
    assert "every setting is significantly below exact" in table and "no exact reference" in table
