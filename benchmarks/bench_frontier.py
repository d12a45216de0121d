"""Quality against search latency per engine and setting, on HowToCook's own labels among a million distractors.

    python benchmarks/bench_frontier.py                                   # 1M vectors x 384 dims, all HowToCook
    python benchmarks/bench_frontier.py --vectors 50000 --documents 120   # minutes: the figures in docs/benchmarks.md

The corpus: HowToCook's chunks (size 300) embedded by a fast model (``e5-small-q4``, 384 dims, through the embedding
cache), plus synthetic distractor vectors drawn from the chunks' own distribution (a Gaussian with their mean and
covariance, the covariance shrunk 10 % towards its average variance so that it has full rank, each vector then
normalised), up to ``--vectors`` in all, so the labelled chunks compete with a million others. The questions are the
file-name questions ("如何做{name}？"), each labelled with its recipe. The truth is exact search (NumPy, in blocks).

Settings: FAISS flat (exact), HNSW (``ef_search`` 16/64/256) and IVF (``nprobe`` 1/8/32); Milvus Lite HNSW (``ef``
16/64/256), LanceDB IVF-HNSW-SQ (``nprobes`` 5/20/80) and Chroma (``search_ef`` 16/64/256), whichever are installed.
Each index is built once in a child process (its memory and threads apart; stopped and reported when its build
passes ``--build-limit``, 30 min by default) and searched at each value (Chroma, which fixes ``search_ef`` when it
creates a collection, is built once per value). Per setting: build time, search latency
p50/p95 and QPS (one question at a time, one thread, after a warm-up, as ragretrieval/retrieval/search_timing.py
times them, for at most ``--time-limit`` seconds per setting: the count timed is printed),
``exact_overlap@10`` (retrieval/exact.py), recall@10 of the labelled recipe among the top 10 chunks, its paired
difference from exact search with the t-test's p, and the child's peak memory. The table marks the Pareto-optimal
settings and names, per engine, the cheapest setting not significantly below exact.
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

HOWTOCOOK = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "howtocook" / "dishes"
K = 10
TRUTH_BLOCK = 50_000  # corpus rows scored against every question at once
DISTRACTOR_BLOCK = 100_000
SHRINK = 0.1
# engine spec -> (store name, build options, the search option swept, its three values)
SETTINGS = {
    "faiss-flat": ("faiss", {"kind": "flat"}, None, [None]),
    "faiss-hnsw": ("faiss", {"kind": "hnsw", "m": 16, "ef_construction": 100}, "ef_search", [16, 64, 256]),
    "faiss-ivf": ("faiss", {"kind": "ivf"}, "nprobe", [1, 8, 32]),
    "milvus-hnsw": ("milvus", {"index": "HNSW"}, "ef", [16, 64, 256]),
    "lancedb-ivf-hnsw-sq": ("lancedb", {"index": "ivf_hnsw_sq"}, "nprobes", [5, 20, 80]),
    "chroma-hnsw": ("chroma", {}, "search_ef", [16, 64, 256]),
}
REBUILT = {"chroma-hnsw"}  # Chroma fixes search_ef when it creates the collection: one build per value


# ------------------------------------------------------------------------------------------------------ the data
def labelled_data(corpus: Path, documents: int | None, model: str, cache_dir: Path | None):
    """(chunk vectors, question vectors, each chunk's recipe index, each question's recipe index)."""
    from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
    from ragretrieval.data.corpus import load_corpus
    from ragretrieval.data.filename_questions import filename_questions
    from ragretrieval.embedders import EmbeddingCache, embed_cached
    from ragretrieval.retrieval.registry import BuildContext

    docs = sorted(load_corpus(corpus).documents, key=lambda d: d.id)[:documents]
    questions = list(filename_questions(docs, "如何做{name}？"))
    chunks = chunk_corpus(docs, ChunkPolicy(300, 50))
    code = {d.id: i for i, d in enumerate(docs)}
    embedder = BuildContext().embedder(model)
    cache = EmbeddingCache(cache_dir) if cache_dir else EmbeddingCache()
    started = time.perf_counter()
    chunk_vectors, _ = embed_cached(embedder.for_side("passage"), [c.text for c in chunks], cache, 64, None, "chunks")
    question_vectors, _ = embed_cached(embedder.for_side("query"), [q.text for q in questions], cache, 64, None,
                                       "questions")
    print(f"{len(docs)} recipes, {len(chunks)} chunks, {len(questions)} questions embedded by {model} in "
          f"{time.perf_counter() - started:.1f} s (cache included)", file=sys.stderr, flush=True)
    return (np.asarray(chunk_vectors, np.float32), np.asarray(question_vectors, np.float32),
            np.array([code[c.parent_id] for c in chunks]), np.array([code[q.relevant[0].doc_id] for q in questions]))


def distractors(chunks: np.ndarray, n: int, seed: int = 0):
    """`n` unit vectors from a Gaussian with the chunks' mean and (shrunk) covariance, in blocks."""
    mean = chunks.mean(axis=0)
    cov = np.cov(chunks, rowvar=False)
    cov = (1 - SHRINK) * cov + SHRINK * np.trace(cov) / len(cov) * np.eye(len(cov))
    values, vectors = np.linalg.eigh(cov)
    root = (vectors * np.sqrt(np.clip(values, 0, None))).astype(np.float32)
    rng = np.random.default_rng(seed)
    for lo in range(0, n, DISTRACTOR_BLOCK):
        block = mean + rng.standard_normal((min(DISTRACTOR_BLOCK, n - lo), len(mean)), dtype=np.float32) @ root.T
        yield (block / np.linalg.norm(block, axis=1, keepdims=True)).astype(np.float32)


def exact_top(corpus: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k positions and scores of every question, over the corpus in blocks."""
    best_i = np.zeros((len(queries), 0), np.int64)
    best_s = np.zeros((len(queries), 0), np.float32)
    for lo in range(0, len(corpus), TRUTH_BLOCK):
        scores = queries @ np.asarray(corpus[lo:lo + TRUTH_BLOCK]).T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        cand_i = np.hstack([best_i, top + lo])
        cand_s = np.hstack([best_s, np.take_along_axis(scores, top, axis=1)])
        order = np.argsort(-cand_s, axis=1, kind="stable")[:, :k]
        best_i, best_s = np.take_along_axis(cand_i, order, axis=1), np.take_along_axis(cand_s, order, axis=1)
    return best_i, best_s


def recall_at(found: np.ndarray, chunk_recipe: np.ndarray, question_recipe: np.ndarray) -> np.ndarray:
    """Per question: 1 when its recipe is the parent of one of the top-k chunks (distractors have none)."""
    n_chunks = len(chunk_recipe)
    parents = np.where((found >= 0) & (found < n_chunks), chunk_recipe[np.clip(found, 0, n_chunks - 1)], -1)
    return (parents == question_recipe[:, None]).any(axis=1).astype(np.float64)


# ----------------------------------------------------------------------------------------------------- the child
def set_search(store, option: str, value) -> None:
    """Change a built index's search setting in place (no rebuild)."""
    if store.name == "faiss":
        index = store._index
        if option == "ef_search":
            index.hnsw.efSearch = value
        else:
            index.nprobe = value
    store.options[option] = value


def time_until(call, rows: list, limit: float) -> tuple[list[float], float]:
    """Seconds of each call, one at a time, until every row is done or `limit` seconds have passed."""
    seconds, started = [], time.perf_counter()
    for row in rows:
        began = time.perf_counter()
        call(row)
        seconds.append(time.perf_counter() - began)
        if time.perf_counter() - started > limit:
            break
    return seconds, time.perf_counter() - started


def run_child(spec: str, folder: Path, time_limit: float) -> dict:
    from ragretrieval.retrieval.search_timing import WARM_UP, one_faiss_thread, percentiles
    from ragretrieval.stores import make_store

    name, options, option, values = SETTINGS[spec]
    corpus = np.load(folder / "corpus.npy")
    queries = np.load(folder / "queries.npy")
    ids = [str(i) for i in range(len(corpus))]

    def build_store(**more):
        started = time.perf_counter()
        store = make_store(name, **options, **more)
        if name == "lancedb":  # it builds its index after each insert batch: one batch builds it once
            store.insert_batch = len(corpus)
        store.add(corpus, ids, ids, [""] * len(ids))
        print(f"[{spec}] built in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        return store, time.perf_counter() - started

    store, build = (None, None) if spec in REBUILT else build_store()
    rows = []
    for value in values:
        if spec in REBUILT:
            if store is not None:
                store.close()
            store, build = build_store(**{option: value})
        elif option is not None:
            set_search(store, option, value)
        found = store.search(queries, K).indices

        def call(row, store=store):
            store.search(queries[row:row + 1], K)

        with one_faiss_thread():
            time_until(call, list(range(min(WARM_UP, len(queries)))), time_limit / 4)  # warm-up, bounded too
            seconds, wall = time_until(call, list(range(len(queries))), time_limit)
        np.save(folder / f"found-{spec}-{value}.npy", found)
        ms = percentiles(seconds)
        rows.append({"value": value, "build_s": build, "p50": ms.p50, "p95": ms.p95, "qps": len(seconds) / wall,
                     "timed": len(seconds),
                     "found": str(folder / f"found-{spec}-{value}.npy")})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"spec": spec, "exact": bool(store.exact), "option": option, "rows": rows,
            "peak_gib": peak / 2**30}


def measure(spec: str, folder: Path, build_limit: float, time_limit: float) -> dict:
    log = folder / f"child-{spec}.log"
    with open(log, "w") as err:
        try:
            done = subprocess.run([sys.executable, __file__, "--child", spec, "--folder", str(folder),
                                   "--time-limit", str(time_limit)], stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=build_limit + 3 * (2 * time_limit + 300))
        except subprocess.TimeoutExpired:
            return {"spec": spec, "error": f"build passed {build_limit / 60:.0f} min (stopped)"}
    if done.returncode != 0:
        tail = log.read_text().strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {"spec": spec, "error": tail[0][:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------------- the table
def frontier(results, truth, chunks, question_vectors, chunk_recipe, question_recipe, alpha=0.05) -> list[dict]:
    from ragretrieval.analysis.stats import paired_stats
    from ragretrieval.retrieval.exact import overlap_at

    exact_recall = recall_at(truth[0], chunk_recipe, question_recipe)
    rows = []
    for result in results:
        for row in result.get("rows", []):
            found = np.load(row.pop("found"))
            got = recall_at(found, chunk_recipe, question_recipe)
            stats = paired_stats(exact_recall, got)
            setting = "exact" if result["option"] is None else f"{result['option']}={row['value']}"
            rows.append({"engine": result["spec"], "setting": setting,
                         "peak_gib": result["peak_gib"], **row,
                         "overlap": float(overlap_at(K, found, question_vectors, chunks, truth[1]).mean()),
                         "recall": float(got.mean()), "diff": float(stats.diff),
                         "p": None if np.isnan(stats.p) else float(stats.p)})
    for row in rows:
        row["pareto"] = not any(o is not row and o["p95"] <= row["p95"] and o["recall"] >= row["recall"]
                                and (o["p95"] < row["p95"] or o["recall"] > row["recall"]) for o in rows)
        row["fine"] = not (row["p"] is not None and row["p"] < alpha and row["diff"] < 0)
    return rows


def table(rows, results, header: str) -> str:
    lines = [header, "", "| engine | setting | build s | p50 ms | p95 ms | QPS | timed | exact_overlap@10 | "
             "recall@10 | vs exact | p | peak GiB | Pareto |", "|---" * 13 + "|"]
    for r in rows:
        p = "-" if r["p"] is None else f"{r['p']:.3g}"
        lines.append(f"| {r['engine']} | {r['setting']} | {r['build_s']:.1f} | {r['p50']:.3f} | {r['p95']:.3f} | "
                     f"{r['qps']:.0f} | {r['timed']} | {r['overlap']:.4f} | {r['recall']:.4f} | {r['diff']:+.4f} | "
                     f"{p} | {r['peak_gib']:.2f} | {'yes' if r['pareto'] else ''} |")
    lines += [f"| {r['spec']} | {r['error']} |" + " |" * 11 for r in results if "error" in r]
    lines += ["", "| engine | cheapest setting not significantly below exact | p95 ms | recall@10 |",
              "|---|---|---|---|"]
    for engine in dict.fromkeys(r["engine"] for r in rows):
        fine = [r for r in rows if r["engine"] == engine and r["fine"]]
        best = min(fine, key=lambda r: r["p95"]) if fine else None
        lines.append(f"| {engine} | {best['setting']} | {best['p95']:.3f} | {best['recall']:.4f} |" if best else
                     f"| {engine} | every setting is significantly below exact | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=1_000_000, help="chunks plus distractors in all")
    parser.add_argument("--documents", type=int, default=None, help="the first N recipes only [default: all]")
    parser.add_argument("--corpus", type=Path, default=HOWTOCOOK)
    parser.add_argument("--model", default="e5-small-q4")
    parser.add_argument("--cache-dir", type=Path, default=None, help="embedding cache [default: the user's]")
    parser.add_argument("--engines", nargs="*", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--build-limit", type=float, default=1800, help="seconds an index may take to build")
    parser.add_argument("--time-limit", type=float, default=60,
                        help="seconds of one-at-a-time searches per setting (the questions timed are printed)")
    parser.add_argument("--out", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(args.child, args.folder, args.time_limit)))
        return
    from ragretrieval.stores import available_stores

    started = time.perf_counter()
    chunks, questions, chunk_recipe, question_recipe = labelled_data(args.corpus, args.documents, args.model,
                                                                     args.cache_dir)
    n = max(args.vectors, len(chunks))
    installed = available_stores()
    engines = [e for e in args.engines if SETTINGS[e][0] in installed]
    with tempfile.TemporaryDirectory(prefix="bench-frontier-") as tmp:
        folder = Path(tmp)
        corpus = np.lib.format.open_memmap(folder / "corpus.npy", "w+", np.float32, (n, chunks.shape[1]))
        corpus[:len(chunks)] = chunks
        at = len(chunks)
        for block in distractors(chunks, n - len(chunks)):
            corpus[at:at + len(block)] = block
            at += len(block)
        corpus.flush()
        np.save(folder / "queries.npy", questions)
        truth = exact_top(corpus, questions, K)
        print(f"{n} vectors ready, exact truth in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        results = []
        for engine in engines:
            result = measure(engine, folder, args.build_limit, args.time_limit)
            print(json.dumps({k: v for k, v in result.items() if k != "rows"}), file=sys.stderr, flush=True)
            results.append(result)
        rows = frontier(results, truth, np.asarray(corpus), questions, chunk_recipe, question_recipe)
    header = (f"{n} vectors x {chunks.shape[1]} dims ({len(chunks)} HowToCook chunks by {args.model}, "
              f"{n - len(chunks)} distractors), {len(questions)} questions, k={K}; "
              f"{time.perf_counter() - started:.0f} s in all")
    print(table(rows, results, header))
    if args.out:
        args.out.write_text(json.dumps({"header": header, "rows": rows,
                                        "errors": [r for r in results if "error" in r]}, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
