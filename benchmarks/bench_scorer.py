"""How fast is the scorer next to ranx and pytrec_eval? One process, same synthetic data for every tool.

Data (seeded): N queries x DEPTH retrieved docs with ids like ``doc123456`` and distinct, descending scores; each
query has 1-5 relevant docs labelled 1-3, about 60% of them retrieved somewhere in the ranking.
Timings are the best of --repeat runs (the two end-to-end file paths are timed in turns). Our scorer is
single-threaded NumPy and our TREC reader parses blocks on up to four threads; ranx's kernels use every core (numba
prange); pytrec_eval is single-threaded C++ over Python dicts.

    python benchmarks/bench_scorer.py                  # 100,000 queries x 100 docs (10M run lines)
    python benchmarks/bench_scorer.py --queries 2000   # a quick smoke run
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from ragretrieval.scoring import Qrels, Run, parse_metrics, score
from ragretrieval.scoring.trec import read_qrels, read_run, write_qrels, write_run

CUTOFFS = (1, 3, 5, 10, 20, 100)
FAMILIES = ("precision", "recall", "hit_rate", "mrr", "f1", "ndcg", "ndcg_exp", "map")
METRICS = parse_metrics([f"{f}@{k}" for f in FAMILIES for k in CUTOFFS] + ["mrr", "map", "r_precision"])
RANX_NAME = {"ndcg_exp": "ndcg_burges", "r_precision": "r-precision"}
TREC_MEASURES = {f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("P", "recall", "success", "ndcg_cut", "map_cut")}
TREC_MEASURES |= {"recip_rank", "map", "Rprec"}
TREC_NAME = {"precision": "P", "recall": "recall", "hit_rate": "success", "ndcg": "ndcg_cut", "map": "map_cut"}


def synthetic(n_queries: int, depth: int, seed: int):
    """(Qrels, Run) built from arrays, sharing one doc vocabulary."""
    rng = np.random.default_rng(seed)
    pool = max(20 * n_queries, 100 * depth)
    start = rng.integers(0, pool, n_queries)
    codes = (start[:, None] + np.cumsum(rng.integers(1, 50, (n_queries, depth)), axis=1)) % pool  # distinct per row
    jitter = np.round(rng.random((n_queries, depth)) / (3 * depth), 6)
    scores = np.round((depth - np.arange(depth)) / depth + jitter, 6)  # distinct, descending along each row

    n_relevant = rng.integers(1, 6, n_queries)
    rows = np.repeat(np.arange(n_queries), n_relevant)
    nth = np.arange(len(rows)) - np.repeat(np.cumsum(n_relevant) - n_relevant, n_relevant)
    slots = np.argsort(rng.random((n_queries, depth)), axis=1)[rows, nth]  # distinct retrieved slots per query
    unretrieved = pool + np.arange(len(rows))
    judged = np.where(rng.random(len(rows)) < 0.6, codes[rows, slots], unretrieved)
    labels = rng.integers(1, 4, len(rows))

    doc_ids = np.array([f"doc{i}" for i in range(pool + len(rows))], dtype=object)
    query_ids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    indptr = np.concatenate(([0], np.cumsum(n_relevant)))
    qrels = Qrels.from_arrays(query_ids, doc_ids, indptr, judged, labels)
    return qrels, Run.from_arrays(query_ids, doc_ids, codes, scores)


def best_of(repeat: int, function):
    """(best seconds, last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def best_of_in_turns(repeat: int, *functions):
    """(best seconds, last result) of each function; the functions take turns. Only the first keeps its result."""
    best, results = [float("inf")] * len(functions), [None] * len(functions)
    for _ in range(repeat):
        for i, function in enumerate(functions):
            results[i] = None
            start = time.perf_counter()
            result = function()
            best[i] = min(best[i], time.perf_counter() - start)
            results[i] = result if i == 0 else None
            del result
    return list(zip(best, results))


def ranx_timings(qrels_dict, run_dict, repeat: int):
    import ranx
    from ranx.meta.evaluate import extract_metric_and_params
    from ranx.metrics import metric_switch

    names = [RANX_NAME.get(m.family, m.family) + (f"@{m.k}" if m.k else "") for m in METRICS]
    qrels, run = ranx.Qrels.from_dict(qrels_dict), ranx.Run.from_dict(run_dict)
    typed_qrels, typed_run = qrels.to_typed_list(), run.to_typed_list()
    kernels = [(metric_switch(m), k, level) for m, k, level in map(extract_metric_and_params, names)]
    for kernel, k, level in kernels:  # warm-up: numba compiles (or loads its cache) on the first call
        kernel(typed_qrels[:2], typed_run[:2], k, level)
    kernel_time, values = best_of(repeat, lambda: [kernel(typed_qrels, typed_run, k, lv) for kernel, k, lv in kernels])
    evaluate_time, _ = best_of(repeat, lambda: ranx.evaluate(qrels, run, names, save_results_in_run=False))
    means = {m.name: float(np.mean(v)) for m, v in zip(METRICS, values)}
    return kernel_time, evaluate_time, means


def trec_means(per_query: dict, n_queries: int) -> dict:
    means = {}
    for m in METRICS:
        if m.family in TREC_NAME and m.k:
            key = f"{TREC_NAME[m.family]}_{m.k}"
        else:
            key = {"mrr": "recip_rank", "map": "map", "r_precision": "Rprec"}.get(m.family) if m.k is None else None
        if key:
            means[m.name] = sum(q[key] for q in per_query.values()) / n_queries
    return means


def max_difference(ours: dict, theirs: dict) -> float:
    return max(abs(ours[name] - value) for name, value in theirs.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs per timing (as timeit)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # numba's type-safety chatter from ranx

    import pytrec_eval

    qrels, run = synthetic(args.queries, args.depth, args.seed)
    n_lines = int((run.codes >= 0).sum())
    print(f"{args.queries:,} queries x {args.depth} docs = {n_lines:,} run lines, {len(qrels.labels):,} judgements, "
          f"{len(METRICS)} metrics; best of {args.repeat}")
    rows = []

    # Files first, while the heap is small: later steps hold tens of millions of Python objects.
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = Path(folder) / "qrels.txt", Path(folder) / "run.txt"
        write_qrels(qrels, qrels_path)
        write_run(run, run_path, tag="bench")
        size = run_path.stat().st_size / 1e6

        def trec_files():
            with open(qrels_path) as q_file, open(run_path) as r_file:
                judged, ranked = pytrec_eval.parse_qrel(q_file), pytrec_eval.parse_run(r_file)
            return pytrec_eval.RelevanceEvaluator(judged, TREC_MEASURES).evaluate(ranked)

        def our_files():  # as `ragretrieval score` does: the run is read against the qrels' doc vocabulary
            judged = read_qrels(qrels_path)
            return score(judged, read_run(run_path, doc_ids=judged.doc_ids), METRICS)

        # the two end-to-end paths take turns, so a slow spell of a shared machine falls on both
        (files_time, from_files), (trec_files_time, _) = best_of_in_turns(args.repeat, our_files, trec_files)
        gc.collect()
        qrels_time, qrels_read = best_of(args.repeat, lambda: read_qrels(qrels_path))
        read_time, run_read = best_of(args.repeat, lambda: read_run(run_path, doc_ids=qrels_read.doc_ids))
        score_time, _ = best_of(args.repeat, lambda read=run_read: score(qrels_read, read, METRICS))
        run_read = None
        gc.collect()

    ours_time, ours = best_of(args.repeat, lambda: score(qrels, run, METRICS))
    rows.append(("ours: score(), in memory", ours_time, None, None))
    qrels_dict, run_dict = qrels.to_dict(), {q: dict(zip(run.doc_ids[c].tolist(), s.tolist()))
                                            for q, c, s in zip(run.query_ids.tolist(), run.codes, run.scores)}
    kernel_time, evaluate_time, ranx_means = ranx_timings(qrels_dict, run_dict, args.repeat)
    rows.append(("ranx: numba kernels, warmed", kernel_time, ours_time, 10))
    rows.append(("ranx: evaluate()", evaluate_time, ours_time, None))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, TREC_MEASURES)
    trec_time, trec_result = best_of(args.repeat, lambda: evaluator.evaluate(run_dict))
    rows.append(("pytrec_eval: evaluate()", trec_time, ours_time, 30))
    rows.append(("ours: files -> read_qrels + read_run + score", files_time, None, None))
    rows.append((f"  of which read_run ({size:.0f} MB)", read_time, None, None))
    rows.append(("  of which read_qrels", qrels_time, None, None))
    rows.append(("  of which score() on what was read", score_time, None, None))
    rows.append(("pytrec_eval: files -> parse + evaluate", trec_files_time, files_time, 5))

    at_size = (args.queries, args.depth) == (100_000, 100)  # the size the targets are set for
    print(f"\n{'step':46} {'seconds':>9}  {'ours is':>13}  {'target' if at_size else ''}")
    for name, seconds, reference, target in rows:
        ratio = f"{seconds / reference:6.1f}x faster" if reference else ""
        goal = f"{target:>5}x {'met' if seconds / reference >= target else 'NOT met'}" if target and at_size else ""
        print(f"{name:46} {seconds:9.3f}  {ratio:>13}  {goal}")
    print("(ranx: evaluate(save_results_in_run=False), numba threads = all cores; pytrec_eval and our score(): one "
          "thread; our TREC reader: up to 4 threads)")
    print("\nsame numbers? max |difference| of means, ours vs")
    print(f"  pytrec_eval ({len(trec_means(trec_result, 1))} shared metrics): "
          f"{max_difference(ours.means, trec_means(trec_result, len(trec_result))):.2e}")
    print(f"  ranx ({len(ranx_means)} metrics): {max_difference(ours.means, ranx_means):.2e}")
    print(f"  ours from files vs in memory: {max_difference(ours.means, from_files.means):.2e}")


if __name__ == "__main__":
    main()
