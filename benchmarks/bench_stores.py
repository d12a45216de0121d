"""Build and query every installed vector store on one synthetic corpus, with FAISS flat as the baseline.

    python benchmarks/bench_stores.py            # 1M chunks x 384 dims, 10k queries
    python benchmarks/bench_stores.py --small    # 20k x 384, 500 queries: minutes, fit for CI
    python benchmarks/bench_stores.py --stores faiss milvus:index=IVF_FLAT lancedb:index=ivf_hnsw_sq,nprobes=40

Vectors and queries are random unit vectors (seeded). Each store runs in its own child process, so one store's
memory and threads do not colour the next, and a store that builds for longer than --build-limit is stopped and
reported as such. Per store: build time (``add`` of every vector with its id, parent id and a short text), queries
per second (batches of 100 until every query is done or --search-limit seconds passed; the count searched is
printed), peak memory and recall@10 against exact search (FAISS flat, whose results are exact, gives the truth).

Memory: the peak resident set size of the child (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which sees native
and embedded-engine memory that tracemalloc cannot) minus its RSS once the vectors were loaded (psutil), i.e. what
the store needed beyond the caller's own copy of the vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BASELINE = "faiss"
QUERY_BATCH = 100  # NumPy scores a whole batch against every vector at once: 100 x 1M floats
MIN_FREE_MEMORY = 3 * 2**30  # a child stops itself before the machine runs out of memory
DEFAULT_STORES = ("faiss", "faiss:kind=hnsw", "faiss:kind=ivf", "numpy", "milvus", "qdrant", "chroma", "lancedb",
                  "lancedb:index=ivf_hnsw_sq")


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
    for lo in range(0, n, 100_000):  # in blocks: no float64 copy of the whole corpus
        block = rng.standard_normal((min(100_000, n - lo), dim), dtype=np.float32)
        out[lo : lo + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def parse_spec(spec: str) -> tuple[str, dict]:
    name, _, rest = spec.partition(":")
    options = {}
    for pair in filter(None, rest.split(",")):
        key, _, value = pair.partition("=")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return name, options


def watch_memory() -> None:
    """Exit (status 3) when the machine's available memory falls under MIN_FREE_MEMORY: a store too big for this
    machine is reported, not swapped to death."""
    import threading

    import psutil

    def watch():
        while True:
            if psutil.virtual_memory().available < MIN_FREE_MEMORY:
                print("stopped: the machine's available memory fell under 3 GiB", file=sys.stderr, flush=True)
                os._exit(3)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def run_one(spec: str, folder: Path, k: int, search_limit: float) -> dict:
    """In the child: build one store, search, and return the measurements."""
    import psutil

    from ragretrieval.stores import make_store

    watch_memory()
    vectors, queries = np.load(folder / "vectors.npy"), np.load(folder / "queries.npy")
    loaded_rss = psutil.Process().memory_info().rss
    name, options = parse_spec(spec)
    store = make_store(name, **options)
    n = len(vectors)
    print(f"[{spec}] building {n} vectors", file=sys.stderr, flush=True)
    started = time.perf_counter()
    store.add(vectors, [f"c{i}" for i in range(n)], [f"d{i // 4}" for i in range(n)], [f"chunk {i}" for i in range(n)])
    build = time.perf_counter() - started
    print(f"[{spec}] built in {build:.1f} s; searching", file=sys.stderr, flush=True)
    found, searching = [], 0.0
    for lo in range(0, len(queries), QUERY_BATCH):
        started = time.perf_counter()
        found.append(store.search(queries[lo : lo + QUERY_BATCH], k).indices)
        searching += time.perf_counter() - started
        if searching > search_limit:
            break
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    indices = np.concatenate(found)
    np.save(folder / f"found-{os.getpid()}.npy", indices)
    return {"store": spec, "exact": bool(store.exact), "build_s": build, "queries": len(indices),
            "qps": len(indices) / searching, "memory_mb": (peak - loaded_rss) / 2**20,
            "found": str(folder / f"found-{os.getpid()}.npy")}


def recall_at(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(np.intersect1d(f[f >= 0], t)) for f, t in zip(found, truth))
    return hits / truth[: len(found)].size


def measure(spec: str, folder: Path, args) -> dict:
    """Run one store in a child process; stop it after the build limit plus the search limit."""
    search_limit = float("inf") if spec == BASELINE else args.search_limit  # the truth covers every query
    command = [sys.executable, __file__, "--child", spec, "--folder", str(folder), "--k", str(args.k),
               "--search-limit", str(search_limit)]
    log = folder / f"child-{spec.replace(':', '_').replace('=', '_').replace(',', '_')}.log"
    with open(log, "w") as err:
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=None if spec == BASELINE else args.build_limit + args.search_limit + 120)
        except subprocess.TimeoutExpired:
            ours = [line for line in log.read_text().splitlines() if line.startswith(f"[{spec}]")]
            return {"store": spec, "error": f"stopped after {args.build_limit / 60:.0f} min; last: "
                                            f"{ours[-1] if ours else '(no output)'}"}
    if done.returncode != 0:
        tail = log.read_text().strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {"store": spec, "error": tail[0][:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: list[dict], n: int, n_queries: int) -> str:
    base = next((r for r in results if r["store"] == BASELINE and "error" not in r), None)
    header = "| store | exact | build s | x flat | queries/s | x flat | peak MB | x flat | recall@10 | queries run |"
    lines = [f"{n} vectors, {n_queries} queries; baseline: FAISS flat", "", header, "|---" * 10 + "|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['store']} | | {r['error']} | | | | | | | |")
            continue

        def ratio(key, r=r):
            return f"{r[key] / base[key]:.2f}" if base and base[key] else "-"

        lines.append(f"| {r['store']} | {'yes' if r['exact'] else 'ANN'} | {r['build_s']:.1f} | {ratio('build_s')} | "
                     f"{r['qps']:.0f} | {ratio('qps')} | {r['memory_mb']:.0f} | {ratio('memory_mb')} | "
                     f"{r['recall']:.4f} | {r['queries']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="20k x 384, 500 queries")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--stores", nargs="*", help="NAME[:key=value,...] each; default: every installed store")
    parser.add_argument("--build-limit", type=float, default=600, help="seconds a store may take to build")
    parser.add_argument("--search-limit", type=float, default=120, help="seconds of searching per store")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.folder, args.k, args.search_limit)))
        return
    if args.small:
        args.n, args.queries = 20_000, 500
    from ragretrieval.stores import available_stores

    installed = available_stores()
    specs = args.stores or [s for s in DEFAULT_STORES if parse_spec(s)[0] in installed]
    specs = [BASELINE] + [s for s in specs if s != BASELINE]  # the baseline first: its results are the truth
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        folder = Path(tmp)
        np.save(folder / "vectors.npy", unit_vectors(args.n, args.dim, seed=0))
        np.save(folder / "queries.npy", unit_vectors(args.queries, args.dim, seed=1))
        results, truth = [], None
        for spec in specs:
            result = measure(spec, folder, args)
            if "found" in result:
                found = np.load(result.pop("found"))
                if spec == BASELINE:
                    truth = found  # FAISS flat is exact
                result["recall"] = recall_at(found, truth) if truth is not None else float("nan")
            results.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
    print(table(results, args.n, args.queries))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
