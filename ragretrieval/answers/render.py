"""The plain-text rendering of an answer report: the metric table with 95% CIs, and one line per question."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..evaluation.report import ANSWER_LEVEL
from ..scoring.answer_metrics import JUDGE_METRICS, ORDER  # noqa: F401 (ORDER: importable from here as in 0.2)
from .failures import CLASSES, report_classes
from .usage import AGENT_METRICS

if TYPE_CHECKING:  # report.py prints itself through this module
    from .report import AnsweredQuestion, AnswerReport, JudgeSummary

RETRIEVAL_FAMILIES = ("recall", "precision", "mrr", "ndcg", "hit_rate")
LEVEL_TITLES = {"doc": "retrieval, document level", "chunk": "retrieval, chunk level"}


def ordered(names) -> list[str]:
    names = list(names)
    first = [n for n in ORDER if n in names]
    return first + [n for n in names if n not in first]


def _number(x: float) -> str:
    """Four decimals for scores and shares, one for large numbers (token counts)."""
    return f"{x:.4f}" if abs(x) < 100 else f"{x:.1f}"


def _interval(interval) -> str:
    return f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else "-"


def _block(names, means, intervals, counts, width: int) -> list[str]:
    """The header and one row per metric; the mean and CI columns widen for large numbers only."""
    shown = [(n, _number(means[n]), _interval(intervals.get(n)), counts.get(n, 0)) for n in names]
    mean_w, ci_w = max([7] + [len(r[1]) for r in shown]), max([18] + [len(r[2]) for r in shown])
    return ([f"  {'metric':<{width}}  {'mean':>{mean_w}}  {'95% CI':>{ci_w}}  {'n':>5}"]
            + [f"  {n:<{width}}  {m:>{mean_w}}  {ci:>{ci_w}}  {c:>5}" for n, m, ci, c in shown])


def is_judge_metric(name: str) -> bool:
    return name in JUDGE_METRICS or name == "llm_judge_score" or "/llm_judged/" in name


def _agreement(name: str, summary: JudgeSummary) -> str | None:
    found = summary.agreement
    if not found:
        return None
    label = "Cohen's kappa" if found["statistic"] == "cohen_kappa" else "Spearman"
    value = "undefined (every verdict alike)" if found["value"] is None else f"{found['value']:.2f}"
    extra = (f", same verdict {found['observed']:.0%}" if found.get("observed") is not None else
             f", p {found['p']:.4f}" if found.get("p") is not None else "")
    return f"  {name} vs {found['check']}: {label} {value}{extra} (n={found['n']})"


def judge_lines(report: AnswerReport) -> list[str]:
    """Judge trust, sample disagreement, skips and failures, one line each."""
    lines = [line for name, s in report.judges.items() if (line := _agreement(name, s))]
    lines = (["", "judge trust (agreement with the matching check)"] + lines) if lines else []
    for name, s in report.judges.items():
        if s.disagreement_rate is not None:
            lines.append(f"judge {name}: {s.samples} samples per verdict, disagreeing on {s.disagreement_rate:.0%} "
                         "of the questions")
        if s.skipped:
            why = ", ".join(f"{reason} ({n})" for reason, n in s.skipped_because.items())
            lines.append(f"judge {name}: {s.skipped} question(s) skipped: {why}")
    return lines


def class_counts(report: AnswerReport) -> dict[str, int]:
    """The run's failure classes (computed again for a run stored before they existed), in the decision order."""
    if report.failure_classes:
        return {name: report.failure_classes.get(name, 0) for name in CLASSES}
    found = report_classes(report)
    return {name: found.count(name) for name in CLASSES}


def class_lines(report: AnswerReport) -> list[str]:
    """One row per failure class that occurs: questions and their share."""
    counts = {name: n for name, n in class_counts(report).items() if n}
    total = sum(counts.values())
    if not total:
        return []
    width = max(len(name) for name in counts)
    return (["", "failure classes (docs/answers/failure-classes.md)",
             f"  {'class':<{width}}  {'n':>5}  {'share':>6}"]
            + [f"  {name:<{width}}  {n:>5}  {n / total:>6.1%}" for name, n in counts.items()])


def _agreement_text(found: dict | None) -> str:
    if not found or not found.get("n"):
        return "no item to compare"
    label = "Cohen's kappa" if found["statistic"] == "cohen_kappa" else "Spearman"
    value = "undefined (every verdict alike)" if found["value"] is None else f"{found['value']:.2f}"
    ci = f" [{found['ci'][0]:.2f}, {found['ci'][1]:.2f}]" if found.get("ci") else ""
    return f"{label} {value}{ci} (n={found['n']})"


def _shift_text(found: dict, noise: dict) -> str:
    if "not_applicable" in found:
        return f"not measured: {found['not_applicable']}"
    if not found.get("n"):
        return "no verdict to compare"
    ci = f" [{found['ci'][0]:+.3f}, {found['ci'][1]:+.3f}]" if found.get("ci") else ""
    alone = f" (repeats alone: {noise['disagreement']:.1%})" if noise.get("disagreement") is not None else ""
    return f"mean change {found['shift']:+.3f}{ci}, {found['changed']:.1%} of verdicts changed{alone} (n={found['n']})"


def audit_lines(report: AnswerReport) -> list[str]:
    """Each audited judge's noise, agreement and biases (judge-answers --repeats; answers/judges/audit.py)."""
    lines = []
    for name, noise in report.judge_noise.items():
        head = (f"judge audit: {name}, {noise['repeats']} repeats of {noise['questions']} questions "
                f"({noise['verdicts']} verdicts, {noise['failed']} failed)")
        flips = (f"  flip rate {noise['flip_rate']:.3f} [{noise['ci'][0]:.3f}, {noise['ci'][1]:.3f}]; two repeats "
                 f"disagree on {noise['disagreement']:.1%} of pairs" if noise.get("flip_rate") is not None else
                 "  flip rate: no question has two verdicts")
        lines += ["", head, flips]
        lines += [f"  noise variance of {metric}: {value:.4f}" for metric, value in noise.get("variance", {}).items()]
        if noise.get("rule"):
            lines.append(f"  vs {noise['rule']['check']}: {_agreement_text(noise['rule'])}")
        if noise.get("labels"):
            lines.append(f"  vs {noise['labels']['source']}: {_agreement_text(noise['labels'])}")
        lines.append(f"  position (contexts shuffled): {_shift_text(noise['position'], noise)}")
        lines.append(f"  verbosity (answer padded): {_shift_text(noise['verbosity'], noise)}")
    return lines


def metric_table(report: AnswerReport) -> str:
    """Every answer metric, the judges', and the retrieval metrics at the context k, each with its bootstrap 95% CI;
    then tokens per answer, judge trust and the bill."""
    cfg, usage = report.config, report.usage
    answered = report.answered
    lines = [f"{answered}; generator {cfg.generator}; contexts {cfg.contexts}"
             + (f" (top {cfg.context_k} of {cfg.retrieval.retriever})" if cfg.retrieval else "")]
    answer_names = ordered(report.means.get(ANSWER_LEVEL, {}))
    blocks = [(ANSWER_LEVEL, "answers", [n for n in answer_names if n not in AGENT_METRICS and not is_judge_metric(n)]),
              (ANSWER_LEVEL, "judges", [n for n in answer_names if is_judge_metric(n)])]
    for level, title in LEVEL_TITLES.items():
        names = [f"{f}@{cfg.context_k}" for f in RETRIEVAL_FAMILIES]
        names += [n for n in report.means.get(level, {}) if "@" not in n]  # document_recall
        blocks.append((level, title, [n for n in names if n in report.means.get(level, {})]))
    blocks.append((ANSWER_LEVEL, "tokens per answer", [n for n in AGENT_METRICS if n in answer_names]))
    width = max([len(n) for _, _, names in blocks for n in names] + [6])
    for level, title, names in blocks:
        if not names:
            continue
        title += f" ({answered})" if level == ANSWER_LEVEL else ""
        lines += ["", title, *_block(names, report.means[level], report.intervals.get(level, {}),
                                     report.counts.get(level, {}), width)]
    if not blocks[0][2] and not blocks[1][2]:
        lines += ["", "answers: no checks to score (the questions have no expect, relevant documents or judges)"]
    for kind, means in report.by_type.items():
        shown = ", ".join(f"{n} {means[n]:.4f}" for n in ordered(means)[:4])
        lines.append(f"type {kind}: {shown}")
    lines += class_lines(report)
    lines += judge_lines(report)
    lines += audit_lines(report)
    tokens = int(usage.get("total_tokens", 0))
    latency = (f"latency p50 {usage['latency_p50']:.2f}s, p95 {usage['latency_p95']:.2f}s"
               if "latency_p50" in usage else "no latency")
    lines += ["", f"usage: {tokens} tokens ({int(usage.get('input_tokens', 0))} in, "
                  f"{int(usage.get('output_tokens', 0))} out), {int(usage.get('cached', 0))} answers from cache"
                  + (f", ${usage['cost']:.4f}" if usage.get("cost") else "") + f"; {latency}"]
    if report.judges:
        lines.append(f"judges: {int(usage.get('judge_total_tokens', 0))} tokens "
                     f"({int(usage.get('judge_input_tokens', 0))} in, {int(usage.get('judge_output_tokens', 0))} out) "
                     f"in {int(usage.get('judge_requests', 0))} requests"
                     + (f", ${usage['judge_cost']:.4f}; total ${usage['total_cost']:.4f}" if usage.get("judge_cost")
                        else ""))
    lines.append("time: " + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in report.timings.items()))
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def question_line(i: int, n: int, answered: AnsweredQuestion) -> str:
    """``[3/30] 如何做宫保鸡丁？... score=1.00 cite_f1=1.00 (0.8s, 412 tokens)`` or the error."""
    head = f"[{i}/{n}] {answered.text}..."
    if answered.error is not None:
        return f"{head} failed: {answered.error}"
    values = answered.metrics.get(ANSWER_LEVEL, {})
    checks = [n for n in ordered(values) if n not in AGENT_METRICS and not is_judge_metric(n)][:4]
    shown = " ".join(f"{name}={values[name]:.2f}" for name in checks) or "no checks"
    judged = " ".join(f"{name}={_verdict(verdict)}" for name, verdict in answered.judges.items())
    kind = f" [{answered.failure_class}]" if answered.failure_class else ""
    return (f"{head} {shown}" + (f" | {judged}" if judged else "")
            + f" ({answered.latency:.2f}s, {answered.total_tokens} tokens){kind}")


def _verdict(verdict: dict) -> str:
    """A judge's verdict in a few characters: its rating, else its value, else failed or skipped."""
    if verdict.get("value") is None:
        return "skipped" if verdict.get("skipped") else "failed"
    rating = verdict.get("rating")
    return str(rating) if rating is not None else f"{verdict['value']:.2f}"
