"""Corpus embedding on a real Dask LocalCluster: same vectors as in-process, cached as batches finish."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.embedders import EmbeddingCache, embed_cached
from ragretrieval.embedders.executors import ExecutorError, LocalExecutor, make_executor
from ragretrieval.embedders.executors.dask_executor import DaskExecutor, loaded_identities
from ragretrieval.embedders.hashing import HashingEmbedder


@pytest.fixture(scope="module")
def texts(demo):
    return list(dict.fromkeys(c.text for c in chunk_corpus(demo.documents, ChunkPolicy())))


def test_dask_vectors_equal_local_vectors_and_land_in_the_cache(texts, dask_cluster, tmp_path):
    embedder = HashingEmbedder(64)
    local, made_local = embed_cached(embedder, texts, EmbeddingCache(tmp_path / "local"), 16, False)
    cache = EmbeddingCache(tmp_path / "dask")
    with DaskExecutor(dask_cluster.scheduler_address) as executor:
        remote, made_remote = embed_cached(embedder, texts, cache, 16, False, executor=executor)
    assert made_local == made_remote == len(texts)
    assert np.array_equal(local, remote)
    assert cache.count(embedder.identity) == len(texts)
    again, made = embed_cached(embedder, texts, EmbeddingCache(tmp_path / "dask"), 16, False)
    assert made == 0 and np.array_equal(again, local)


def test_each_worker_keeps_one_embedder_per_identity(texts, dask_cluster, tmp_path):
    embedder = HashingEmbedder(32)
    with DaskExecutor(dask_cluster.scheduler_address, window=8) as executor:
        embed_cached(embedder, texts, EmbeddingCache(tmp_path), 4, False, executor=executor)
        held = executor.client.run(loaded_identities)
    assert len(held) == 2
    assert all(identities.count(embedder.identity) == 1 for identities in held.values())  # both worked, loaded once


class _Stopped(Exception):
    pass


class StopAfter(EmbeddingCache):
    """A real cache whose job is killed after `batches` batches were stored."""

    def __init__(self, folder, batches: int):
        super().__init__(folder)
        self.left = batches

    def put(self, model, keys, vectors) -> None:
        super().put(model, keys, vectors)
        self.left -= 1
        if self.left == 0:
            raise _Stopped


def test_an_interrupted_job_keeps_its_finished_batches(texts, dask_cluster, tmp_path):
    embedder, some = HashingEmbedder(48), texts[:96]
    assert len(some) == 96
    with DaskExecutor(dask_cluster.scheduler_address, window=2) as executor:
        with pytest.raises(_Stopped):
            embed_cached(embedder, some, StopAfter(tmp_path, 3), 16, False, executor=executor)
        assert EmbeddingCache(tmp_path).count(embedder.identity) == 48
        vectors, made = embed_cached(embedder, some, EmbeddingCache(tmp_path), 16, False, executor=executor)
    assert made == 48
    assert np.array_equal(vectors, embedder.embed(some))


def test_eval_through_dask_scheduler_address_gives_the_local_numbers(demo_dataset, dask_cluster, tmp_path):
    port = dask_cluster.scheduler_address.rsplit(":", 1)[1]
    reports = {}
    for executor in ("local", f"dask://127.0.0.1:{port}"):
        out = tmp_path / f"{executor.split(':')[0]}.json"
        result = CliRunner().invoke(main, [
            "eval", "--dataset", str(demo_dataset), "--model", "hashing", "--store", "numpy", "--executor", executor,
            "--no-progress", "--no-save", "--out", str(out)], env={"RAGRETRIEVAL_CACHE_DIR": str(tmp_path / executor[:4])})
        assert result.exit_code == 0, result.output
        reports[executor[:4]] = out.read_text(encoding="utf-8")
    import json

    local, remote = (json.loads(reports[name]) for name in ("loca", "dask"))
    assert remote["means"] == local["means"] and remote["embedded_texts"] == local["embedded_texts"] > 0


def test_default_dask_executor_starts_its_own_loopback_cluster(texts, tmp_path):
    with DaskExecutor(n_workers=1) as executor:
        vectors, made = embed_cached(HashingEmbedder(16), texts[:20], EmbeddingCache(tmp_path), 8, False,
                                     executor=executor)
        assert all(address.startswith("tcp://127.0.0.1:") for address in executor.client.nthreads())
    assert made == 20 and np.array_equal(vectors, HashingEmbedder(16).embed(texts[:20]))


def test_executor_specs():
    assert isinstance(make_executor("local"), LocalExecutor)
    assert make_executor("dask://10.0.0.5:8786").address == "tcp://10.0.0.5:8786"
    assert make_executor("dask").address is None
    with pytest.raises(ExecutorError, match=r"unknown executor 'ray'; use local, dask, dask-gpus\[:0,1\] or dask://HOST:PORT"):
        make_executor("ray")
    with pytest.raises(ExecutorError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", timeout=1).client  # noqa: B018 (connecting is the property's work)


@pytest.mark.model  # a random-weight sentence-transformers model in each worker
def test_one_worker_per_gpu_each_pinned_to_its_own_and_the_vectors_of_one_device(texts, tmp_path):
    """`dask-gpus:0,1` on a machine without GPUs: each worker sees only its own CUDA_VISIBLE_DEVICES, and the model
    (on the CPU here, `cuda` there) gives the vectors one process gives."""
    from ragretrieval.embedders import get_embedder
    from ragretrieval.embedders.executors.dask_executor import visible_device
    from ragretrieval.testing.random_models import make_random_model

    embedder = get_embedder(str(make_random_model(tmp_path / "tiny", "tiny")), device="cpu")
    alone, _ = embed_cached(embedder, texts[:40], EmbeddingCache(tmp_path / "one"), 4, False)
    with make_executor("dask-gpus:0,1") as executor:
        assert sorted(executor.client.run(visible_device).values()) == ["0", "1"]
        spread, made = embed_cached(embedder, texts[:40], EmbeddingCache(tmp_path / "two"), 4, False,
                                    executor=executor)
        held = executor.client.run(loaded_identities)
    assert made == 40 and np.allclose(spread, alone, atol=1e-5)
    assert sorted(len(identities) for identities in held.values()) == [1, 1]  # both GPUs' workers embedded


@pytest.mark.parametrize("spec", ["dask-gpus:", "dask-gpus:0,0", "dask-gpus:a,b", "dask-gpus:-1", "dask-gpus:0;rm"])
def test_gpu_workers_need_distinct_device_numbers(spec):
    with pytest.raises(ExecutorError, match="name distinct GPU numbers"):
        make_executor(spec)


def test_gpu_workers_start_their_own_cluster():
    with pytest.raises(ExecutorError, match="no address"):
        DaskExecutor("tcp://127.0.0.1:1", devices=["0"])
