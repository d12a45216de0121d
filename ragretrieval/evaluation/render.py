"""The plain-text rendering of an evaluation report: the summary table and the per-question lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..work.limits import MIB

if TYPE_CHECKING:  # report.py imports this module to print itself
    from .report import EvalReport, QuestionResult

SUMMARY_COLUMNS = (("recall", "Recall"), ("precision", "Precision"), ("mrr", "MRR"), ("hit_rate", "Hit Rate"),
                   ("f1", "F1"), ("ndcg", "nDCG"))


def question_line(i: int, n: int, result: QuestionResult, granularity: str, k: int) -> str:
    values = result.metrics[granularity]
    return (f"[{i}/{n}] {result.text}... Recall={values[f'recall@{k}']:.2f}, "
            f"Precision={values[f'precision@{k}']:.2f}, MRR={values[f'mrr@{k}']:.2f}")


def summary_table(report: EvalReport) -> str:
    """Plain-text summary: one row per k, one block per granularity, then sizes and timings."""
    cfg, ds = report.config, report.dataset
    names = {"doc": "document", "chunk": "chunk"}
    lines = []
    for granularity, means in report.means.items():
        lines.append(f"{names[granularity]} level ({ds.n_questions} questions, {ds.n_documents} documents, "
                     f"{ds.n_chunks} chunks)")
        header = f"  {'k':>4}" + "".join(f"  {title + '@k':>12}" for _, title in SUMMARY_COLUMNS)
        lines.append(header)
        for k in cfg.ks:
            cells = "".join(f"  {means[f'{family}@{k}']:>12.4f}" for family, _ in SUMMARY_COLUMNS)
            lines.append(f"  {k:>4}{cells}")
        lines.append("")
    what = f"{cfg.retriever}" + (f" ({cfg.model}, {cfg.store})" if cfg.model else "")
    if cfg.rerank:
        what += f", reranked by {cfg.rerank['name']} (top {cfg.rerank['depth']})"
    lines.append(f"retriever: {what}; chunks: size {cfg.chunk_size}, overlap {cfg.chunk_overlap}")
    timing = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in report.timings.items())
    lines.append(f"time: {timing}; texts embedded: {report.embedded_texts}")
    lines.extend(search_lines(report))
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)


def _size(n: int | None) -> str:
    return "not told" if n is None else f"{n / MIB:.1f} MiB"


def search_lines(report: EvalReport) -> list[str]:
    """The search-timing pass and, for an ANN store, its distance from exact search (retrieval/search_timing.py)."""
    lines, search = [], report.search
    if search is not None:
        ms = search.search_latency_ms
        line = (f"search_latency_ms (1 thread, {search.sampled} questions): p50 {ms.p50:.3f}, p95 {ms.p95:.3f}, "
                f"p99 {ms.p99:.3f}; search_qps {search.search_qps:g}")
        if search.concurrent_latency_ms is not None:
            c = search.concurrent_latency_ms
            line += (f"; at {search.concurrency} threads: p50 {c.p50:.3f}, p95 {c.p95:.3f}, p99 {c.p99:.3f}, "
                     f"search_qps {search.concurrent_qps:g}")
        lines.append(line)
        build = "loaded" if search.index_build_seconds is None else f"{search.index_build_seconds:.2f}s"
        lines.append(f"index: build {build}, in memory {_size(search.index_memory_bytes)}, on disk "
                     f"{_size(search.index_disk_bytes)}; timed: {search.scope}")
    if report.exact is not None:
        overlap = ", ".join(f"{name} {value:.4f}" for name, value in report.exact.overlap.items())
        lines.append(f"against exact search: {overlap}"
                     + (" (the store searches exactly)" if report.exact.exact_store else ""))
        if report.exact.test is not None:
            lines.append(report.exact.test.sentence)
    return lines
