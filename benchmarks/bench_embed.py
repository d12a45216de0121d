"""How fast does each local embedder embed a real corpus cold, and what does it cost in retrieval quality?

Every model embeds all HowToCook chunks (chunk size 300) and the file-name questions with an empty cache, in this
one process, through the same `evaluate()` a cold `ragretrieval eval` runs; printed per model: embedding seconds,
texts/s, the speed-up against the named baseline (fp32 m3e-small), and the document-level hit@1, hit@5, recall@5 and
MRR@10 of the dense retrieval. A warm re-run (same cache) of each model is timed too: it must embed nothing.

    python benchmarks/bench_embed.py                                   # m3e-small, m3e-small@int8 (+ e5-small-q4)
    python benchmarks/bench_embed.py --corpus datasets/demo/dishes     # a quick smoke run
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from ragretrieval.data.corpus import load_corpus
from ragretrieval.data.dataset import Dataset, Manifest
from ragretrieval.data.filename_questions import filename_questions
from ragretrieval.embedders import EmbeddingCache
from ragretrieval.embedders.registry import families
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig

BASELINE = "m3e-small"
HOWTOCOOK = Path(__file__).resolve().parents[2] / "shared" / "data" / "howtocook"


def dataset_from(folder: Path) -> Dataset:
    corpus = load_corpus(folder)
    questions = tuple(filename_questions(corpus.documents, "如何做{name}？"))
    manifest = Manifest(corpus_fingerprint=corpus.fingerprint, n_documents=len(corpus.documents),
                        n_questions=len(questions))
    return Dataset(folder, tuple(corpus.documents), questions, manifest)


def default_models() -> list[str]:
    models = [BASELINE, f"{BASELINE}@int8"]
    if any(f.matches("e5-small-q4") for f in families()):
        models.append("e5-small-q4")
    return models


def run(dataset: Dataset, model: str, cache_dir: Path) -> dict:
    config = EvalConfig(retriever="dense", model=model, chunk_size=300, ks=[1, 5, 10], granularity="doc")
    started = time.perf_counter()
    cold = evaluate(dataset, config, cache=EmbeddingCache(cache_dir), progress=False)
    cold_total = time.perf_counter() - started
    started = time.perf_counter()
    warm = evaluate(dataset, config, cache=EmbeddingCache(cache_dir), progress=False)
    means = cold.means["doc"]
    return {"model": model, "texts": cold.embedded_texts, "embedding": cold.timings["embedding"],
            "total": cold_total, "warm_total": time.perf_counter() - started, "warm_texts": warm.embedded_texts,
            "hit@1": means["hit_rate@1"], "hit@5": means["hit_rate@5"], "recall@5": means["recall@5"],
            "mrr@10": means["mrr@10"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HOWTOCOOK / "dishes")
    parser.add_argument("--model", action="append", help="repeatable; default: the local models")
    args = parser.parse_args()
    dataset = dataset_from(args.corpus)
    print(f"{args.corpus}: {len(dataset.documents)} documents, {len(dataset.questions)} questions")
    rows = []
    for model in args.model or default_models():
        with tempfile.TemporaryDirectory() as cache_dir:
            rows.append(run(dataset, model, Path(cache_dir)))
        print(f"  {model}: {rows[-1]['embedding']:.1f}s", flush=True)
    base = next((r for r in rows if r["model"] == BASELINE), rows[0])
    print(f"\n| model | texts | embedding s | texts/s | speed-up vs {base['model']} | cold eval s | warm eval s "
          "(texts embedded) | hit@1 | hit@5 | recall@5 | MRR@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['texts']} | {r['embedding']:.1f} | {r['texts'] / r['embedding']:.0f} | "
              f"{base['embedding'] / r['embedding']:.2f}x | {r['total']:.1f} | {r['warm_total']:.2f} "
              f"({r['warm_texts']}) | {r['hit@1']:.3f} | {r['hit@5']:.3f} | {r['recall@5']:.3f} | "
              f"{r['mrr@10']:.3f} |")


if __name__ == "__main__":
    main()
