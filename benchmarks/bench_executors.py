"""Corpus embedding time: LocalExecutor (the baseline) against DaskExecutor on a local cluster, same texts, same
batches, each with an empty cache. Prints seconds, texts/s, the ratio to the baseline and how far the vectors differ.

    python benchmarks/bench_executors.py                       # m3e-small over the demo corpus's chunks
    python benchmarks/bench_executors.py --model hashing       # model-free, for a quick check
    python benchmarks/bench_executors.py --workers 4 --address tcp://HOST:8786   # an existing cluster
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.corpus import load_corpus
from ragretrieval.embedders import EmbeddingCache, embed_cached, get_embedder
from ragretrieval.embedders.executors import LocalExecutor
from ragretrieval.embedders.executors.dask_executor import DaskExecutor

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo" / "dishes"


def timed(embedder, texts, executor, batch_size):
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        vectors, made = embed_cached(embedder, texts, EmbeddingCache(folder), batch_size, False, executor=executor)
        return time.perf_counter() - started, vectors, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEMO)
    parser.add_argument("--model", default="m3e-small")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--address", default=None, help="scheduler address; default: a local cluster")
    args = parser.parse_args()

    texts = list(dict.fromkeys(c.text for c in chunk_corpus(load_corpus(args.corpus).documents, ChunkPolicy())))
    embedder = get_embedder(args.model)
    print(f"{len(texts)} chunk texts from {args.corpus}, model {embedder.identity}, batch size {args.batch_size}")
    embedder.embed(texts[:2])  # load the model outside the timing, as each Dask worker keeps its loaded copy
    base, local_vectors, _ = timed(embedder, texts, LocalExecutor(), args.batch_size)
    rows = [("local (baseline)", base, 0.0)]
    with DaskExecutor(args.address, n_workers=args.workers) as executor:
        started = time.perf_counter()
        executor.client.wait_for_workers(1 if args.address else args.workers)
        start_up = time.perf_counter() - started
        cold, vectors, _ = timed(embedder, texts, executor, args.batch_size)  # workers load the model here
        warm, vectors, _ = timed(embedder, texts, executor, args.batch_size)
        rows += [(f"dask, cold ({args.workers} workers, model loads)", cold,
                  float(np.abs(vectors - local_vectors).max())),
                 (f"dask, warm ({args.workers} workers)", warm, float(np.abs(vectors - local_vectors).max()))]
    print(f"dask cluster start-up: {start_up:.2f}s (not counted below)")
    print(f"{'executor':<40} {'seconds':>8} {'texts/s':>8} {'x baseline':>10} {'max |dv|':>9}")
    for name, seconds, diff in rows:
        print(f"{name:<40} {seconds:>8.2f} {len(texts) / seconds:>8.1f} {base / seconds:>10.2f} {diff:>9.2g}")


if __name__ == "__main__":
    main()
