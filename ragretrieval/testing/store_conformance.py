"""The conformance suite every vector store runs: subclass `StoreConformance`, write fixtures, inherit the tests.

An adapter proves it behaves like the built-in stores by running these tests against its real engine::

    import pytest
    from ragretrieval.testing.store_conformance import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store_name(self):
            return "my-store"

        @pytest.fixture
        def store_options(self, tmp_path):
            return {"path": str(tmp_path / "engine")}

Fixtures a subclass gives or overrides:

- ``store_name`` (required): the name `make_store` knows the store by.
- ``store_options``: keyword options for `make_store` (default none).
- ``min_recall``: for approximate stores, the least recall@10 against exact search they must reach (default 0.9).
- ``exact_on_demo``: whether the store must rank the demo dataset exactly like the NumPy store (default: the store's
  ``exact``); an approximate store tuned to be exact at that size (Chroma with a high search ef) sets it.
- ``demo_corpus``: the Markdown folder of the end-to-end test (default ``datasets/demo/dishes`` of the source tree).

A class attribute, ``shared_refusals_checked_elsewhere``, skips the cases marked "shared refusal" below: their
refusals come from `stores/base.py` and `stores/persist.py` (shapes, records, ids, k, ``store.json``, another store's
index) before the engine is asked, the same code for every store. The in-process stores run them, and so does one
class per engine base (`EngineStore`: the LanceDB adapter's first class); a second mode of the same engine, or
another engine on `EngineStore`, sets it to spend its time on what the engine does.

Most tests use random unit vectors. The end-to-end test builds the demo dataset and embeds it with the default
model once per test session (an embedding cache in a temporary folder shared by every store), then checks that
`evaluate` gives the same metrics (to 1e-9) and the same rankings (up to score ties) as the exact NumPy store.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from ..stores import StoreError, VectorStore, make_store
from ..stores.numpy_store import top_k
from ..stores.persist import load_index, save_index
from ..work.environment import environment
from ..work.progress import RecordingProgress

DIM = 24
TOLERANCE = 1e-9  # metrics
SCORE_TOLERANCE = 1e-5  # float32 inner products summed in another order
_SESSION: dict = {}  # the demo dataset, embedding cache and reference report, built once per test session


def unit_vectors(n: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def records_for(positions) -> tuple[list[str], list[str], list[str]]:
    ids = [f"chunk-{i}" for i in positions]
    texts = [f"段落 {i}: text with \"quotes\" and\nnewlines" for i in positions]
    return ids, [f"doc-{i // 3}" for i in positions], texts


def fill(store: VectorStore, vectors: np.ndarray, start: int = 0) -> None:
    store.add(vectors, *records_for(range(start, start + len(vectors))))


def recall_at(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(set(f[f >= 0]) & set(t[t >= 0])) for f, t in zip(found, truth))
    return hits / max(1, int((truth >= 0).sum()))


def same_up_to_ties(ids_a, scores_a, ids_b, scores_b) -> bool:
    """Two rankings agree when their scores agree and each run of equal scores holds the same ids (a run cut by the
    cutoff may differ)."""
    if len(ids_a) != len(ids_b) or not np.allclose(scores_a, scores_b, atol=SCORE_TOLERANCE):
        return False
    start = 0
    for end in range(1, len(ids_a) + 1):
        if end == len(ids_a) or abs(scores_a[end] - scores_a[start]) > SCORE_TOLERANCE:
            if end < len(ids_a) and set(ids_a[start:end]) != set(ids_b[start:end]):
                return False
            start = end
    return True


def closing(store) -> None:
    if hasattr(store, "close"):
        store.close()


def demo_session(corpus: Path):
    """(dataset, embedding cache, NumPy reference report) for `corpus`, made once per session."""
    from click.testing import CliRunner

    from ..cli import main
    from ..data.dataset import load_dataset
    from ..embedders import EmbeddingCache
    from ..evaluation.pipeline import evaluate
    from ..evaluation.report import EvalConfig

    key = str(corpus.resolve())
    if key not in _SESSION:
        folder = Path(tempfile.mkdtemp(prefix="ragretrieval-conformance-"))
        atexit.register(shutil.rmtree, folder, True)
        result = CliRunner().invoke(main, ["dataset", "build", str(corpus), "--out", str(folder / "dataset")])
        assert result.exit_code == 0, result.output
        dataset = load_dataset(folder / "dataset")
        cache = EmbeddingCache(environment().cache_dir or folder / "cache")  # a suite's own first
        reference = evaluate(dataset, EvalConfig(store="numpy"), cache=cache, progress=False)
        _SESSION[key] = (dataset, cache, reference)
    return _SESSION[key]


class StoreConformance:
    """Every test a store must pass; a subclass supplies fixtures only."""

    shared_refusals_checked_elsewhere = False

    @pytest.fixture
    def shared_refusal(self):
        """Used by the cases whose refusal is the stores' shared code (see the module's docstring)."""
        if self.shared_refusals_checked_elsewhere:
            pytest.skip("a refusal of the stores' shared code (stores/base.py, stores/persist.py), checked on the "
                        "in-process stores and once on EngineStore")

    # ---- fixtures ------------------------------------------------------------------------------------------------
    @pytest.fixture
    def store_name(self) -> str:
        raise NotImplementedError("a conformance test class must define the store_name fixture")

    @pytest.fixture
    def store_options(self) -> dict:
        return {}

    @pytest.fixture
    def min_recall(self) -> float:
        return 0.9

    @pytest.fixture
    def exact_on_demo(self, new_store) -> bool:
        return new_store().exact

    @pytest.fixture
    def demo_corpus(self) -> Path:
        return Path(__file__).resolve().parents[2] / "datasets" / "demo" / "dishes"

    @pytest.fixture
    def new_store(self, store_name, store_options):
        """A factory of empty stores; each is closed after the test."""
        made = []

        def new():
            made.append(make_store(store_name, **store_options))
            return made[-1]

        yield new
        for store in made:
            closing(store)

    @pytest.fixture
    def vectors(self) -> np.ndarray:
        return unit_vectors(300)

    @pytest.fixture
    def queries(self) -> np.ndarray:
        return unit_vectors(40, seed=1)

    # ---- the protocol --------------------------------------------------------------------------------------------
    def test_is_a_vector_store(self, new_store, store_name):
        store = new_store()
        assert isinstance(store, VectorStore)
        assert store.name == store_name
        assert isinstance(store.exact, bool)
        assert len(store) == 0

    def test_search_agrees_with_exact_search(self, new_store, vectors, queries, min_recall, record_property):
        store = new_store()
        fill(store, vectors)
        found = store.search(queries, 10)
        truth = top_k(queries @ vectors.T, 10)
        assert found.indices.shape == found.scores.shape == (len(queries), 10)
        assert found.indices.dtype == np.int64
        if store.exact:
            np.testing.assert_array_equal(found.indices, truth.indices)
            np.testing.assert_allclose(found.scores, truth.scores, atol=SCORE_TOLERANCE)
        else:
            recall = recall_at(found.indices, truth.indices)
            record_property("recall_at_10", recall)
            assert recall >= min_recall, f"recall@10 against exact search is {recall:.3f} < {min_recall}"

    def test_positions_continue_across_adds(self, new_store, vectors):
        store = new_store()
        for lo, hi in ((0, 1), (1, 120), (120, 300)):
            fill(store, vectors[lo:hi], start=lo)
        assert len(store) == 300
        assert store.records.ids == records_for(range(300))[0]
        top = store.search(vectors, 1).indices[:, 0]
        assert (top == np.arange(300)).mean() >= (1.0 if store.exact else 0.95)

    def test_batch_search_equals_one_by_one(self, new_store, vectors, queries):
        store = new_store()
        fill(store, vectors)
        batch = store.search(queries, 7)
        for i, query in enumerate(queries):
            single = store.search(query[None, :], 7)
            np.testing.assert_array_equal(single.indices[0], batch.indices[i])
            np.testing.assert_allclose(single.scores[0], batch.scores[i], atol=SCORE_TOLERANCE)

    def test_empty_store_finds_nothing(self, new_store, tmp_path):
        store = new_store()
        result = store.search(unit_vectors(3), 5)
        assert result.indices.tolist() == [[-1] * 5] * 3
        assert np.isneginf(result.scores).all()
        store.save(tmp_path / "saved")
        loaded = type(store).load(tmp_path / "saved")
        assert len(loaded) == 0
        assert loaded.search(unit_vectors(2), 4).indices.tolist() == [[-1] * 4] * 2
        closing(loaded)

    def test_k_larger_than_store_pads(self, new_store, vectors):
        store = new_store()
        fill(store, vectors[:7])
        result = store.search(vectors[:3], 12)
        for row, scores in zip(result.indices, result.scores):
            assert sorted(row[:7].tolist()) == list(range(7))
            assert row[7:].tolist() == [-1] * 5
            assert np.isneginf(scores[7:]).all() and np.isfinite(scores[:7]).all()
            assert (np.diff(scores[:7]) <= SCORE_TOLERANCE).all(), "scores must come best first"

    # ---- bad input ---------------------------------------------------------------------------------------------
    def test_queries_of_another_width_are_refused(self, shared_refusal, new_store, vectors):
        store = new_store()
        fill(store, vectors[:10])
        with pytest.raises(StoreError, match=f"queries have {DIM + 1} dimensions, the store holds {DIM}"):
            store.search(unit_vectors(2, DIM + 1), 3)

    def test_vectors_of_another_width_are_refused(self, shared_refusal, new_store, vectors):
        store = new_store()
        fill(store, vectors[:10])
        with pytest.raises(StoreError, match=f"vectors have {DIM - 1} dimensions, the store holds {DIM}"):
            store.add(unit_vectors(2, DIM - 1), *records_for(range(10, 12)))
        assert len(store) == 10
        assert store.search(vectors[:1], 1).indices.tolist() == [[0]]

    def test_records_must_match_vectors(self, shared_refusal, new_store, vectors):
        store = new_store()
        with pytest.raises(StoreError, match="one id, parent id and text per vector"):
            store.add(vectors[:3], ["a", "b"], ["p", "p"], ["x", "y"])
        assert len(store) == 0

    def test_an_id_is_added_once(self, shared_refusal, new_store, vectors):
        store = new_store()
        fill(store, vectors[:5])
        with pytest.raises(StoreError, match="chunk id 'chunk-4' is added twice"):
            fill(store, vectors[5:8], start=4)
        assert len(store) == 5 and store.records.ids == records_for(range(5))[0]

    def test_k_must_be_positive(self, shared_refusal, new_store, vectors):
        store = new_store()
        fill(store, vectors[:5])
        with pytest.raises(StoreError, match="k must be positive"):
            store.search(vectors[:1], 0)

    # ---- persistence -------------------------------------------------------------------------------------------
    def test_save_and_load_round_trip(self, new_store, vectors, queries, min_recall, tmp_path):
        store = new_store()
        fill(store, vectors)
        before = store.search(queries, 10)
        store.save(tmp_path / "index")
        closing(store)
        loaded = type(store).load(tmp_path / "index")
        try:
            assert len(loaded) == 300
            assert (loaded.records.ids, loaded.records.parent_ids, loaded.records.texts) == records_for(range(300))
            after = loaded.search(queries, 10)
            if loaded.exact:
                np.testing.assert_array_equal(after.indices, before.indices)
                np.testing.assert_allclose(after.scores, before.scores, atol=SCORE_TOLERANCE)
            else:  # an engine may build its ANN index only now (Milvus does): as good as before, not the same
                truth = top_k(queries @ vectors.T, 10).indices
                assert recall_at(after.indices, truth) >= min_recall
            fill(loaded, unit_vectors(5, seed=7), start=300)  # a reloaded store takes more
            assert len(loaded) == 305
            assert loaded.search(unit_vectors(5, seed=7), 1).indices[:, 0].tolist() == list(range(300, 305))
        finally:
            closing(loaded)

    def test_a_damaged_store_json_names_file_and_field(self, shared_refusal, new_store, vectors, tmp_path):
        store = new_store()
        fill(store, vectors[:5])
        store.save(tmp_path / "index")
        closing(store)
        meta = json.loads((tmp_path / "index" / "store.json").read_text(encoding="utf-8"))
        assert meta["format_version"] == 1 and meta["ids"] == records_for(range(5))[0]
        del meta["parent_ids"]
        (tmp_path / "index" / "store.json").write_text(json.dumps(meta), encoding="utf-8")
        with pytest.raises(StoreError, match=r"store\.json: field 'parent_ids': Field required"):
            type(store).load(tmp_path / "index")

    def test_fingerprint_refused_unless_rebuilt(self, new_store, store_name, store_options, vectors, tmp_path):
        folder = tmp_path / "index"
        store = new_store()
        fill(store, vectors[:50])
        save_index(store, folder, "sha256:first")
        closing(store)
        loaded = load_index(folder, store_name, store_options, "sha256:first")
        assert len(loaded) == 50 and loaded.records.fingerprint == "sha256:first"
        closing(loaded)
        with pytest.raises(StoreError, match=r"different corpus, chunking or model.*--rebuild"):
            load_index(folder, store_name, store_options, "sha256:second")
        rebuilt = new_store()
        fill(rebuilt, vectors[:20])
        save_index(rebuilt, folder, "sha256:second")
        closing(rebuilt)
        reloaded = load_index(folder, store_name, store_options, "sha256:second")
        assert len(reloaded) == 20
        assert reloaded.search(vectors[19:20], 1).indices.tolist() == [[19]]
        closing(reloaded)

    def test_index_of_another_store_refused(self, shared_refusal, new_store, store_name, vectors, tmp_path):
        store = new_store()
        fill(store, vectors[:5])
        save_index(store, tmp_path / "index", "sha256:x")
        other = "faiss" if store_name != "faiss" else "numpy"
        with pytest.raises(StoreError, match=f"holds an index of store '{store_name}', not '{other}'"):
            load_index(tmp_path / "index", other, {}, "sha256:x")
        assert load_index(tmp_path / "nothing-here", store_name, {}, "sha256:x") is None

    # ---- end to end ----------------------------------------------------------------------------------------------
    def test_demo_metrics_match_exact_numpy(self, store_name, store_options, exact_on_demo, min_recall, demo_corpus,
                                            tmp_path, record_property):
        from ..evaluation.pipeline import evaluate
        from ..evaluation.report import EvalConfig

        if not demo_corpus.is_dir():
            pytest.skip(f"demo corpus {demo_corpus} not found; override the demo_corpus fixture")
        dataset, cache, reference = demo_session(demo_corpus)
        config = EvalConfig(store=store_name, store_options=store_options)
        progress = RecordingProgress()
        runs = [evaluate(dataset, config, cache=cache, progress=progress, index_dir=tmp_path / "index")
                for _ in range(2)]
        assert any("index loaded from" in note for note in progress.notes), progress.notes  # the second run reused it
        for report in runs:
            if exact_on_demo:
                for granularity, means in reference.means.items():
                    for metric, value in means.items():
                        assert abs(report.means[granularity][metric] - value) <= TOLERANCE, (granularity, metric)
                for ours, theirs in zip(report.questions, reference.questions):
                    assert same_up_to_ties([c.chunk_id for c in ours.retrieved_chunks],
                                           [c.score for c in ours.retrieved_chunks],
                                           [c.chunk_id for c in theirs.retrieved_chunks],
                                           [c.score for c in theirs.retrieved_chunks]), ours.id
            else:
                hits = total = 0
                for ours, theirs in zip(report.questions, reference.questions):
                    truth = {c.chunk_id for c in theirs.retrieved_chunks}
                    hits += len(truth & {c.chunk_id for c in ours.retrieved_chunks})
                    total += len(truth)
                record_property("demo_recall", hits / total)
                assert hits / total >= min_recall

