"""How much does the embedding cache save? A cold `eval` (empty cache) against a warm one, same settings.

Each `eval` is a fresh process running the real CLI, so the warm time includes Python start-up, imports and reading
the cache, and the cold time includes loading the model. The baseline is the cold run: the ratio printed is
warm / cold. The cache folder, dataset and reports live in a temporary folder that is removed afterwards, so the
user's own cache is never touched (and never helps the cold run).

    python benchmarks/bench_cache.py                              # HowToCook (../shared/data/howtocook/dishes)
    python benchmarks/bench_cache.py --corpus datasets/demo/dishes  # the 31-recipe demo: about a minute
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
HOWTOCOOK = REPO_ROOT.parent / "shared" / "data" / "howtocook" / "dishes"
CLI = [sys.executable, "-c", "from ragretrieval.cli import main; main()"]


def ragretrieval(args: list[str], env: dict) -> float:
    """Run one CLI command; return its wall time in seconds. Its output goes to this terminal."""
    started = time.perf_counter()
    subprocess.run([*CLI, *args], env=env, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HOWTOCOOK, help="Markdown folder [default: HowToCook].")
    parser.add_argument("--model", default="m3e-small", help="Embedding model [default: m3e-small].")
    parser.add_argument("--top-k", default="5")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus}: corpus folder not found (pass --corpus DIR)")

    with tempfile.TemporaryDirectory(prefix="ragretrieval-bench-cache-") as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "RAGRETRIEVAL_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1"}
        ragretrieval(["build-dataset", str(args.corpus), "--out", str(tmp / "dataset")], env)
        runs = {}
        for name in ("cold", "warm"):
            report = tmp / f"{name}.json"
            print(f"--- {name} eval ---", flush=True)
            seconds = ragretrieval(["eval", "--dataset", str(tmp / "dataset"), "--model", args.model,
                                    "--top-k", args.top_k, "--no-progress", "--no-save", "--out", str(report)], env)
            data = json.loads(report.read_text(encoding="utf-8"))
            runs[name] = (seconds, data["embedded_texts"], data["timings"].get("embedding", 0.0),
                          data["means"]["doc"][f"recall@{args.top_k}"])

    (cold, cold_n, cold_emb, cold_recall), (warm, warm_n, warm_emb, warm_recall) = runs["cold"], runs["warm"]
    print()
    print(f"corpus: {args.corpus}   model: {args.model}")
    print(f"cold eval (empty cache): {cold:8.2f} s wall, {cold_n:5d} texts embedded ({cold_emb:.2f} s embedding)")
    print(f"warm eval (same cache):  {warm:8.2f} s wall, {warm_n:5d} texts embedded ({warm_emb:.2f} s embedding)")
    print(f"warm / cold = {warm / cold:.3f}  (cold is {cold / warm:.1f}x slower)")
    print(f"doc Recall@{args.top_k}: cold {cold_recall:.4f}, warm {warm_recall:.4f}")
    if warm_n != 0 or cold_recall != warm_recall:
        sys.exit("FAILED: the warm run embedded texts or changed the numbers")


if __name__ == "__main__":
    main()
