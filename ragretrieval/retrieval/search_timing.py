"""Search measured per question, after the evaluation's batched search: latency percentiles, queries per second,
index build time and size (`SearchTiming`), and for an approximate (ANN) store its distance from exact search
(`exact.py`).

Why a pass of its own: the evaluation searches every question in one batch, so its ``timings.searching`` is one
total that says nothing about the latency one user waits for. This pass searches a sample of up to `SAMPLE`
questions one at a time, after `WARM_UP` untimed searches, first from one thread, then from ``search_concurrency``
threads at once (EvalConfig). For a retriever with a vector store it times the store call alone: the question vectors
are the ones the batched search embedded (through the cache), so no embedding is timed. A retriever without a store
(bm25, http, run-file, hybrid, a reranked one) is timed on its own retrieval call for one question. The pass reads
nothing back into the run: its rankings and metrics are the batched search's, and the timing settings are not part of
the run's identity.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

SAMPLE = 1000  # questions timed one at a time (all of them when there are fewer)
WARM_UP = 10  # untimed searches first: caches, lazy loads and thread pools start outside the figures
SAMPLE_SEED = 0  # the sample is the same questions in every run of the same question set
STORE_SCOPE = "the vector store's search call only (question vectors from the embedding cache, not timed)"
RETRIEVER_SCOPE = "the retriever's own retrieval call for one question"


class LatencyPercentiles(BaseModel):
    """Milliseconds per search call: the median, the 95th and the 99th percentile."""

    p50: float
    p95: float
    p99: float


class SearchTiming(BaseModel):
    """What the timing pass measured (docs/stores.md, "Search latency"); `scope` says what one timed call covers."""

    scope: str
    sampled: int  # questions timed
    depth: int  # results asked per search: the batched search's depth
    search_latency_ms: LatencyPercentiles  # one thread, one question at a time
    search_qps: float  # one thread: searches per second
    concurrency: int  # threads of the concurrent pass (1: no concurrent pass)
    concurrent_latency_ms: LatencyPercentiles | None = None
    concurrent_qps: float | None = None
    index_build_seconds: float | None = None  # None when the index was loaded from --index-dir
    index_memory_bytes: int | None = Field(None, description="what the engine tells; None where it tells nothing")
    index_disk_bytes: int | None = None  # the saved index folder (--index-dir) or the engine's own data folder


def percentiles(seconds: list[float]) -> LatencyPercentiles:
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    p50, p95, p99 = np.percentile(ms, [50, 95, 99]) if len(ms) else (float("nan"),) * 3
    return LatencyPercentiles(p50=round(float(p50), 4), p95=round(float(p95), 4), p99=round(float(p99), 4))


def sample_positions(n: int, size: int = SAMPLE, seed: int = SAMPLE_SEED) -> np.ndarray:
    """Up to `size` of the n question positions, in order, the same ones on every run."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


@contextmanager
def one_faiss_thread():
    """FAISS parallelises a search over OpenMP threads; one timed call is meant to run on the thread that made it."""
    faiss = sys.modules.get("faiss")
    if faiss is None:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def time_calls(call, items: list, concurrency: int) -> tuple[list[float], float]:
    """Seconds of each `call(item)` and the wall time of all of them, from `concurrency` threads at once."""

    def timed(item) -> float:
        started = time.perf_counter()
        call(item)
        return time.perf_counter() - started

    started = time.perf_counter()
    if concurrency <= 1:
        seconds = [timed(item) for item in items]
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            seconds = list(pool.map(timed, items))
    return seconds, time.perf_counter() - started


def search_call(retriever, questions, depth: int):
    """`(call, items, scope)`: one search per item. The store's call on one question vector where the retriever has
    a store and the vectors of its batched search; else the retriever's own call on one question."""
    store, vectors = getattr(retriever, "store", None), getattr(retriever, "query_vectors", None)
    if store is not None and vectors is not None and len(vectors) == len(questions):
        return (lambda row: store.search(vectors[row:row + 1], depth)), STORE_SCOPE
    return (lambda row: retriever.search([questions[row]], depth)), RETRIEVER_SCOPE


def folder_bytes(folder) -> int | None:
    folder = Path(folder) if folder else None
    if folder is None or not folder.exists():
        return None
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def index_sizes(retriever) -> tuple[int | None, int | None]:
    """(bytes in memory, bytes on disk) of the retriever's index, where its engine tells them."""
    store = getattr(retriever, "store", None)
    if store is None:
        return None, None
    told = getattr(store, "index_sizes", None)
    memory, disk = told() if told is not None else (None, None)
    if getattr(retriever, "index_dir", None) is not None:
        disk = folder_bytes(retriever.index_dir)
    return memory, disk


def time_search(retriever, questions, depth: int, concurrency: int, sample: int = SAMPLE) -> SearchTiming:
    """The timing pass (module docstring) over `questions`, searched `depth` deep."""
    call, scope = search_call(retriever, questions, depth)
    rows = sample_positions(len(questions), sample).tolist()
    with one_faiss_thread():
        for row in rows[:WARM_UP]:
            call(row)
        single, wall = time_calls(call, rows, 1)
        concurrent = time_calls(call, rows, concurrency) if concurrency > 1 else None
    memory, disk = index_sizes(retriever)
    reloaded = getattr(retriever, "reloaded", False)
    build = None if reloaded else (getattr(retriever, "timings", None) or {}).get("indexing")
    return SearchTiming(
        scope=scope, sampled=len(rows), depth=depth, search_latency_ms=percentiles(single),
        search_qps=round(len(rows) / wall, 2) if wall > 0 else 0.0, concurrency=concurrency,
        concurrent_latency_ms=percentiles(concurrent[0]) if concurrent else None,
        concurrent_qps=round(len(rows) / concurrent[1], 2) if concurrent and concurrent[1] > 0 else None,
        index_build_seconds=None if build is None else round(build, 4), index_memory_bytes=memory,
        index_disk_bytes=disk)


def measure_search(report, retriever, questions, ranking, table, doc_qrels, chunk_policy: str):
    """The evaluation's one call after its batched search: `report` gains its `search` timing and, for an ANN store,
    its `exact` comparison and each question's ``exact_overlap@k`` (retrieval/exact.py). Returns `report`."""
    from .exact import compare_with_exact

    config = report.config
    report.search = time_search(retriever, questions, ranking.depth, config.search_concurrency)
    compare_with_exact(report, retriever, ranking, table, doc_qrels, chunk_policy)
    return report
