"""The pieces both HTML reports use (html.py for retrieval runs, answer_html.py for answer runs): escaping, number
formatting, the histogram of per-question differences and the paired-comparison table. They sit below both pages so
neither page imports the other's module to reach them."""

from __future__ import annotations

import html
import math

import numpy as np

from .compare import Comparison


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def fmt(x) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.4f}"


def histogram(title: str, values: np.ndarray, bins: int = 21) -> str:
    """Counts of per-question differences in `bins` equal bins over [-1, 1] (metrics lie in [0, 1]); an odd number
    of bins puts 0 in the middle of a grey centre bin, so ties are neither a win nor a loss."""
    width, height, left, top, bottom = 340, 200, 30, 24, 30
    plot_w, plot_h = width - left - 10, height - top - bottom
    half = 1 + 1 / (bins - 1)
    counts, edges = np.histogram(np.clip(values, -1, 1), bins=bins, range=(-half, half))
    peak = max(int(counts.max()), 1)
    bar = plot_w / bins
    parts = [f'<svg class="hist" width="{width}" height="{height}" role="img" aria-label="{esc(title)}">',
             f'<text x="{width / 2}" y="14" text-anchor="middle" font-weight="bold">{esc(title)}</text>']
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        colour = "#b00020" if edges[i + 1] <= 0 else ("#176b2c" if edges[i] >= 0 else "#888")
        parts.append(f'<rect x="{left + i * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 1:.1f}" '
                     f'height="{h:.1f}" fill="{colour}"><title>[{edges[i]:+.2f}, {edges[i + 1]:+.2f}): '
                     f'{count} question(s)</title></rect>')
    for tick in (-1, 0, 1):
        x = left + plot_w * (tick + half) / (2 * half)
        parts.append(f'<text x="{x:.1f}" y="{height - 14}" text-anchor="middle">{tick:+g}</text>')
    parts.append(f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{peak}</text>'
                 f'<text x="{width / 2}" y="{height - 1}" text-anchor="middle">B − A per question</text></svg>')
    return "".join(parts)


def comparison_table(result: Comparison) -> str:
    rows = ""
    for pair in result.pairs:
        for name, m in pair.metrics.items():
            s = m.stats
            verdict = ("worse" if m.regression else "better") if m.significant else ""
            rows += (f'<tr class="compare-row"><td>{esc(pair.b)}</td><td>{esc(name)}</td><td class="num">'
                     f'{fmt(s.mean_a)}</td><td class="num">{fmt(s.mean_b)}</td><td class="num {verdict}">'
                     f'{fmt(s.diff)}</td><td class="num">[{fmt(s.ci[0])}, {fmt(s.ci[1])}]</td><td class="num">'
                     f'{fmt(s.p)}</td><td class="num">{fmt(m.p_corrected)}</td><td class="num">'
                     f'{fmt(s.effect_size)}</td><td>{s.wins}/{s.ties}/{s.losses}</td><td class="{verdict}">'
                     f'{verdict}{" – " + esc(s.note) if s.note else ""}</td></tr>')
    return (f'<h2 id="comparison">Paired comparison against {esc(result.runs[0])}</h2>'
            f'<p class="note">{result.n_questions} questions, {esc(result.test)} test, {esc(result.correction)} '
            f"correction, alpha {result.alpha}; 95% CI by paired bootstrap ({result.n_resamples} resamples, seed "
            f"{result.seed}); effect size Cohen's d_z.</p><table><tr><th>run B</th><th>metric</th><th>A</th>"
            f"<th>B</th><th>B − A</th><th>95% CI</th><th>p</th><th>p corrected</th><th>d_z</th><th>W/T/L</th>"
            f"<th>verdict</th></tr>{rows}</table>")
