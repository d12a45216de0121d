"""Stores inside the pipeline: FAISS flat and NumPy rank alike, HNSW/IVF options reach FAISS, bad names are clear.

The protocol itself (search, padding, save/load, refusals) is the conformance kit's job (tests/stores/); these tests
run the stores through `evaluate` with the dense retriever, using the test embedder from test_embedding_cache.
"""

from __future__ import annotations

import numpy as np
import pytest
from embedders.test_embedding_cache import evaluate_through as run

from ragretrieval.embedders import EmbeddingCache
from ragretrieval.stores import FaissStore, NumpyStore, StoreError, make_store
from ragretrieval.work.options import SettingsError


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return EmbeddingCache(tmp_path_factory.mktemp("store-cache"))


def test_faiss_flat_and_numpy_give_the_same_rankings(demo_dataset, cache):
    flat, exact = run(demo_dataset, cache, "faiss"), run(demo_dataset, cache, "numpy")
    for ours, reference in zip(flat.questions, exact.questions):
        assert [c.chunk_id for c in ours.retrieved_chunks] == [c.chunk_id for c in reference.retrieved_chunks]
        np.testing.assert_allclose([c.score for c in ours.retrieved_chunks],
                                   [c.score for c in reference.retrieved_chunks], rtol=1e-5)
        assert ours.retrieved_documents == reference.retrieved_documents
    assert flat.means == exact.means
    assert flat.embedded_texts + exact.embedded_texts == 30 + 104  # questions and chunks, embedded once for both


@pytest.mark.parametrize("options", [{"kind": "hnsw", "m": 16, "ef_search": 64}, {"kind": "ivf", "nlist": 4,
                                                                                    "nprobe": 4}])
def test_hnsw_and_ivf_options_run_the_pipeline(demo_dataset, cache, options):
    approximate, exact = run(demo_dataset, cache, "faiss", **options), run(demo_dataset, cache, "numpy")
    assert approximate.config.store_options == options
    # nprobe == nlist and a 104-vector graph search everything: they find what exact search finds
    assert approximate.means == exact.means


def test_faiss_options_are_stored_and_kind_is_checked():
    store = make_store("faiss", kind="hnsw", m=8)
    assert isinstance(store, FaissStore) and not store.exact
    assert store.options == {"kind": "hnsw", "m": 8, "ef_construction": 200, "ef_search": 128, "nlist": None,
                             "nprobe": 16}
    with pytest.raises(SettingsError) as error:  # the store's declared options (FaissOptions) check it
        make_store("faiss", kind="lsh")
    assert str(error.value) == "store faiss: store_options.kind: Input should be 'flat', 'hnsw' or 'ivf'"
    with pytest.raises(SettingsError, match="store_options.m: Input should be a valid integer"):
        make_store("faiss", m="many")
    assert make_store("faiss", kind="hnsw", m="8").options["m"] == 8  # a text from --store-option, typed


def test_save_and_load_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"doc{i // 5}.md#{i % 5}" for i in range(50)]
    for cls, options in ((FaissStore, {"kind": "hnsw"}), (NumpyStore, {})):
        store = make_store(cls.name, **options)
        store.add(vectors, ids, [i.split("#")[0] for i in ids], [f"text {i}" for i in ids])
        store.save(tmp_path / cls.name)
        loaded = cls.load(tmp_path / cls.name)
        assert len(loaded) == 50 and loaded.records.ids == ids and loaded.records.parent_ids[7] == "doc1.md"
        np.testing.assert_array_equal(loaded.search(vectors[:5], 3).indices, store.search(vectors[:5], 3).indices)


def test_unknown_store_and_bad_option_errors():
    with pytest.raises(StoreError) as error:
        make_store("elastic")
    message = str(error.value)
    assert message.startswith("unknown store 'elastic'; installed: ")
    installed = message.removeprefix("unknown store 'elastic'; installed: ").split(". ")[0].split(", ")
    assert {"faiss", "numpy"} <= set(installed) and installed == sorted(installed)
    with pytest.raises(SettingsError) as error:
        make_store("numpy", kind="flat")
    assert str(error.value) == "store numpy: store_options.kind: unknown option (known: none)"
