"""Peak memory of `import-dataset --format beir` on a large generated corpus, against holding the corpus once.

A BEIR folder of N generated documents (default 1,000,000 of about 400 characters: a 0.5 GB corpus.jsonl), 1,000
queries and their qrels is written to a temporary folder. Two fresh processes then run, one after the other, and each
reports its peak resident set size (``ru_maxrss``):

- baseline, "held once": reads corpus.jsonl into a list of `Document` objects (what any importer that builds the
  corpus in memory holds at least once), then exits;
- import: the real `import-dataset --format beir` CLI, which streams the corpus into the dataset folder; and the same
  process running ``--version`` only, to tell start-up (imports) from the import's own memory.

The ratio printed is import / held once; below 1 means the import holds less than one copy of the corpus.

    python benchmarks/bench_beir_import.py                  # 1,000,000 documents: a few minutes
    python benchmarks/bench_beir_import.py --documents 100000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("retrieval evaluation corpus question answer document chunk index ranking recall precision judge "
         "embedding lexical dense hybrid rerank fusion label grade split query model vector score metric").split()
PEAK = "import resource, sys; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
HELD_ONCE = f"""
import sys
from ragretrieval.data.corpus import Document
from ragretrieval.data.dataset import iter_numbered_jsonl
from ragretrieval.data.importers.beir import BeirDocument
held = [Document(d.id, d.title, d.text) for _, d in iter_numbered_jsonl(sys.argv[1], BeirDocument)]
print(len(held), file=sys.stderr)
{PEAK}
"""
IMPORT = f"""
import sys
from ragretrieval.cli import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    assert not done.code, done.code
{PEAK}
"""


def write_beir(folder: Path, n_documents: int, n_queries: int = 1000) -> int:
    rng = random.Random(7)
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n_documents):
            text = " ".join(rng.choices(WORDS, k=55))
            f.write(json.dumps({"_id": f"doc{i}", "title": f"Document {i}", "text": text, "metadata": {}}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f, \
            (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as q:
        q.write("query-id\tcorpus-id\tscore\n")
        for i in range(n_queries):
            f.write(json.dumps({"_id": f"q{i}", "text": " ".join(rng.choices(WORDS, k=6))}) + "\n")
            for doc in rng.sample(range(n_documents), 3):
                q.write(f"q{i}\tdoc{doc}\t{rng.choice((0, 1, 2))}\n")
    return (folder / "corpus.jsonl").stat().st_size


def peak_kib(code: str, *args: str) -> tuple[int, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)
    return int(done.stderr.strip().splitlines()[-1]), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragretrieval-bench-beir-") as tmp:
        folder = Path(tmp) / "beir"
        size = write_beir(folder, args.documents)
        floor, _ = peak_kib(IMPORT, "--version")  # the same process importing everything and doing nothing
        held, held_s = peak_kib(HELD_ONCE, str(folder / "corpus.jsonl"))
        streamed, import_s = peak_kib(IMPORT, "import-dataset", "--format", "beir", str(folder), "--out",
                                      str(Path(tmp) / "dataset"), "--no-progress")
    print(f"corpus.jsonl: {args.documents:,} documents, {size / 2**20:,.0f} MiB")
    print(f"held once (list of Documents): peak RSS {held / 1024:,.0f} MiB  ({held_s:.1f} s)")
    print(f"import-dataset --format beir:  peak RSS {streamed / 1024:,.0f} MiB  ({import_s:.1f} s)")
    print(f"the CLI process itself (imports only, --version): peak RSS {floor / 1024:,.0f} MiB")
    print(f"ratio import / held once: {streamed / held:.2f}; above the CLI's own start-up: "
          f"{(streamed - floor) / 1024:,.0f} MiB, {(streamed - floor) / held:.2f} of held once")


if __name__ == "__main__":
    main()
