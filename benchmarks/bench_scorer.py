"""How fast is the scorer next to ranx and pytrec_eval? One process, same synthetic data for every tool.

Clean data (the default, seeded): N queries x DEPTH retrieved docs with ids like ``doc123456`` and distinct,
descending scores, about 20 x N distinct doc ids; each query has 1-5 relevant docs labelled 1-3, about 60% of them
retrieved somewhere in the ranking.

Messy data (``--messy``): what real run files hold. About 45 x N distinct doc ids of four shapes (``doc12``,
``msmarco_passage_12``, ``clueweb12-0000tw-12``, ``W12``; about 4 million at 100,000 queries); --tie-share of the
queries (5%) scored so coarsely that every doc ties with others (scores rounded to 0.1: runs of about 10 equal
scores); 5% of the qrels queries missing from the run and as many run queries that the qrels do not know; 10% of the
rankings shorter than DEPTH; 1% of the rankings repeating one of their lines (same doc, same score) at the end; run
rows in random order; labels 0-3, 1-5 judged docs per query.

``--ids`` gives the messy run's doc ids another shape: ``numeric`` (up to 19 digits, as tweet or database ids),
``uuid`` (36 characters), ``url`` (web pages, 45-60 characters); ``--tie-share 0.3`` ties 30% of the queries.

From files, three paths are timed: ours reading the run whole (``read_run``, then ``score``), ours streamed
(``score_files``, what ``ragretrieval score`` runs: batches of whole queries), and pytrec_eval (``parse_run`` or its
loop, then ``evaluate``); ``--files-only`` times only those, and checks that the two paths of ours agree bit for bit.
``--scale N`` writes an N x DEPTH messy run (in chunks of --sample queries, sharing one pool of 45 x N doc ids) and
a --sample one, scores each from its file streamed in a process of its own (peak memory: the process's VmHWM), and
compares the time per line, and the first --sample queries' values against the in-memory path on those queries alone.

Timings are the best of --repeat runs (the end-to-end file paths are timed in turns). Our scorer is NumPy that
ranks blocks of queries and computes its two kinds of metric on up to four threads, and our TREC reader parses blocks
on up to four threads; ranx's kernels use every core (numba prange); pytrec_eval is single-threaded C++ over Python
dicts. The "cpu s" column shows what each tool spent over all its threads.

How each tool is fed the messy data (see docs/metrics.md, "Agreement with reference tools"): pytrec_eval's
``parse_run`` refuses a doc listed twice for a query (an assert), so its file path reads the run with the same loop
minus that assert, keeping the best score of a doc (as we keep its best-ranked line). ranx is timed on the run as it
is (its kernels order tied docs arbitrarily), and its means are checked a second time on the same rankings with the
ties broken as trec_eval breaks them (doc id descending). Means average over every qrels query, a query missing from
the run counting 0 (our default, ``trec_eval -c``, ranx's ``make_comparable``).

    python benchmarks/bench_scorer.py                  # clean: 100,000 queries x 100 docs (10M run lines)
    python benchmarks/bench_scorer.py --messy          # messy: the same size, ties, ~4M distinct doc ids
    python benchmarks/bench_scorer.py --queries 2000   # a quick smoke run (add --messy for the other mode)
    python benchmarks/bench_scorer.py --messy --files-only --ids url --repeat 3        # one id shape, from files
    python benchmarks/bench_scorer.py --scale 1000000 --keep /tmp/scale                # 100 million lines
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ragretrieval.scoring import PAD, Qrels, Run, parse_metrics, score, score_files
from ragretrieval.scoring.trec import read_qrels, read_run, write_qrels, write_run

CUTOFFS = (1, 3, 5, 10, 20, 100)
FAMILIES = ("precision", "recall", "hit_rate", "mrr", "f1", "ndcg", "ndcg_exp", "map")
METRICS = parse_metrics([f"{f}@{k}" for f in FAMILIES for k in CUTOFFS] + ["mrr", "map", "r_precision"])
RANX_NAME = {"ndcg_exp": "ndcg_burges", "r_precision": "r-precision"}
TREC_MEASURES = {f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("P", "recall", "success", "ndcg_cut", "map_cut")}
TREC_MEASURES |= {"recip_rank", "map", "Rprec"}
TREC_NAME = {"precision": "P", "recall": "recall", "hit_rate": "success", "ndcg": "ndcg_cut", "map": "map_cut"}
SHAPES = ("doc", "msmarco_passage_", "clueweb12-0000tw-", "W")  # messy doc ids: a shape, then a number
# (ours vs this row, target ratio) at 100,000 x 100, per mode: the goals
TARGETS = {"clean": {"ranx kernels": 10, "pytrec_eval": 30, "pytrec_eval files": 5},
           "messy": {"ranx kernels": 10, "pytrec_eval files": 5}}


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


def _mix(values) -> list[int]:
    """splitmix64's finalizer on Python ints: a bijection of 64-bit integers (distinct codes, distinct results)."""
    out = []
    for v in values:
        v = (v + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        out.append(v ^ (v >> 31))
    return out


def doc_names(codes: np.ndarray, ids: str, shapes: np.ndarray) -> list[str]:
    """Distinct doc ids for distinct codes, in one of the shapes of ``--ids`` (`shapes`: the "mixed" shape of each
    code, drawn by the caller)."""
    numbers = codes.tolist()
    if ids == "mixed":  # four id shapes, a shape then a number
        return [f"{SHAPES[s]}{i}" for s, i in zip(shapes.tolist(), numbers)]
    if ids == "numeric":  # up to 19 digits, as tweet or database ids: a bijection of the code modulo 10**19
        return [str((i * 2862933555777941757 + 3037000493) % 10**19) for i in numbers]
    if ids == "uuid":  # 36 characters; the first 64 bits are a bijection of the code
        high, low = _mix(numbers), _mix([i ^ 0x5DEECE66D for i in numbers])
        return [f"{h >> 32:08x}-{(h >> 16) & 0xFFFF:04x}-{h & 0xFFFF:04x}-{low >> 48:04x}-{low & 0xFFFFFFFFFFFF:012x}"
                for h, low in zip(high, low)]
    if ids == "url":  # web pages, as ClueWeb or MS MARCO document runs name them
        sites = ("en.wikipedia.org/wiki", "www.example.com/news/2024", "docs.python.org/3/library",
                 "blog.example.org/p")
        return [f"https://{sites[s]}/page-{i}.html" for s, i in zip(shapes.tolist(), numbers)]
    raise ValueError(ids)


def messy_synthetic(n_queries: int, depth: int, seed: int, tie_share: float, ids: str = "mixed",
                    first_query: int = 0, pool: int | None = None):
    """(Qrels, Run) as described in the module docstring, sharing one doc vocabulary. `first_query`: the number of
    the first query (q{first_query}...), for a run written in chunks; `pool`: the doc codes drawn from (default 45
    per query), shared by the chunks; the vocabulary then holds only the docs the chunk names."""
    rng = np.random.default_rng(seed)
    whole = pool is None  # one vocabulary of every code, drawn as before chunks existed (the bench's own data)
    pool = pool or max(45 * n_queries, 100 * depth)
    in_run = np.flatnonzero(rng.random(n_queries) >= 0.05)  # 5% of the qrels queries have no ranking
    n_extra = n_queries // 20  # run queries the qrels do not know
    n_rows = len(in_run) + n_extra
    steps = rng.integers(1, max(2, pool // depth), (n_rows, depth))  # sum < pool: distinct docs per row
    codes = (rng.integers(0, pool, n_rows)[:, None] + np.cumsum(steps, axis=1)) % pool
    jitter = np.round(rng.random((n_rows, depth)) / (3 * depth), 6)
    scores = np.round((depth - np.arange(depth)) / depth + jitter, 6)
    tied = rng.random(n_rows) < tie_share
    scores[tied] = np.round(scores[tied], 1)  # about 10 docs per score
    lengths = np.where(rng.random(n_rows) < 0.1, rng.integers(1, max(2, depth), n_rows), depth)
    repeated = np.flatnonzero((rng.random(n_rows) < 0.01) & (lengths >= 2))
    source = rng.integers(0, lengths[repeated] - 1)
    codes[repeated, lengths[repeated] - 1] = codes[repeated, source]  # the same line again, at the end
    scores[repeated, lengths[repeated] - 1] = scores[repeated, source]
    empty = np.arange(depth) >= lengths[:, None]
    codes[empty], scores[empty] = PAD, -np.inf
    shuffle = rng.permutation(n_rows)
    codes, scores, lengths = codes[shuffle], scores[shuffle], lengths[shuffle]
    query_of_row = np.concatenate([in_run, n_queries + np.arange(n_extra)])[shuffle]

    n_judged = rng.integers(1, 6, n_queries)
    rows = np.repeat(np.arange(n_queries), n_judged)
    row_of_query = np.full(n_queries, -1)
    known = query_of_row < n_queries
    row_of_query[query_of_row[known]] = np.flatnonzero(known)
    run_row = np.maximum(row_of_query[rows], 0)
    slot = (rng.random(len(rows)) * lengths[run_row]).astype(np.int64)
    retrieved = (row_of_query[rows] >= 0) & (rng.random(len(rows)) < 0.6)
    judged = np.where(retrieved, codes[run_row, slot], pool + np.arange(len(rows)))
    n_docs = pool + len(rows)
    first = np.sort(np.unique(rows * n_docs + judged, return_index=True)[1])  # one label per (query, doc)
    rows, judged = rows[first], judged[first]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_queries))))

    shapes = rng.integers(0, len(SHAPES), n_docs) if whole else None
    labels = rng.integers(0, 4, len(rows))
    query_ids = np.array([f"q{first_query + i}" for i in range(n_queries)]
                         + [f"x{first_query + i}" for i in range(n_extra)], dtype=object)
    if whole:
        doc_ids = np.array(doc_names(np.arange(n_docs), ids, shapes), dtype=object)
        qrels = Qrels.from_arrays(query_ids[:n_queries], doc_ids, indptr, judged, labels)
        return qrels, Run.from_arrays(query_ids[query_of_row], doc_ids, codes, scores)
    # a chunk of a bigger run: the unjudged-and-unretrieved codes moved past the shared pool, ids for used codes only
    judged = np.where(judged >= pool, judged - pool + 10**12 + first_query * 10, judged)
    used, inverse = np.unique(np.concatenate([codes[codes >= 0], judged]), return_inverse=True)
    shape = ((used.astype(np.uint64) * np.uint64(0x9E3779B1)) >> np.uint64(7)) % np.uint64(len(SHAPES))
    doc_ids = np.array(doc_names(used, ids, shape), dtype=object)
    in_run = inverse[: int((codes >= 0).sum())]
    local = np.full(codes.shape, PAD)
    local[codes >= 0] = in_run
    qrels = Qrels.from_arrays(query_ids[:n_queries], doc_ids, indptr, inverse[len(in_run):], labels, check_ids=False)
    return qrels, Run.from_arrays(query_ids[query_of_row], doc_ids, local, scores, check_ids=False)


def as_dicts(qrels: Qrels, run: Run):
    """The dicts ranx and pytrec_eval read: empty slots left out; a doc listed twice keeps its best score, as our
    scorer keeps its best-ranked line."""
    rankings = {}
    for query, codes, scores in zip(run.query_ids.tolist(), run.codes, run.scores):
        filled = codes != PAD
        docs, values = run.doc_ids[codes[filled]].tolist(), scores[filled].tolist()
        ranking = dict(zip(docs, values))
        if len(ranking) < len(docs):
            ranking = {}
            for doc, value in zip(docs, values):
                ranking[doc] = max(value, ranking.get(doc, -math.inf))
        rankings[query] = ranking
    return qrels.to_dict(), rankings


def ties_broken(rankings: dict) -> dict:
    """The rankings with every tie broken as trec_eval breaks it (doc id descending, in byte order), as distinct
    scores, so that a tool that orders tied docs arbitrarily (ranx) ranks as trec_eval does."""
    out = {}
    for query, ranking in rankings.items():
        if len(set(ranking.values())) == len(ranking):
            out[query] = ranking
            continue
        by_id = sorted(ranking, key=lambda doc: doc.encode(), reverse=True)
        ordered = sorted(by_id, key=lambda doc: -ranking[doc])  # stable: equal scores keep doc id descending
        out[query] = {doc: float(len(ordered) - i) for i, doc in enumerate(ordered)}
    return out


def parse_run_keeping_best(lines) -> dict:
    """pytrec_eval.parse_run's loop without its assert on a doc listed twice for a query: the best score is kept."""
    run: dict = collections.defaultdict(dict)
    for line in lines:
        query_id, _, doc_id, _, text, _ = line.strip().split()
        ranking, value = run[query_id], float(text)
        if value > ranking.get(doc_id, -math.inf):
            ranking[doc_id] = value
    return run


class Timing(NamedTuple):
    seconds: float  # wall clock
    cpu: float  # this process's CPU time, all threads: on a busy machine it strays less than the wall clock


def timed(function):
    """(Timing, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu), result


def best_of(repeat: int, function):
    """(Timing of the fastest run by wall clock, last result)."""
    best, result = Timing(float("inf"), float("inf")), None
    for _ in range(repeat):
        timing, result = timed(function)
        best = min(best, timing)
    return best, result


def best_of_in_turns(repeat: int, *functions):
    """(Timing of the fastest run, last result) of each function; the functions take turns. The last one (the
    reference tool, whose results are big) keeps no result."""
    best, results = [Timing(float("inf"), float("inf"))] * len(functions), [None] * len(functions)
    for _ in range(repeat):
        for i, function in enumerate(functions):
            results[i] = None
            timing, result = timed(function)
            best[i] = min(best[i], timing)
            results[i] = result if i < len(functions) - 1 else None
            del result
    return list(zip(best, results))


def ranx_timings(qrels_dict, run_dict, repeat: int, check_dict=None):
    """(warmed kernels' seconds, evaluate()'s seconds, means; means of `check_dict`'s rankings, if given)."""
    import ranx
    from ranx.meta.evaluate import extract_metric_and_params
    from ranx.metrics import metric_switch

    names = [RANX_NAME.get(m.family, m.family) + (f"@{m.k}" if m.k else "") for m in METRICS]
    qrels = ranx.Qrels.from_dict(qrels_dict)
    run = ranx.Run.from_dict(run_dict).make_comparable(qrels)  # empty rankings for missing queries, extra ones out
    typed_qrels, typed_run = qrels.to_typed_list(), run.to_typed_list()
    kernels = [(metric_switch(m), k, level) for m, k, level in map(extract_metric_and_params, names)]
    for kernel, k, level in kernels:  # warm-up: numba compiles (or loads its cache) on the first call
        kernel(typed_qrels[:2], typed_run[:2], k, level)
    kernel_time, values = best_of(repeat, lambda: [kernel(typed_qrels, typed_run, k, lv) for kernel, k, lv in kernels])
    evaluate_time, _ = best_of(repeat, lambda: ranx.evaluate(qrels, run, names, save_results_in_run=False,
                                                             make_comparable=True))
    means = {m.name: float(np.mean(v)) for m, v in zip(METRICS, values)}
    if check_dict is None:
        return kernel_time, evaluate_time, means, None
    checked = ranx.Run.from_dict(check_dict).make_comparable(qrels).to_typed_list()
    check = [kernel(typed_qrels, checked, k, lv) for kernel, k, lv in kernels]
    return kernel_time, evaluate_time, means, {m.name: float(np.mean(v)) for m, v in zip(METRICS, check)}


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


def print_rows(rows, at_size: bool, load_before: float, messy: bool) -> None:
    """The table: each step's best time, its CPU time, the ratio to ours and the target."""
    print(f"\n{'step':46} {'seconds':>9} {'cpu s':>8}  {'ours is':>13}  {'target' if at_size else ''}")
    for name, timing, reference, goal in rows:
        ratio = timing.seconds / reference.seconds if reference else None
        faster = f"{ratio:6.1f}x faster" if reference else ""
        met = f"{goal:>5}x {'met' if ratio >= goal else 'NOT met'}" if goal and at_size else ""
        print(f"{name:46} {timing.seconds:9.3f} {timing.cpu:8.3f}  {faster:>13}  {met}")
    print("(ranx: evaluate(save_results_in_run=False), numba threads = all cores; pytrec_eval: one thread; our score() "
          "and TREC reader: up to 4 threads; cpu s: CPU time of the process over all its threads)")
    print(f"(load average over 1 minute, {os.cpu_count()} cores: {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end)")
    if messy:
        print("(pytrec_eval's files: its parse_run loop keeping a repeated doc's best score, as parse_run asserts)")


def max_difference(ours: dict, theirs: dict) -> float:
    return max(abs(ours[name] - value) for name, value in theirs.items())


def identical(one, other, n: int | None = None) -> bool:
    """The same query ids and per-query values, to the bit (the first `n` queries of `one`, when given)."""
    part = slice(None) if n is None else slice(0, n)
    return (list(one.query_ids[part]) == list(other.query_ids)
            and all(np.array_equal(one.per_query[m][part], other.per_query[m]) for m in other.per_query))


# ------------------------------------------------------------------------------------------------------ --scale
SAMPLE = 100_000  # the run the big one is compared with (time per line), and its first queries (the means); also
# the queries generated and written at a time (--sample changes it, for a quick try of --scale)


def write_scaled(folder: Path, n_queries: int, depth: int, seed: int, tie_share: float, ids: str):
    """A messy run of `n_queries` x `depth` and its qrels, written in chunks of queries sharing one pool of doc
    codes (45 per query); the first chunk is also written on its own (sample.*). Returns the run's line count;
    files already in `folder` are reused."""
    paths = [folder / name for name in ("qrels.txt", "run.txt", "sample.qrels.txt", "sample.run.txt", "lines")]
    if all(p.exists() for p in paths):
        return int(paths[-1].read_text())
    folder.mkdir(parents=True, exist_ok=True)
    lines = 0
    with open(paths[0], "wb") as qrels_out, open(paths[1], "wb") as run_out:
        for chunk, first in enumerate(range(0, n_queries, SAMPLE)):
            qrels, run = messy_synthetic(min(SAMPLE, n_queries - first), depth, seed + chunk, tie_share, ids, first,
                                         pool=45 * n_queries)
            lines += int((run.codes >= 0).sum())
            for part, write, out, sample in ((qrels, write_qrels, qrels_out, paths[2]),
                                             (run, write_run, run_out, paths[3])):
                piece = folder / "piece.txt"
                write(part, piece)
                with open(piece, "rb") as data:
                    shutil.copyfileobj(data, out, 1 << 24)
                if chunk == 0:
                    piece.replace(sample)
                else:
                    piece.unlink()
            print(f"  written {first + len(qrels.query_ids):,} queries", flush=True)
    paths[-1].write_text(str(lines))
    return lines


def peak_memory() -> int:
    """This process's peak resident memory in bytes: VmHWM, the high-water mark of this program's own memory (on
    Linux, getrusage's ru_maxrss of a process started by fork and exec also counts the parent's memory at the fork:
    the bench's parent holds gigabytes after writing the runs), else ru_maxrss."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def child(qrels_path: str, run_path: str, out: str) -> None:
    """In a process of its own: score_files on the files; prints seconds and this process's peak memory (max RSS)
    as JSON, and saves the first SAMPLE queries' values to `out`."""
    timing, result = timed(lambda: score_files(qrels_path, run_path, METRICS))
    peak = peak_memory()
    part = slice(0, SAMPLE)
    np.savez(out, query_ids=result.query_ids[part].astype(str),
             **{m.name: result.per_query[m.name][part] for m in METRICS})
    print(json.dumps({"seconds": timing.seconds, "cpu": timing.cpu, "peak_bytes": peak}))


def streamed(qrels_path: Path, run_path: Path, out: Path) -> dict:
    """`child` run in a fresh interpreter: its peak memory is the scoring's own."""
    done = subprocess.run([sys.executable, __file__, "--child", str(qrels_path), str(run_path), str(out),
                           str(SAMPLE)], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def scaled(args) -> None:
    """--scale N: an N x DEPTH messy run scored from its file, streamed, against the same run at SAMPLE queries:
    time per line, peak memory (max RSS of the scoring process), and the per-query values of the first SAMPLE
    queries against the in-memory path (read whole, then `score`) on those queries alone."""
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    shape = f"ids {args.ids}, ties in {args.tie_share:.0%} of the queries"
    print(f"writing the runs ({shape}) in {folder}", flush=True)
    big_lines = write_scaled(folder / f"{args.scale}", args.scale, args.depth, args.seed, args.tie_share, args.ids)
    small_lines = write_scaled(folder / f"{SAMPLE}", SAMPLE, args.depth, args.seed, args.tie_share, args.ids)
    load_before = os.getloadavg()[0]
    print(f"\n{'scoring from the file, streamed':40} {'lines':>12} {'MB':>7} {'seconds':>8} {'s / M lines':>11} "
          f"{'max RSS':>9}")
    results = {}
    for name, n, lines in ((f"{SAMPLE:,} queries", SAMPLE, small_lines), (f"{args.scale:,} queries", args.scale,
                                                                           big_lines)):
        where = folder / f"{n}"
        best = None
        for _ in range(args.repeat if n == SAMPLE else max(1, args.repeat // 2)):
            got = streamed(where / "qrels.txt", where / "run.txt", where / "values.npz")
            best = got if best is None or got["seconds"] < best["seconds"] else best
        results[n] = best | {"lines": lines}
        size = (where / "run.txt").stat().st_size / 1e6
        print(f"{name:40} {lines:12,} {size:7.0f} {best['seconds']:8.2f} {best['seconds'] / lines * 1e6:11.3f} "
              f"{best['peak_bytes'] / 2**30:7.2f} GB", flush=True)
    per_line = [results[n]["seconds"] / results[n]["lines"] for n in (SAMPLE, args.scale)]
    ratio, peak = per_line[1] / per_line[0], results[args.scale]["peak_bytes"] / 2**30
    print(f"time per line, {args.scale:,} against {SAMPLE:,}: {ratio:.2f}x (target at most 2x: "
          f"{'met' if ratio <= 2 else 'NOT met'}); peak memory {peak:.2f} GB (target at most 3 GB: "
          f"{'met' if peak <= 3 else 'NOT met'})")
    print(f"(load average over 1 minute, {os.cpu_count()} cores: {load_before:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end)")

    big = folder / f"{args.scale}"
    judged = read_qrels(big / "sample.qrels.txt")
    whole = score(judged, read_run(big / "sample.run.txt", doc_ids=judged.doc_ids), METRICS)
    values = np.load(big / "values.npz")
    same = list(values["query_ids"]) == list(whole.query_ids) and all(
        np.array_equal(values[m.name], whole.per_query[m.name]) for m in METRICS)
    means = max(abs(float(np.mean(values[m.name])) - whole.means[m.name]) for m in METRICS)
    print(f"the first {SAMPLE:,} queries, streamed from the {args.scale:,}-query file vs their own files read whole: "
          f"per-query values {'identical' if same else 'DIFFERENT'}, means max |difference| {means:.1e}")
    if not args.keep:
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs per timing (as timeit)")
    parser.add_argument("--messy", action="store_true", help="messy data (ties, ~45 x N doc ids, ...; see above)")
    parser.add_argument("--tie-share", type=float, default=0.05, help="--messy: share of queries with tied scores")
    parser.add_argument("--ids", choices=("mixed", "numeric", "uuid", "url"), default="mixed",
                        help="--messy: the doc ids' shape (see doc_names)")
    parser.add_argument("--scale", type=int, help="write a messy run of this many queries x DEPTH and score it from "
                                                  "the file, streamed, in a process of its own (see scaled())")
    parser.add_argument("--files-only", action="store_true",
                        help="time only the paths from files (ours read whole, ours streamed, pytrec_eval)")
    parser.add_argument("--keep", type=Path, help="--scale: write the files here and reuse them if they are there")
    parser.add_argument("--sample", type=int, default=SAMPLE, help="--scale: the smaller run it is compared with")
    parser.add_argument("--child", nargs=4, metavar=("QRELS", "RUN", "OUT", "SAMPLE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # numba's type-safety chatter from ranx
    if args.child:
        globals()["SAMPLE"] = int(args.child[3])
        return child(*args.child[:3])
    if args.scale:
        globals()["SAMPLE"] = args.sample
        return scaled(args)

    import pytrec_eval

    mode = "messy" if args.messy else "clean"
    load_before = os.getloadavg()[0]
    if args.messy:
        qrels, run = messy_synthetic(args.queries, args.depth, args.seed, args.tie_share, args.ids)
        mode = f"messy (ids {args.ids}, ties in {args.tie_share:.0%} of the queries)"
    else:
        qrels, run = synthetic(args.queries, args.depth, args.seed)
    n_lines = int((run.codes >= 0).sum())
    print(f"{mode}: {run.n_queries:,} run queries x {args.depth} docs = {n_lines:,} run lines, "
          f"{len(np.unique(run.codes[run.codes >= 0])):,} distinct docs, {qrels.n_queries:,} qrels queries, "
          f"{len(qrels.labels):,} judgements, {len(METRICS)} metrics; best of {args.repeat}")
    rows = []

    # Files first, while the heap is small: later steps hold tens of millions of Python objects.
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = Path(folder) / "qrels.txt", Path(folder) / "run.txt"
        write_qrels(qrels, qrels_path)
        write_run(run, run_path, tag="bench")
        size = run_path.stat().st_size / 1e6
        parse_run = parse_run_keeping_best if args.messy else pytrec_eval.parse_run  # parse_run refuses repeats

        def trec_files():
            with open(qrels_path) as q_file, open(run_path) as r_file:
                judged, ranked = pytrec_eval.parse_qrel(q_file), parse_run(r_file)
            return pytrec_eval.RelevanceEvaluator(judged, TREC_MEASURES).evaluate(ranked)

        def our_files():  # the run read whole, against the qrels' doc vocabulary
            judged = read_qrels(qrels_path)
            return score(judged, read_run(run_path, doc_ids=judged.doc_ids), METRICS)

        def our_stream():  # as `ragretrieval score` does: the run read in batches of whole queries
            return score_files(qrels_path, run_path, METRICS)

        # the end-to-end paths take turns, so a slow spell of a shared machine falls on all
        (files_time, from_files), (stream_time, from_stream), (trec_files_time, _) = best_of_in_turns(
            args.repeat, our_files, our_stream, trec_files)
        gc.collect()
        qrels_time, qrels_read = best_of(args.repeat, lambda: read_qrels(qrels_path))
        read_time, run_read = best_of(args.repeat, lambda: read_run(run_path, doc_ids=qrels_read.doc_ids))
        score_time, _ = best_of(args.repeat, lambda read=run_read: score(qrels_read, read, METRICS))
        run_read = None
        gc.collect()

    target = TARGETS["messy" if args.messy else "clean"]
    file_rows = [("ours: files -> read_qrels + read_run + score", files_time, None, None),
                 (f"  of which read_run ({size:.0f} MB)", read_time, None, None),
                 ("  of which read_qrels", qrels_time, None, None),
                 ("  of which score() on what was read", score_time, None, None),
                 ("pytrec_eval: files -> parse + evaluate", trec_files_time, files_time,
                  target.get("pytrec_eval files")),
                 ("ours: files streamed (score_files, `score`)", stream_time, None, None),
                 ("pytrec_eval: files, against ours streamed", trec_files_time, stream_time,
                  target.get("pytrec_eval files"))]
    at_size = (args.queries, args.depth) == (100_000, 100)  # the size the targets are set for
    if args.files_only:
        print_rows(file_rows, at_size, load_before, args.messy)
        print(f"\nours streamed vs read whole, per query: "
              f"{'identical' if identical(from_stream, from_files) else 'DIFFERENT'}")
        return

    ours_time, ours = best_of(args.repeat, lambda: score(qrels, run, METRICS))
    rows.append(("ours: score(), in memory", ours_time, None, None))
    qrels_dict, run_dict = as_dicts(qrels, run)
    check_dict = ties_broken(run_dict) if args.messy else None
    kernel_time, evaluate_time, ranx_means, ranx_check = ranx_timings(qrels_dict, run_dict, args.repeat, check_dict)
    rows.append(("ranx: numba kernels, warmed", kernel_time, ours_time, target.get("ranx kernels")))
    rows.append(("ranx: evaluate()", evaluate_time, ours_time, None))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, TREC_MEASURES)
    trec_time, trec_result = best_of(args.repeat, lambda: evaluator.evaluate(run_dict))
    rows.append(("pytrec_eval: evaluate()", trec_time, ours_time, target.get("pytrec_eval")))
    print_rows(rows + file_rows, at_size, load_before, args.messy)

    print("\nsame numbers? max |difference| of means over every qrels query, ours vs")
    trec = trec_means(trec_result, qrels.n_queries)  # pytrec_eval leaves out the queries missing from the run
    print(f"  pytrec_eval ({len(trec)} shared metrics): {max_difference(ours.means, trec):.2e}")
    if ranx_check is None:
        print(f"  ranx ({len(ranx_means)} metrics): {max_difference(ours.means, ranx_means):.2e}")
    else:
        print(f"  ranx ({len(ranx_means)} metrics), ties broken as trec_eval: "
              f"{max_difference(ours.means, ranx_check):.2e}")
        print("  ranx, ties as given (ranx orders tied docs arbitrarily): "
              f"{max_difference(ours.means, ranx_means):.2e}")
    print(f"  ours from files vs in memory: {max_difference(ours.means, from_files.means):.2e}")
    print(f"  ours streamed vs read whole, per query: "
          f"{'identical' if identical(from_stream, from_files) else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
