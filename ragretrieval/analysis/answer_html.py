"""The HTML report of answer runs (``ragretrieval report`` when every run is an answer run): configurations, the
answer metrics with their 95% CIs, the paired comparison, the per-question score differences, and one card per
question: the question, its reference answer, each run's answer with every check passed or failed and the documents
it cited. Self-contained and escaped like the retrieval report (html.py)."""

from __future__ import annotations

import numpy as np

from ..scoring.answer_metrics import describe, summary_names
from .class_transitions import ClassComparison, transition_lines
from .compare import ComparedRun, aligned, compare
from .html_parts import comparison_table, esc, fmt, histogram

MAX_CARDS = 200
SUMMARY = summary_names()  # scoring/answer_metrics.py: the answer metrics a summary shows, in order
NUGGET_MARKS = {"support": ("pass", "✓"), "partial_support": ("part", "◐"), "not_support": ("fail", "✗"),
                None: ("fail", "?")}
NOT_CHECKS = ("score", "correctness", "safety", "total")  # the question's aggregates, shown as its score
CARD_CSS = """
.card{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}.card h3{margin:.2em 0;font-size:1.05em}
.answers{display:flex;gap:1em;flex-wrap:wrap}.answer{flex:1;min-width:280px;background:#fafafa;padding:.5em}
.pass{color:#176b2c}.fail{color:#b00020}.part{color:#8a6d00}.truth{background:#eef6ff;padding:.3em .5em}
.answer pre{white-space:pre-wrap;font-family:inherit;margin:.3em 0}
.judge{border-top:1px dashed #ddd;margin:.3em 0;padding-top:.2em}.judge b{font-weight:600}
.nuggets{margin:.2em 0 .2em 1.2em;padding:0}.nuggets li{list-style:none}.nuggets .vital{font-weight:600}
"""


def _config_rows(run: ComparedRun) -> dict[str, str]:
    rep = run.report
    cfg = rep.config
    retrieval = cfg.retrieval
    return {"source": run.source, "created": rep.created_at, "generator": cfg.generator,
            "generator settings": ", ".join(f"{k}={v}" for k, v in cfg.generator_settings.items()) or "–",
            "contexts": cfg.contexts + (f" (top {cfg.context_k} of {retrieval.retriever}"
                                        f"{', ' + retrieval.model if retrieval.model else ''})" if retrieval else ""),
            "checks": ", ".join(f"{k}={v}" for k, v in cfg.checks.model_dump().items() if v is not None),
            "dataset": rep.dataset.path, "questions": str(len(rep.questions)), "failed": str(rep.failed),
            "tokens / cost": f"{int(rep.usage.get('total_tokens', 0))} / {rep.usage.get('cost', 0):.4f}",
            "judges": "; ".join(f"{name} ({s.get('model', '')})" for name, s in cfg.scorers.items()
                                if name != "checks") or "–",
            "judge tokens / cost": f"{int(rep.usage.get('judge_total_tokens', 0))} / "
                                   f"{rep.usage.get('judge_cost', 0):.4f}",
            "time": ", ".join(f"{k} {v:.2f}s" for k, v in rep.timings.items()),
            "ragretrieval": rep.ragretrieval_version}


def configuration(runs: list[ComparedRun]) -> str:
    rows = [_config_rows(r) for r in runs]
    head = "".join(f"<th>{esc(r.label)}</th>" for r in runs)
    body = "".join(f"<tr><th>{esc(name)}</th>" + "".join(f"<td>{esc(row[name])}</td>" for row in rows) + "</tr>"
                   for name in rows[0])
    return f'<h2 id="configuration">Configuration</h2><table class="config"><tr><th></th>{head}</tr>{body}</table>'


def summary(runs: list[ComparedRun]) -> str:
    names = [n for n in SUMMARY if any(n in r.report.means.get("answer", {}) for r in runs)]
    head = "<th>answered</th>" + "".join(f'<th title="{esc(describe(n))}">{esc(n)}</th>' for n in names)
    body = ""
    for run in runs:
        means, ci = run.report.means.get("answer", {}), run.report.intervals.get("answer", {})
        answered = f'<td class="num">{esc(run.report.answered)}</td>'
        cells = "".join(f'<td class="num">{fmt(means.get(n))}'
                        + (f'<br><span class="note">[{fmt(ci[n][0])}, {fmt(ci[n][1])}]</span>' if n in ci else "")
                        + "</td>" for n in names)
        body += f'<tr class="run-row"><th>{esc(run.label)}</th>{answered}{cells}</tr>'
    return (f'<h2 id="summary">Summary (answer metrics, mean over the answered questions and bootstrap 95% CI)</h2>'
            f'<div style="overflow-x:auto"><table class="summary"><tr><th>run</th>{head}</tr>{body}</table></div>')


def failure_classes(runs: list[ComparedRun], found: ClassComparison | None) -> str:
    """Each run's failure classes (docs/answers/failure-classes.md): questions per class, and the transitions from
    the first run's classes to each other run's. They are decided above analysis (answers/failures.py), so the
    caller brings them; without them the section is left out."""
    if found is None:
        return ""
    names = [c for c in found.order if any(c in counts for counts in found.counts.values())]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    body = "".join(f'<tr><th>{esc(label)}</th>' + "".join(f'<td class="num">{counts.get(n, 0)}</td>' for n in names)
                   + "</tr>" for label, counts in found.counts.items())
    moved = "".join(f"<h3>{esc(runs[0].label)} → {esc(label)}</h3>"
                    f"<pre>{esc(chr(10).join(transition_lines(runs[0].label, label, pairs, found.order)[1:]))}</pre>"
                    for label, pairs in zip(found.labels[1:], found.moved))
    return (f'<h2 id="failure-classes">Failure classes</h2><table class="summary"><tr><th>run</th>{head}</tr>{body}'
            f"</table>{moved}")


def _check_cell(name: str, value: float) -> str:
    cls, mark = ("pass", "✓") if value >= 1 else (("fail", "✗") if value <= 0 else ("part", "◐"))
    return f'<span class="{cls}" title="{esc(name)} = {value:.2f}">{mark} {esc(name)} {value:.2f}</span>'


def _judge_cell(name: str, verdict: dict) -> str:
    """One judge's verdict: its rating or value, its reasoning, and why there is none when it failed or skipped."""
    if verdict.get("value") is None:
        why = verdict.get("skipped") or verdict.get("failure") or "no verdict"
        cls = "note" if verdict.get("skipped") else "fail"
        return f'<p class="judge"><b>{esc(name)}</b> <span class="{cls}">{"skipped" if cls == "note" else "failed"}: ' \
               f'{esc(why)}</span></p>'
    rating = verdict.get("rating")
    shown = esc(rating) if rating is not None else fmt(verdict.get("value"))
    disagree = " (disagree)" if verdict.get("disagreement") else ""
    samples = (f' <span class="note">samples {esc(verdict["samples"])}{disagree}</span>'
               if verdict.get("samples") else "")
    details = verdict.get("details", [])
    nuggets = [d for d in details if "text" in d and "verdict" in d]
    chunks = " ".join(f'[{esc(d.get("position"))}] {esc(d.get("rating") or "failed")}'
                      for d in details if d not in nuggets)
    return (f'<p class="judge"><b>{esc(name)}</b> {shown}{samples} – {esc(verdict.get("reasoning", ""))}'
            + (f'<br><span class="note">{chunks}</span>' if chunks else "") + "</p>" + _nugget_list(nuggets))


def _nugget_list(nuggets: list[dict]) -> str:
    """The nuggets judge's verdict per nugget, so a reader sees which facts the answer misses."""
    if not nuggets:
        return ""
    items = []
    for nugget in nuggets:
        cls, mark = NUGGET_MARKS.get(nugget.get("verdict"), NUGGET_MARKS[None])
        importance = nugget.get("importance", "")
        items.append(f'<li class="{cls}" title="{esc(nugget.get("verdict") or nugget.get("failure") or "")}">'
                     f'{mark} <span class="{esc(importance)}">{esc(nugget.get("text"))}</span> '
                     f'<span class="note">{esc(importance)}, {esc(nugget.get("verdict") or "failed")}</span></li>')
    return f'<ul class="nuggets">{"".join(items)}</ul>'



def _answer_block(run: ComparedRun, question) -> str:
    values = question.metrics.get("answer", {})
    checks = " ".join(_check_cell(n, v) for n, v in values.items()
                      if n not in NOT_CHECKS and "/" not in n and n != "llm_judge_score")
    cited = ", ".join(f"[{c.position}] {esc(c.doc_id or 'outside the context')}" for c in question.citations)
    body = (f'<p class="fail">failed: {esc(question.error)}</p>' if question.error is not None else
            f"<pre>{esc(question.answer)}</pre>")
    judges = "".join(_judge_cell(name, verdict) for name, verdict in question.judges.items())
    kind = f' <span class="note class">{esc(question.failure_class)}</span>' if question.failure_class else ""
    return (f'<div class="answer"><b>{esc(run.label)}</b> score {fmt(question.score)}{kind}{body}'
            f'<p>{checks or "<span class=note>no checks</span>"}</p>'
            f'<p class="note">cited: {cited or "nothing"}</p>{judges}</div>')


def cards(runs: list[ComparedRun]) -> str:
    """One card per question, the largest score changes first (then question order), at most `MAX_CARDS`."""
    order = runs[0].question_ids
    by_run = [{q.id: q for q in r.report.questions} for r in runs]
    if len(runs) > 1:
        scores = np.array([[np.nan if q[qid].score is None else q[qid].score for qid in order] for q in by_run])
        change = np.nan_to_num(np.nanmax(scores, axis=0) - np.nanmin(scores, axis=0), nan=0.0) \
            if np.isfinite(scores).any() else np.zeros(len(order))
        ranked = [order[i] for i in np.argsort(-change, kind="stable")]
    else:
        ranked = list(order)
    out = [f'<h2 id="questions">Questions ({min(len(ranked), MAX_CARDS)} of {len(ranked)}'
           + (", largest score changes first" if len(runs) > 1 else "") + ")</h2>"]
    for qid in ranked[:MAX_CARDS]:
        first = by_run[0][qid]
        truth = (f'<p class="truth"><b>reference</b> {esc(first.ground_truth)}</p>' if first.ground_truth else "")
        blocks = "".join(_answer_block(run, mine[qid]) for run, mine in zip(runs, by_run))
        out.append(f'<div class="card"><h3>{esc(first.text)} <code>{esc(qid)}</code></h3>{truth}'
                   f'<div class="answers">{blocks}</div></div>')
    return "".join(out)


def differences(runs: list[ComparedRun], metric: str) -> str:
    order = runs[0].question_ids
    base = aligned(runs[0], metric, "answer", order)
    figures = []
    for run in runs[1:]:
        delta = aligned(run, metric, "answer", order) - base
        delta = delta[np.isfinite(delta)]
        figures.append(f"<figure>{histogram(f'{metric}: B − A', delta)}<figcaption>B = {esc(run.label)}, "
                       f"A = {esc(runs[0].label)}</figcaption></figure>")
    return (f'<h2 id="plots">Per-question differences of {esc(metric)}</h2><div class="plots">{"".join(figures)}'
            "</div>")


def answer_sections(runs: list[ComparedRun], metrics, test: str, correction: str, alpha: float,
                    classes: ClassComparison | None = None, **compare_options) -> list[str]:
    sections = [f"<style>{CARD_CSS}</style>", configuration(runs), summary(runs), failure_classes(runs, classes)]
    if len(runs) > 1:
        sections.append(comparison_table(compare(runs, metrics, test, correction, alpha, "answer",
                                                 **compare_options)))
        sections.append(differences(runs, metrics[0]))
    sections.append(cards(runs))
    return sections
