"""`make planted`: plant one known one-token bug at a time in the modules whose numbers everything else rests on, run
the tests that `make test` runs for that module (its group in groups.toml), and check that they fail.

A quicker, sharper check than `make mutation` for a change to the suite itself (tests moved, twins dropped, cases
shared): if a bug that the suite caught before now passes, the change lost something. Each file is restored from
memory whatever happens (Ctrl-C included), and the run is refused while a planted file has uncommitted changes.

    python tests/mutation/planted.py [NAME ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
GROUPS = tomllib.loads(Path(__file__).with_name("groups.toml").read_text(encoding="utf-8"))["groups"]

# name -> (group in groups.toml, file, the exact text, its one-token replacement, what the bug means)
PLANTS = {
    "rollup": ("rollup", "ragretrieval/retrieval/rollup.py", "(distinct_per_row(docs) < k)",
               "(distinct_per_row(docs) < k - 1)", "the roll-up stops one document short of k"),
    "chunking": ("chunking", "ragretrieval/data/chunking.py", "end - merged[-1][0] <= policy.size",
                 "end - merged[-1][0] < policy.size", "sections exactly the chunk size together are not merged"),
    "kernels": ("scoring", "ragretrieval/scoring/kernels.py", "self.relevant = labels >= rel_level",
                "self.relevant = labels > rel_level", "a label equal to the relevance level counts as not relevant"),
    "stats": ("stats", "ragretrieval/analysis/stats.py", "return mean / float(d.std(ddof=1))",
              "return mean / float(d.std(ddof=0))", "the paired t statistic uses the population deviation"),
}


def run_plant(name: str) -> bool:
    group, relative, text, bug, meaning = PLANTS[name]
    path = ROOT / relative
    original = path.read_text(encoding="utf-8")
    assert original.count(text) == 1, f"{relative}: the planted text {text!r} must occur exactly once"
    tests = GROUPS[group]["tests"]
    deselect = [f"--deselect={node}" for node in GROUPS[group].get("deselect", [])]
    try:
        path.write_text(original.replace(text, bug), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *deselect,
                               *tests], cwd=ROOT, capture_output=True, text=True)
    finally:
        path.write_text(original, encoding="utf-8")
    caught = done.returncode == 1
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"{name:9} {'caught' if caught else 'MISSED'}: {meaning} ({relative}) -> {last}")
    return caught


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(PLANTS))
    if unknown:
        print(f"unknown plant(s) {', '.join(unknown)}; known: {', '.join(PLANTS)}", file=sys.stderr)
        return 2
    changed = subprocess.run(["git", "status", "--porcelain", *(PLANTS[n][1] for n in names or PLANTS)], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
    if changed:
        print(f"uncommitted changes in a planted file; commit or stash them first:\n{changed}", file=sys.stderr)
        return 2
    results = [run_plant(name) for name in names or PLANTS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
