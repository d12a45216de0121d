"""Quality against search latency for the cells of a sweep (or any runs with a search-timing pass): the section of
the HTML report (docs/stores.md, "The frontier").

Each run is a point: x its p95 search latency (one thread, retrieval/search_timing.py), y its mean of the report's
first metric. A point is Pareto-optimal when no other point is at least as fast and at least as good and better in one
of the two. The exact reference is the quality of exact search over the same vectors: an exact run among the runs (a
dense run without a store comparison: ``numpy``, ``faiss kind=flat``), else the exact means an ANN run carries
(retrieval/exact.py, document level). "Not significantly below exact" is the paired t-test of the run against the
exact search, question by question: not (p < alpha and the run's mean lower).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .html_parts import esc, fmt
from .settings import PAIRED
from .stats import paired_stats


@dataclass
class Point:
    label: str
    engine: str  # the store, or the retriever when it has none
    setting: str  # the store's options, or "-"
    p95_ms: float
    quality: float
    exact: bool  # exact search: the reference itself
    diff: float | None = None  # quality - exact quality (paired), None when there is no exact reference
    p: float | None = None
    pareto: bool = False

    def not_below(self, alpha: float) -> bool | None:
        if self.exact:
            return True
        if self.diff is None:
            return None
        return not (self.p is not None and self.p < alpha and self.diff < 0)


def _is_exact(report) -> bool:
    c = report.config
    return bool(c.model) and not c.rerank and c.retriever == "dense" and (report.exact is None
                                                                          or report.exact.exact_store)


def _exact_values(runs, metric: str, granularity: str):
    """(per-question exact values by question id, mean) from an exact run among `runs`, else None."""
    for run in runs:
        if _is_exact(run.report):
            values = run.per_question(metric, granularity)
            return dict(zip(run.question_ids, values.tolist())), float(np.mean(values))
    return None


def frontier_points(runs, metric: str, granularity: str) -> tuple[list[Point], float | None]:
    """The runs with a search timing as points, with their paired difference from exact; and the exact quality."""
    timed = [r for r in runs if getattr(r.report, "search", None) is not None]
    reference = _exact_values(timed, metric, granularity)
    points, exact_quality = [], reference[1] if reference else None
    for run in timed:
        report = run.report
        values = run.per_question(metric, granularity)
        options = " ".join(f"{k}={v}" for k, v in report.config.store_options.items()) if report.config.model else ""
        point = Point(run.label, report.config.store if report.config.model else report.config.retriever,
                      options or "-", report.search.search_latency_ms.p95, float(np.mean(values)),
                      _is_exact(report))
        exact = None
        if reference is not None:
            exact = np.array([reference[0].get(q, np.nan) for q in run.question_ids])
        elif report.exact is not None and granularity == "doc" and report.questions[0].exact_metrics:
            exact = np.array([q.exact_metrics.get(metric, np.nan) for q in report.questions])
            exact_quality = exact_quality if exact_quality is not None else report.exact.exact_means.get(metric)
        if exact is not None and not point.exact and not np.isnan(exact).any():
            stats = paired_stats(exact, values)
            point.diff, point.p = float(stats.diff), None if np.isnan(stats.p) else float(stats.p)
        points.append(point)
    for point in points:
        point.pareto = not any(o is not point and o.p95_ms <= point.p95_ms and o.quality >= point.quality
                               and (o.p95_ms < point.p95_ms or o.quality > point.quality) for o in points)
    return points, exact_quality


def frontier_chart(points: list[Point], exact_quality: float | None, metric: str) -> str:
    """An SVG scatter: p95 latency (log scale when it spans more than ten times) against quality."""
    width, height, left, right, top, bottom = 560, 320, 56, 16, 24, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [max(p.p95_ms, 1e-6) for p in points]
    lo, hi = min(xs), max(xs)
    log = hi / lo > 10
    qs = [p.quality for p in points] + ([exact_quality] if exact_quality is not None else [])
    q_lo, q_hi = min(qs), max(qs)
    pad = max(0.01, (q_hi - q_lo) * 0.1)
    q_lo, q_hi = max(0.0, q_lo - pad), min(1.0, q_hi + pad)

    def x(v):
        v = max(v, 1e-6)
        if hi == lo:
            return left + plot_w / 2
        share = (np.log(v / lo) / np.log(hi / lo)) if log else (v - lo) / (hi - lo)
        return left + plot_w * (0.05 + 0.9 * share)

    def y(v):
        return top + plot_h * (1 - (v - q_lo) / (q_hi - q_lo if q_hi > q_lo else 1))

    title = f"{metric} against p95 search latency"
    parts = [f'<svg class="frontier" width="{width}" height="{height}" role="img" aria-label="{esc(title)}">',
             f'<text x="{width / 2}" y="14" text-anchor="middle" font-weight="bold">{esc(title)}</text>',
             f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#999"/>',
             f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#999"/>',
             f'<text x="{left - 4}" y="{y(q_lo) + 4:.1f}" text-anchor="end">{q_lo:.3f}</text>',
             f'<text x="{left - 4}" y="{y(q_hi) + 4:.1f}" text-anchor="end">{q_hi:.3f}</text>',
             f'<text x="{x(lo):.1f}" y="{height - 22}" text-anchor="middle">{lo:.3g}</text>',
             f'<text x="{x(hi):.1f}" y="{height - 22}" text-anchor="middle">{hi:.3g}</text>',
             f'<text x="{width / 2}" y="{height - 4}" text-anchor="middle">p95 search latency, ms'
             f'{" (log scale)" if log else ""}</text>']
    if exact_quality is not None:
        parts.append(f'<line class="exact" x1="{left}" x2="{width - right}" y1="{y(exact_quality):.1f}" '
                     f'y2="{y(exact_quality):.1f}" stroke="#555" stroke-dasharray="5,4"/>'
                     f'<text x="{width - right}" y="{y(exact_quality) - 4:.1f}" text-anchor="end">exact '
                     f'{exact_quality:.4f}</text>')
    front = sorted((p for p in points if p.pareto), key=lambda p: p.p95_ms)
    if len(front) > 1:
        parts.append('<polyline fill="none" stroke="#2ca02c" stroke-width="1.5" points="'
                     + " ".join(f"{x(p.p95_ms):.1f},{y(p.quality):.1f}" for p in front) + '"/>')
    for p in points:
        colour = "#2ca02c" if p.pareto else "#1f77b4"
        shape = (f'<rect x="{x(p.p95_ms) - 4:.1f}" y="{y(p.quality) - 4:.1f}" width="8" height="8" fill="{colour}"'
                 if p.exact else f'<circle cx="{x(p.p95_ms):.1f}" cy="{y(p.quality):.1f}" r="4" fill="{colour}"')
        parts.append(f'{shape} class="{"pareto" if p.pareto else "point"}"><title>{esc(p.label)}: {metric} '
                     f'{p.quality:.4f}, p95 {p.p95_ms:.3f} ms{" (Pareto-optimal)" if p.pareto else ""}</title>'
                     f'</{"rect" if p.exact else "circle"}>')
    parts.append("</svg>")
    return "".join(parts)


def cheapest_table(points: list[Point], alpha: float, metric: str) -> str:
    """Per engine, the fastest setting (p95) whose quality is not significantly below exact."""
    rows = []
    for engine in sorted({p.engine for p in points}):
        fine = [p for p in points if p.engine == engine and p.not_below(alpha)]
        if not fine:
            known = any(p.engine == engine and p.not_below(alpha) is not None for p in points)
            rows.append(f"<tr><td>{esc(engine)}</td><td colspan='5'>"
                        f"{'every setting is significantly below exact' if known else 'no exact reference'}"
                        "</td></tr>")
            continue
        best = min(fine, key=lambda p: p.p95_ms)
        rows.append(f"<tr><td>{esc(engine)}</td><td>{esc(best.setting)}</td><td class='num'>{best.p95_ms:.3f}</td>"
                    f"<td class='num'>{best.quality:.4f}</td><td class='num'>"
                    f"{'exact' if best.exact else fmt(best.diff)}</td><td class='num'>"
                    f"{'-' if best.p is None else fmt(best.p)}</td></tr>")
    return (f"<table class='cheapest'><tr><th>engine</th><th>cheapest setting not significantly below exact</th>"
            f"<th>p95 ms</th><th>{esc(metric)}</th><th>vs exact</th><th>p</th></tr>{''.join(rows)}</table>")


def frontier_section(runs, metric: str, granularity: str, alpha: float = PAIRED.alpha) -> str:
    """The section, or "" when fewer than two runs have a search timing (runs made before it, answer runs)."""
    points, exact_quality = frontier_points(runs, metric, granularity)
    if len(points) < 2:
        return ""
    rows = "".join(
        f"<tr><td>{esc(p.label)}</td><td>{esc(p.engine)}</td><td>{esc(p.setting)}</td>"
        f"<td class='num'>{p.p95_ms:.3f}</td><td class='num'>{p.quality:.4f}</td>"
        f"<td class='num'>{'exact' if p.exact else fmt(p.diff)}</td>"
        f"<td class='num'>{'-' if p.p is None else fmt(p.p)}</td><td>{'yes' if p.pareto else ''}</td></tr>"
        for p in sorted(points, key=lambda p: p.p95_ms))
    return ("<h2>Quality against search latency</h2><p class='note'>Each run at its p95 search latency (one "
            "question at a time, one thread; what was timed is in each run's report) and its mean "
            f"{esc(metric)} ({esc(granularity)} level). Dashed line: exact search; green: Pareto-optimal "
            f"(no run is both faster and better); squares: exact runs. Paired t-test against exact, alpha {alpha}."
            f"</p>{frontier_chart(points, exact_quality, metric)}{cheapest_table(points, alpha, metric)}"
            "<table class='frontier'><tr><th>run</th><th>engine</th><th>setting</th><th>p95 ms</th>"
            f"<th>{esc(metric)}</th><th>vs exact</th><th>p</th><th>Pareto</th></tr>{rows}</table>")
