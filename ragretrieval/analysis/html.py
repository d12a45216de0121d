"""``ragretrieval report``: one self-contained HTML page about one or more runs (docs/compare.md, "The HTML report").

Self-contained means viewable offline: inline CSS, SVG plots drawn here, no script, no external URL. Every piece of
user text (questions, titles, ids, snippets, configuration values) goes through `esc`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .. import __version__
from ..data.chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ..data.corpus import Document, corpus_fingerprint
from ..data.dataset import CORPUS_FILE, DatasetError, DocumentRecord, read_jsonl
from ..errors import MissingInputError
from ..evaluation.report import EvalReport
from ..io.atomic import write_text_atomic
from .answer_html import answer_sections
from .compare import ComparedRun, CompareError, aligned, compare, report_values
from .diagnostics import confusable_pairs, report_baseline, saturation_warnings
from .frontier import frontier_section
from .html_parts import comparison_table, esc, fmt, histogram
from .settings import PAIRED

SNIPPET_CHARS = 120
PLOT_FAMILIES = ("recall", "ndcg", "mrr", "precision")
SUMMARY_FAMILIES = ("recall", "precision", "hit_rate", "mrr", "ndcg", "map")
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
MAX_CHANGED = 50  # questions listed per direction and pair
CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;
vertical-align:top}th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.better{color:#176b2c;font-weight:bold}.worse{color:#b00020;font-weight:bold}.rel{background:#e5f5e0}
.warn{background:#fff4ce;border-left:4px solid #e0a800;padding:.4em .8em;margin:.4em 0}
.note{color:#666;font-size:.9em}.plots{display:flex;flex-wrap:wrap;gap:1em}ol{margin:0;padding-left:1.4em}
.snippet{color:#555;font-size:.85em;display:block}code{font-size:.9em}svg text{font-size:11px}
"""


class Lookup:
    """Titles and chunk snippets from the dataset folder a report names, if it is still there and unchanged."""

    def __init__(self, report: EvalReport, cache: dict):
        self.titles: dict[str, str] = {}
        self.snippets: dict[str, str] = {}
        self.note: str | None = None
        path = Path(report.dataset.path)
        documents = self._documents(path, cache)
        if documents is None:
            self.note = f"dataset folder {path} not found or unreadable: documents are shown by id only"
            return
        if corpus_fingerprint(documents) != report.dataset.corpus_fingerprint:
            self.note = f"the corpus in {path} changed since the run: documents are shown by id only"
            return
        self.titles = {d.id: d.title for d in documents}
        chunks = chunk_corpus(documents, ChunkPolicy(report.config.chunk_size, report.config.chunk_overlap))
        if chunks_fingerprint(chunks) == report.dataset.chunks_fingerprint:
            self.snippets = {c.chunk_id: c.text[:SNIPPET_CHARS] for c in chunks}

    @staticmethod
    def _documents(path: Path, cache: dict):
        """The corpus of a dataset folder, read once per report however many runs share it."""
        if path not in cache:
            try:
                records = read_jsonl(path / CORPUS_FILE, DocumentRecord)
                cache[path] = tuple(Document(r.id, r.title, r.text) for r in records)
            except (DatasetError, MissingInputError, OSError):
                cache[path] = None
        return cache[path]

    def title(self, doc_id: str) -> str:
        title = self.titles.get(doc_id)
        return f"{esc(title)} <code>{esc(doc_id)}</code>" if title else f"<code>{esc(doc_id)}</code>"


# ---------------------------------------------------------------------------------------------------------- plots
def line_chart(title: str, xs: list[int], series: list[tuple[str, dict[int, float]]]) -> str:
    """Metric (0..1) against k, one line per run; each point has a tooltip."""
    width, height, left, right, top, bottom = 340, 220, 40, 10, 24, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    x_of = {k: left + (plot_w * (i + 0.5) / len(xs)) for i, k in enumerate(xs)}

    def y(v):
        return top + plot_h * (1 - v)

    parts = [f'<svg class="chart" width="{width}" height="{height}" role="img" aria-label="{esc(title)}">',
             f'<text x="{width / 2}" y="14" text-anchor="middle" font-weight="bold">{esc(title)}</text>']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for k, x in x_of.items():
        parts.append(f'<text x="{x:.1f}" y="{height - 12}" text-anchor="middle">{k}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 1}" text-anchor="middle">k</text>')
    for i, (label, values) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        points = [(x_of[k], y(v)) for k, v in sorted(values.items()) if k in x_of]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="'
                     + " ".join(f"{px:.1f},{py:.1f}" for px, py in points) + '"/>')
        for (k, v), (px, py) in zip(sorted(values.items()), points):
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}">'
                         f'<title>{esc(label)}: {esc(title)} at k={k} = {v:.4f}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------------------------------------------- sections
def configuration(runs: list[ComparedRun]) -> str:
    rows = {
        "source": lambda r, rep: r.source, "created": lambda r, rep: rep.created_at,
        "retriever": lambda r, rep: rep.config.retriever, "model": lambda r, rep: rep.config.model or "–",
        "embedder": lambda r, rep: rep.embedder_identity or "–", "store": lambda r, rep: rep.config.store,
        "chunk size / overlap": lambda r, rep: f"{rep.config.chunk_size} / {rep.config.chunk_overlap}",
        "cutoffs k": lambda r, rep: ", ".join(map(str, rep.config.ks)),
        "dataset": lambda r, rep: rep.dataset.path,
        "corpus fingerprint": lambda r, rep: rep.dataset.corpus_fingerprint[:19],
        "documents / chunks / questions": lambda r, rep: (f"{rep.dataset.n_documents} / {rep.dataset.n_chunks} / "
                                                          f"{rep.dataset.n_questions}"),
        "time": lambda r, rep: ", ".join(f"{k} {v:.2f}s" for k, v in rep.timings.items()),
        "ragretrieval": lambda r, rep: rep.ragretrieval_version,
    }
    head = "".join(f"<th>{esc(r.label)}</th>" for r in runs)
    body = "".join(f"<tr><th>{esc(name)}</th>" + "".join(f"<td>{esc(get(r, r.report))}</td>" for r in runs)
                   + "</tr>" for name, get in rows.items())
    return f'<h2 id="configuration">Configuration</h2><table class="config"><tr><th></th>{head}</tr>{body}</table>'


def summary(runs: list[ComparedRun], granularity: str) -> str:
    ks = sorted({k for r in runs for k in r.report.config.ks})
    columns = [f"{family}@{k}" for family in SUMMARY_FAMILIES for k in ks]
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = ""
    for run in runs:
        means = run.report.means.get(granularity, {})
        body += (f'<tr class="run-row"><th>{esc(run.label)}</th>'
                 + "".join(f'<td class="num">{fmt(means.get(c))}</td>' for c in columns) + "</tr>")
    return (f'<h2 id="summary">Summary ({esc(granularity)} level, mean over questions)</h2>'
            f'<div style="overflow-x:auto"><table class="summary"><tr><th>run</th>{head}</tr>{body}</table></div>')


def plots(runs: list[ComparedRun], granularity: str, metric: str) -> str:
    ks = sorted({k for r in runs for k in r.report.config.ks})
    charts = []
    for family in PLOT_FAMILIES:
        series = [(r.label, {k: r.report.means[granularity][f"{family}@{k}"] for k in r.report.config.ks
                             if f"{family}@{k}" in r.report.means.get(granularity, {})}) for r in runs]
        charts.append(line_chart(f"{family}@k", ks, series))
    legend = " ".join(f'<span style="color:{COLOURS[i % len(COLOURS)]}">■</span> {esc(r.label)}'
                      for i, r in enumerate(runs))
    out = (f'<h2 id="plots">Metrics against k ({esc(granularity)} level)</h2><p>{legend}</p>'
           f'<div class="plots">{"".join(charts)}</div>')
    if len(runs) > 1:
        order = runs[0].question_ids
        base = aligned(runs[0], metric, granularity, order)
        hists = [f"<figure>{histogram(f'{metric}: B − A', aligned(r, metric, granularity, order) - base)}"
                 f"<figcaption>B = {esc(r.label)}, A = {esc(runs[0].label)}</figcaption></figure>" for r in runs[1:]]
        out += f'<h3>Per-question differences of {esc(metric)}</h3><div class="plots">{"".join(hists)}</div>'
    return out


def ranked_list(report: EvalReport, question, k: int, granularity: str, lookup: Lookup) -> str:
    """The top-k documents (each with the snippet of its best chunk) or chunks; relevant ones highlighted."""
    items = []
    if granularity == "doc":
        best_chunk = {}
        for chunk in question.retrieved_chunks:
            best_chunk.setdefault(chunk.parent_id, chunk.chunk_id)
        entries = [(doc, best_chunk.get(doc)) for doc in question.retrieved_documents[:k]]
    else:
        entries = [(c.parent_id, c.chunk_id) for c in question.retrieved_chunks[:k]]
    for doc, chunk in entries:
        snippet = lookup.snippets.get(chunk) if chunk else None
        cls = ' class="rel"' if doc in question.relevant else ""
        items.append(f"<li{cls}>{lookup.title(doc)}"
                     + (f'<span class="snippet">{esc(snippet)}</span>' if snippet else "") + "</li>")
    return f"<ol>{''.join(items)}</ol>"


def changes(runs: list[ComparedRun], granularity: str, k: int, lookups: dict[str, Lookup]) -> str:
    """Questions that pass (a relevant item in the top k) in one run and fail in the other, per pair."""
    metric = f"hit_rate@{k}"
    base = runs[0]
    order = base.question_ids
    out = [f'<h2 id="changes">Questions that newly fail / newly pass (hit in the top {k}, {esc(granularity)} level)'
           "</h2>"]
    a_questions = {q.id: q for q in base.report.questions}
    for run in runs[1:]:
        a = aligned(base, metric, granularity, order)
        b = aligned(run, metric, granularity, order)
        b_questions = {q.id: q for q in run.report.questions}
        for title, mask, cls in (("newly fail", (a > 0) & (b == 0), "fail"), ("newly pass", (a == 0) & (b > 0),
                                                                              "pass")):
            ids = [order[i] for i in np.flatnonzero(mask)]
            out.append(f"<h3>{esc(run.label)}: {len(ids)} question(s) {title}</h3>")
            if not ids:
                continue
            rows = ""
            for qid in ids[:MAX_CHANGED]:
                qa, qb = a_questions[qid], b_questions[qid]
                relevant = "<br>".join(lookups[base.label].title(d) for d in qa.relevant)
                rows += (f'<tr class="changed {cls}"><td>{esc(qa.text)}<br><code>{esc(qid)}</code></td>'
                         f"<td>{relevant}</td><td>{ranked_list(base.report, qa, k, granularity, lookups[base.label])}"
                         f"</td><td>{ranked_list(run.report, qb, k, granularity, lookups[run.label])}</td></tr>")
            more = f'<p class="note">{len(ids) - MAX_CHANGED} more not shown</p>' if len(ids) > MAX_CHANGED else ""
            out.append(f"<table><tr><th>question</th><th>relevant</th><th>top {k}: {esc(base.label)}</th>"
                       f"<th>top {k}: {esc(run.label)}</th></tr>{rows}</table>{more}")
    return "".join(out)


def diagnostics(runs: list[ComparedRun], lookups: dict[str, Lookup]) -> str:
    out = ['<h2 id="diagnostics">Diagnostics</h2>']
    warnings = [w for r in runs for w in saturation_warnings(r.report, r.label)]
    out += [f'<div class="warn saturation">{esc(w)}</div>' for w in warnings]
    base = runs[0].report
    baseline = report_baseline(base)
    head = "".join(f"<th>{esc(r.label)}</th>" for r in runs)
    rows = "".join(f"<tr><th>{esc(name)}</th><td class='num'>{fmt(value)}</td>" + "".join(
        f'<td class="num">{fmt(r.report.means.get("doc", {}).get(name))}</td>' for r in runs) + "</tr>"
        for name, value in baseline.items())
    out.append(f"<h3>Random-retriever baseline (document level)</h3><p class='note'>Expected values of a uniformly "
               f"random ranking of the {base.dataset.n_documents} documents, computed analytically "
               f"(hypergeometric), averaged over the questions of {esc(runs[0].label)}.</p>"
               f'<table class="baseline"><tr><th>metric</th><th>random ranking</th>{head}</tr>{rows}</table>')
    pairs = confusable_pairs(r.report for r in runs)
    lookup = lookups[runs[0].label]
    rows = "".join(f'<tr class="confusable"><td>{lookup.title(rel)}</td><td>{lookup.title(wrong)}</td>'
                   f'<td class="num">{n}</td></tr>' for rel, wrong, n in pairs)
    out.append("<h3>Confusable pairs</h3><p class='note'>Documents retrieved at rank 1 in place of a relevant one, "
               "counted over every question of every run.</p>"
               + (f"<table><tr><th>relevant document</th><th>retrieved at rank 1 instead</th><th>times</th></tr>"
                  f"{rows}</table>" if pairs else "<p>None: every rank-1 document was relevant.</p>"))
    return "".join(out)


def render_html(runs: list[ComparedRun], granularity: str = "doc", metrics=None, test: str = PAIRED.test,
                correction: str = PAIRED.correction, alpha: float = PAIRED.alpha, k: int | None = None,
                calibration=None, classes=None, **compare_options) -> str:
    """The page; `calibration` (analysis/calibrated_runs.py, `CalibratedRuns`) adds the calibrated means after the
    summary; `classes` (a `ClassComparison`: answers/failures.py `compare_classes`) answer runs' failure classes."""
    missing = [r.label for r in runs if r.report is None]
    if missing:
        raise CompareError(f"the HTML report needs evaluation reports (history runs or eval --out files); "
                           f"{', '.join(missing)} is a TREC run")
    kinds = {r.report.kind for r in runs}
    if len(kinds) > 1:
        raise CompareError("the HTML report shows runs of one kind: retrieval runs (eval) or answer runs (answer); "
                           "compare a retrieval run with an answer run with `ragretrieval runs compare` on a metric "
                           "both have")
    if kinds == {"answer"}:
        if not metrics:
            raise CompareError("give the answer metrics to compare with -m (e.g. -m score)")
        sections = answer_sections(runs, list(metrics), test, correction, alpha, classes, **compare_options)
        if calibration is not None:
            sections.insert(3, calibration.html())  # after the style, the configuration and the summary
        return page(runs, sections, [])
    k = k or runs[0].report.config.top_k
    metrics = list(metrics or (f"ndcg@{k}", f"recall@{k}", f"mrr@{k}"))
    for run in runs:  # fail early, with the error listing what is available
        report_values(run.report, metrics[0], granularity, run.label)
    corpora: dict = {}
    lookups = {r.label: Lookup(r.report, corpora) for r in runs}
    notes = sorted({lk.note for lk in lookups.values() if lk.note})
    sections = [configuration(runs), summary(runs, granularity)] + ([calibration.html()] if calibration else [])
    if len(runs) > 1:
        sections.append(comparison_table(compare(runs, metrics, test, correction, alpha, granularity,
                                                 **compare_options)))
    sections.append(plots(runs, granularity, metrics[0]))
    sections.append(frontier_section(runs, metrics[0], granularity, alpha))
    if len(runs) > 1:
        sections.append(changes(runs, granularity, k, lookups))
    sections.append(diagnostics(runs, lookups))
    return page(runs, sections, notes)


def page(runs: list[ComparedRun], sections: list[str], notes: list[str]) -> str:
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    title = "ragretrieval report: " + " vs ".join(r.label for r in runs)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
            f'<meta name="viewport" content="width=device-width"><title>{esc(title)}</title><style>{CSS}</style>'
            f"</head><body><h1>{esc(title)}</h1><p class='note'>Generated {stamp} by ragretrieval {__version__}."
            "</p>" + "".join(f'<p class="note">{esc(n)}</p>' for n in notes) + "".join(sections)
            + "</body></html>\n")


def write_html_report(runs: list[ComparedRun], path, **options) -> None:
    """Render and write atomically: a reader never sees half a page."""
    write_text_atomic(path, render_html(runs, **options))
