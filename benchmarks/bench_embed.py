"""How fast does each local embedder embed a real corpus cold, what does it cost in retrieval quality, and what do
fusion and reranking add on top?

1. Models: every model embeds all HowToCook chunks (chunk size 300) and the file-name questions with an empty
   cache, in this one process, through the same `evaluate()` a cold `ragretrieval eval` runs; printed per model:
   texts embedded, embedding seconds, texts/s, the speed-up against the named baseline (fp32 m3e-small), the cold
   and warm (same cache: must embed nothing) evaluation times, and the document-level hit@1, hit@5, recall@5 and
   MRR@10 of the dense retrieval.
2. Fused and reranked rows, on each model's warm cache: ``hybrid`` (BM25 + the model, rrf) and BM25 reranked by
   ``embed:<model>`` (top 50); printed: the whole evaluation's time, the time of the fusion or rerank stage (the
   extra time over the parts, the embeddings being cached), and the same metrics.
3. Cold command lines (issue P's done-when): ``ragretrieval eval --model m3e-small`` and ``--model m3e-small@int8``,
   each a fresh process with an empty cache, timed wall to wall in the same run of the benchmark; it checks that
   int8 takes at most 1/2.5 of fp32's time with document recall@5 within 0.01.

    python benchmarks/bench_embed.py                                   # m3e-small, m3e-small@int8, e5-small-q4
    python benchmarks/bench_embed.py --corpus datasets/demo/dishes     # a quick smoke run
    python benchmarks/bench_embed.py --model e5-small-q4 --no-cold-cli

With ``--device`` (``cpu``, ``cuda``) it measures the embedding stage itself instead, on the same texts (HowToCook
chunks of 300 characters, then the file-name questions; ``--texts N`` keeps the first N) with a model of ``--shape``
(random weights of m3e-small's or BERT-base's shape, made offline with transformers; ``--model-path`` for a real
folder), in one process:

4. Stage against plain ``encode``: the project's stage (``embed_cached`` into an empty cache: hashing, batching by
   length, cache writes in the writer thread) against sentence-transformers ``encode`` of the same texts, at the same
   dtype and texts per pass, then at the project's defaults (dtype and batch ``auto``) against plain ``encode`` at its
   best setting (on a GPU float16/bfloat16 at 256 texts a pass; on a CPU float32 at the fastest of 8, 32 and 256);
   printed: texts/s of each and the ratio (goal >= 0.9).
5. ``--precision``: document recall@5 and MRR@10 of m3e-small (the real model) at float32 and at bfloat16 (CPU) or
   float16 (GPU) on the corpus, their differences (goal within 0.005) and the paired t-test's p-value.

    python benchmarks/bench_embed.py --device cuda --shape bert-base                 # on a GPU machine
    python benchmarks/bench_embed.py --device cpu --shape m3e-small --texts 2000
    python benchmarks/bench_embed.py --device cpu --precision
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

from ragretrieval.data.corpus import load_corpus
from ragretrieval.data.dataset import Dataset, Manifest
from ragretrieval.data.filename_questions import filename_questions
from ragretrieval.embedders import EmbeddingCache
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig

BASELINE = "m3e-small"
LOCAL_MODELS = (BASELINE, f"{BASELINE}@int8", "e5-small-q4")
HOWTOCOOK = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "howtocook"
CLI = [sys.executable, "-c", "from ragretrieval.cli import main; main()"]
RERANK_DEPTH = 50


def dataset_from(folder: Path) -> Dataset:
    corpus = load_corpus(folder)
    questions = tuple(filename_questions(corpus.documents, "如何做{name}？"))
    manifest = Manifest(corpus_fingerprint=corpus.fingerprint, n_documents=len(corpus.documents),
                        n_questions=len(questions))
    return Dataset(folder, tuple(corpus.documents), questions, manifest)


def metrics(report) -> dict:
    means = report.means["doc"]
    return {"hit@1": means["hit_rate@1"], "hit@5": means["hit_rate@5"], "recall@5": means["recall@5"],
            "mrr@10": means["mrr@10"]}


def timed(dataset: Dataset, config: EvalConfig, cache_dir: Path):
    started = time.perf_counter()
    report = evaluate(dataset, config, cache=EmbeddingCache(cache_dir), progress=False)
    return report, time.perf_counter() - started


def run_model(dataset: Dataset, model: str, cache_dir: Path) -> tuple[dict, list[dict]]:
    """The model's cold and warm rows, then the fused and reranked rows on its warm cache."""
    config = EvalConfig(retriever="dense", model=model, chunk_size=300, ks=[1, 5, 10], granularity="doc")
    cold, cold_total = timed(dataset, config, cache_dir)
    warm, warm_total = timed(dataset, config, cache_dir)
    row = {"model": model, "texts": cold.embedded_texts, "embedding": cold.timings["embedding"], "total": cold_total,
           "warm_total": warm_total, "warm_texts": warm.embedded_texts, **metrics(cold)}
    composite = []
    for label, stage, settings in (
            (f"hybrid: bm25 + {model} (rrf)", "fusion", dict(retriever="hybrid", model=model)),
            (f"bm25 reranked by embed:{model} (top {RERANK_DEPTH})", "rerank",
             dict(retriever="bm25", rerank={"name": f"embed:{model}", "depth": RERANK_DEPTH}))):
        report, total = timed(dataset, EvalConfig(**settings, chunk_size=300, ks=[1, 5, 10], granularity="doc"),
                              cache_dir)
        composite.append({"row": label, "total": total, "stage": stage, "extra": report.timings[stage],
                          "texts": report.embedded_texts, **metrics(report)})
    return row, composite


def cold_cli(corpus: Path) -> dict:
    """Wall time and document recall@5 of a cold `ragretrieval eval` of fp32 and int8 m3e-small, fresh caches."""
    found = {}
    with tempfile.TemporaryDirectory(prefix="ragretrieval-bench-embed-") as tmp:
        tmp = Path(tmp)
        base_env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        subprocess.run([*CLI, "build-dataset", str(corpus), "--out", str(tmp / "dataset")], env=base_env, check=True,
                       stdout=subprocess.DEVNULL)
        for model in (BASELINE, f"{BASELINE}@int8"):
            env = {**base_env, "RAGRETRIEVAL_CACHE_DIR": str(tmp / f"cache-{model}")}
            out = tmp / f"{model}.json"
            started = time.perf_counter()
            subprocess.run([*CLI, "eval", "--dataset", str(tmp / "dataset"), "--model", model, "--no-progress",
                            "--no-save", "--granularity", "doc", "--out", str(out)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            report = json.loads(out.read_text(encoding="utf-8"))
            found[model] = (time.perf_counter() - started, report["means"]["doc"]["recall@5"])
    return found


def stage_texts(dataset: Dataset, limit: int | None) -> list[str]:
    """Distinct chunk texts (chunk size 300) then the questions, as a cold `eval` embeds them."""
    from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus

    chunks = [chunk.text for chunk in chunk_corpus(dataset.documents, ChunkPolicy(size=300))]
    texts = list(dict.fromkeys(chunks + [question.text for question in dataset.questions]))
    return texts[:limit] if limit else texts


def plain_encode(model, texts: list[str], batch_size: int) -> float:
    """Seconds of sentence-transformers `encode` over `texts` (length-sorted inside encode, as it always is)."""
    started = time.perf_counter()
    model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                 show_progress_bar=False)
    _synchronize(model.device)
    return time.perf_counter() - started


def _synchronize(device) -> None:
    if str(device).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def project_stage(folder: Path, texts: list[str], device: str, dtype: str, batch_size: int | None) -> tuple:
    """Seconds of the project's embedding stage into an empty cache, the embedder (loaded and warmed up first)."""
    from ragretrieval.embedders import embed_cached, get_embedder

    embedder = get_embedder(str(folder), settings={"dtype": dtype, "batch_size": batch_size or "auto"},
                            device=device)
    embedder.embed(texts[:16])  # load and warm up, as encode's model is before it is timed
    with tempfile.TemporaryDirectory(prefix="ragretrieval-bench-stage-") as cache_dir:
        started = time.perf_counter()
        embed_cached(embedder, texts, EmbeddingCache(cache_dir), embedder.preferred_batch, progress=False)
        _synchronize(device)
        return time.perf_counter() - started, embedder


def warm_model(folder: Path, device: str, dtype: str, texts: list[str], batch_size: int):
    """A plain sentence-transformers model in `dtype` on `device`, loaded and warmed up as the project's is."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device=device)
    if dtype != "float32":
        model = model.to(dtype=getattr(torch, dtype))
    model.encode(texts[:16], batch_size=batch_size)
    return model


def stage_against_encode(args, dataset: Dataset) -> None:
    from ragretrieval.testing.random_models import make_random_model

    texts = stage_texts(dataset, args.texts)
    with tempfile.TemporaryDirectory(prefix="ragretrieval-bench-model-") as made:
        folder = args.model_path or make_random_model(Path(made) / args.shape, args.shape)
        seconds, embedder = project_stage(folder, texts, args.device, "auto", None)
        ran = embedder.ran()
        print(f"{len(texts)} texts, device {args.device}, model {args.model_path or args.shape + ' (random weights)'}; "
              f"project defaults resolved to dtype {ran['dtype']}, {ran['batch_size']} texts per pass, "
              f"{embedder.preferred_batch} per cache batch")
        rows = [("project stage, defaults (auto)", seconds)]
        same, _ = project_stage(folder, texts, args.device, ran["dtype"], ran["batch_size"])
        rows.append((f"project stage, {ran['dtype']} at {ran['batch_size']} (again)", same))
        equal = plain_encode(warm_model(folder, args.device, ran["dtype"], texts, ran["batch_size"]), texts,
                             ran["batch_size"])
        rows.append((f"plain encode, {ran['dtype']} at {ran['batch_size']}", equal))
        candidates = ([("float16", 256), ("bfloat16", 256)] if args.device.startswith("cuda")
                      else [("float32", 8), ("float32", 32), ("float32", 256)])
        best = None
        for dtype, batch in candidates:
            took = plain_encode(warm_model(folder, args.device, dtype, texts, batch), texts, batch)
            rows.append((f"plain encode, {dtype} at {batch}", took))
            best = min(best or (took, dtype, batch), (took, dtype, batch))
    print("\n| path | seconds | texts/s |")
    print("|---|---|---|")
    for label, took in rows:
        print(f"| {label} | {took:.2f} | {len(texts) / took:.1f} |")
    print(f"\nstage / encode at equal settings: {equal / same:.3f} (goal >= 0.9)")
    print(f"stage defaults / encode's best ({best[1]} at {best[2]}): {best[0] / seconds:.3f} (goal >= 0.9)")


def precision_quality(dataset: Dataset, device: str) -> None:
    from ragretrieval.analysis.compare import report_values
    from ragretrieval.analysis.stats import paired_stats

    low = "float16" if device.startswith("cuda") else "bfloat16"
    reports = {}
    for dtype in ("float32", low):
        config = EvalConfig(retriever="dense", model=BASELINE, chunk_size=300, ks=[1, 5, 10], granularity="doc",
                            embed={"dtype": dtype})
        with tempfile.TemporaryDirectory() as cache_dir:
            reports[dtype], took = timed(dataset, config, Path(cache_dir))
        print(f"  {BASELINE} {dtype}: {took:.1f} s", flush=True)
    print(f"\n| metric (doc) | float32 | {low} | difference | paired t p |")
    print("|---|---|---|---|---|")
    for metric in ("recall@5", "mrr@10"):
        a, b = (report_values(reports[d], metric, "doc") for d in ("float32", low))
        stats = paired_stats(a, b, "t")
        print(f"| {metric} | {stats.mean_a:.4f} | {stats.mean_b:.4f} | {stats.diff:+.4f} "
              f"({'within' if abs(stats.diff) <= 0.005 else 'NOT within'} 0.005) | {stats.p:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HOWTOCOOK / "dishes")
    parser.add_argument("--model", action="append", help=f"repeatable; default: {', '.join(LOCAL_MODELS)}")
    parser.add_argument("--no-cold-cli", action="store_true", help="skip part 3 (cold command lines, fp32 vs int8)")
    parser.add_argument("--device", help="measure the embedding stage against plain encode on this device (part 4)")
    parser.add_argument("--shape", default="m3e-small", choices=("m3e-small", "bert-base"),
                        help="random-weight model shape of part 4")
    parser.add_argument("--model-path", type=Path, help="a sentence-transformers folder for part 4 instead")
    parser.add_argument("--texts", type=int, help="part 4 embeds only the first N texts")
    parser.add_argument("--precision", action="store_true", help="part 5: float32 against 16-bit m3e-small")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"{args.corpus}: corpus folder not found (pass --corpus DIR)")
    dataset = dataset_from(args.corpus)
    if args.device or args.precision:
        print(f"{args.corpus}: {len(dataset.documents)} documents; load average {os.getloadavg()[0]:.2f} on "
              f"{os.cpu_count()} CPUs")
        if args.device:
            stage_against_encode(args, dataset)
        if args.precision:
            precision_quality(dataset, args.device or "cpu")
        return
    print(f"{args.corpus}: {len(dataset.documents)} documents, {len(dataset.questions)} questions; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rows, composite = [], []
    for model in args.model or LOCAL_MODELS:
        with tempfile.TemporaryDirectory() as cache_dir:
            row, more = run_model(dataset, model, Path(cache_dir))
        rows.append(row)
        composite += more
        print(f"  {model}: {row['embedding']:.1f}s embedding", flush=True)

    base = next((r for r in rows if r["model"] == BASELINE), rows[0])
    print(f"\n| model | texts | embedding s | texts/s | speed-up vs {base['model']} | cold eval s | warm eval s "
          "(texts embedded) | hit@1 | hit@5 | recall@5 | MRR@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['texts']} | {r['embedding']:.1f} | {r['texts'] / r['embedding']:.1f} | "
              f"{base['embedding'] / r['embedding']:.2f}x | {r['total']:.1f} | {r['warm_total']:.2f} "
              f"({r['warm_texts']}) | {r['hit@1']:.3f} | {r['hit@5']:.3f} | {r['recall@5']:.3f} | "
              f"{r['mrr@10']:.3f} |")
    print("\n| fused / reranked (warm cache) | eval s | extra s (stage) | hit@1 | hit@5 | recall@5 | MRR@10 |")
    print("|---|---|---|---|---|---|---|")
    for r in composite:
        print(f"| {r['row']} | {r['total']:.2f} | {r['extra']:.2f} ({r['stage']}) | {r['hit@1']:.3f} | "
              f"{r['hit@5']:.3f} | {r['recall@5']:.3f} | {r['mrr@10']:.3f} |")

    if args.no_cold_cli:
        return
    found = cold_cli(args.corpus)
    (fp32, fp32_recall), (int8, int8_recall) = found[BASELINE], found[f"{BASELINE}@int8"]
    print(f"\ncold `ragretrieval eval` (fresh process, empty cache; load average {os.getloadavg()[0]:.2f}):")
    print(f"  {BASELINE}: {fp32:.1f} s, recall@5 {fp32_recall:.4f}")
    print(f"  {BASELINE}@int8: {int8:.1f} s, recall@5 {int8_recall:.4f}")
    fast, close = int8 <= fp32 / 2.5, abs(int8_recall - fp32_recall) <= 0.01
    print(f"  int8 / fp32 = {int8 / fp32:.2f} (target <= 0.40: {'met' if fast else 'NOT met'}); "
          f"recall@5 difference {int8_recall - fp32_recall:+.4f} (target within 0.01: {'met' if close else 'NOT met'})")


if __name__ == "__main__":
    main()
