"""Hybrid retrieval: the fusion formulas on lists we can check by hand, the hybrid retriever's conformance, its parts
recorded in the run, and hybrid cells in sweeps (one per dense model) that resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.retrieval import Hit, Ranking, RetrieverSpec
from ragretrieval.retrieval.fusion import FusionError, fuse
from ragretrieval.retrieval.fusion.normalize import min_max
from ragretrieval.retrieval.hybrid import HybridRetriever
from ragretrieval.testing.retriever_conformance import RetrieverConformance


def ranking(*rows):
    """Rows of (position, score) pairs, best first; shorter rows padded."""
    depth = max(len(r) for r in rows)
    positions = np.full((len(rows), depth), -1, np.int64)
    scores = np.full((len(rows), depth), -np.inf, np.float32)
    for i, row in enumerate(rows):
        for j, (p, s) in enumerate(row):
            positions[i, j], scores[i, j] = p, s
    return Ranking(positions, scores)


def test_rrf_adds_reciprocal_ranks():
    bm25 = ranking([(7, 12.0), (3, 9.0), (5, 1.0)])
    dense = ranking([(3, 0.9), (8, 0.8)])
    fused = fuse([bm25, dense], depth=4, method="rrf", rrf_k=60)
    assert fused.positions.tolist() == [[3, 7, 8, 5]]
    expected = [1 / 62 + 1 / 61, 1 / 61, 1 / 62, 1 / 63]
    assert np.allclose(fused.scores[0], expected)


def test_rrf_ties_go_to_the_best_rank_then_the_first_list():
    fused = fuse([ranking([(1, 5.0), (2, 4.0)]), ranking([(2, 0.9), (1, 0.8)])], depth=2)
    assert fused.positions.tolist() == [[1, 2]]  # equal scores; 1 was first in the first list


def test_weighted_sum_of_min_max_normalised_scores():
    bm25 = ranking([(7, 12.0), (3, 9.0), (5, 0.0)])
    dense = ranking([(3, 0.9), (8, 0.7), (7, 0.5)])
    fused = fuse([bm25, dense], depth=5, method="weighted", alpha=0.25)
    scores = dict(zip(fused.positions[0].tolist(), fused.scores[0].tolist()))
    assert scores[7] == pytest.approx(0.75 * 1.0 + 0.25 * 0.0)
    assert scores[3] == pytest.approx(0.75 * 0.75 + 0.25 * 1.0)
    assert scores[8] == pytest.approx(0.25 * 0.5)
    assert scores[5] == pytest.approx(0.0)
    assert fused.positions[0].tolist()[:2] == [3, 7]


def test_min_max_edges():
    assert min_max(np.array([2.0, 2.0])).tolist() == [1.0, 1.0]
    assert min_max(np.array([3.0, 1.0, -np.inf])).tolist() == [1.0, 0.0, 0.0]
    assert min_max(np.array([])).tolist() == []


def test_fusion_refuses_what_it_cannot_do():
    with pytest.raises(FusionError, match="unknown fusion 'max'"):
        fuse([ranking([(1, 1.0)])], 1, method="max")
    with pytest.raises(FusionError, match="alpha .* within \\[0, 1\\]"):
        fuse([ranking([(1, 1.0)]), ranking([(1, 1.0)])], 1, method="weighted", alpha=2)
    outside = Ranking(np.array([[5]]), np.array([[1.0]], np.float32), (Hit(chunk_id="x"),))
    with pytest.raises(FusionError, match="not an outside service's hits"):
        fuse([outside, ranking([(1, 1.0)])], 1)


def hybrid_spec(**options):
    options = {"model": "hashing-256", "store": "numpy", "store_options": {}, **options}
    return RetrieverSpec(name="hybrid", options=options, children=HybridRetriever.children(options))


class TestHybridRRF(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return hybrid_spec()


class TestHybridWeighted(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return hybrid_spec(fusion="weighted", alpha=0.7, k1=1.2)


def test_hybrid_eval_records_its_parts_and_fusion(demo_dataset, tmp_path):
    out = tmp_path / "hybrid.json"
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "hybrid", "--model",
                                       "hashing-256", "--fusion", "weighted", "--alpha", "0.3", "--no-save",
                                       "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    spec = report["retriever"]["spec"]
    assert [c["name"] for c in spec["children"]] == ["bm25", "dense"]
    assert spec["children"][1]["options"]["model"] == "hashing-256"
    details = report["retriever"]["details"]
    assert details["fusion"] == "weighted" and details["alpha"] == 0.3
    assert set(details["parts"]) == {"bm25", "dense(hashing-256)"}
    assert report["config"]["retriever_options"] == {"fusion": "weighted", "alpha": 0.3}
    assert "fusion" in report["timings"] and report["embedder_identity"].startswith("hashing:")
    assert report["means"]["doc"]["recall@5"] > 0.5 and "chunk" in report["means"]


def test_fusion_options_belong_to_the_hybrid_retriever(demo_dataset):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "bm25", "--rrf-k",
                                       "10", "--no-save"])
    assert result.exit_code == 2 and "retriever bm25: --rrf-k: unknown option (known: k1, b)" in result.output


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_a_sweep_has_one_hybrid_per_model_and_resumes(demo_dataset, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    args = ["sweep", "--dataset", str(demo_dataset), "--model", "hashing-64", "--model", "hashing-128",
            "--retriever", "dense", "--retriever", "bm25", "--retriever", "hybrid", "--store", "numpy",
            "--rrf-k", "30", "--runs-db", url, "--no-progress"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    title = next(line for line in first.stdout.splitlines() if line.startswith("sweep "))
    assert "5 cells" in title and "ran 5, 0 finished earlier" in title
    rows = [line.split() for line in first.stdout.splitlines() if line[:3].strip().isdigit()]
    assert sorted((r[2], r[3]) for r in rows) == [("bm25", "-"), ("dense", "hashing-128"), ("dense", "hashing-64"),
                                                  ("hybrid", "hashing-128"), ("hybrid", "hashing-64")]
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "ran 0, 5 finished earlier" in again.stdout
