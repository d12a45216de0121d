"""The plain-text rendering of an answer report: the metric table with 95% CIs, and one line per question."""

from __future__ import annotations

from .report import ANSWER_LEVEL, AnsweredQuestion, AnswerReport

ORDER = ("score", "total", "correctness", "safety", "include", "exclude", "cite_f1", "cite_precision", "cite_recall",
         "refuse", "safe", "fact_exact", "evidence_set", "conflict_gap", "pass_rate")
RETRIEVAL_FAMILIES = ("recall", "precision", "mrr", "ndcg", "hit_rate")
LEVEL_TITLES = {"doc": "retrieval, document level", "chunk": "retrieval, chunk level"}


def ordered(names) -> list[str]:
    names = list(names)
    first = [n for n in ORDER if n in names]
    return first + [n for n in names if n not in first]


def _row(name: str, mean: float, interval, count: int, width: int) -> str:
    ci = f"[{interval[0]:.4f}, {interval[1]:.4f}]" if interval else "-"
    return f"  {name:<{width}}  {mean:>7.4f}  {ci:>18}  {count:>5}"


def metric_table(report: AnswerReport) -> str:
    """Every answer metric, and the retrieval metrics at the context k, each with its bootstrap 95% CI."""
    cfg, usage = report.config, report.usage
    lines = [f"{len(report.questions)} questions, {int(usage.get('answered', 0))} answered; generator "
             f"{cfg.generator}; contexts {cfg.contexts}"
             + (f" (top {cfg.context_k} of {cfg.retrieval.retriever})" if cfg.retrieval else "")]
    blocks = [(ANSWER_LEVEL, "answers", ordered(report.means.get(ANSWER_LEVEL, {})))]
    for level, title in LEVEL_TITLES.items():
        names = [f"{f}@{cfg.context_k}" for f in RETRIEVAL_FAMILIES]
        names += [n for n in report.means.get(level, {}) if "@" not in n]  # document_recall
        blocks.append((level, title, [n for n in names if n in report.means.get(level, {})]))
    width = max([len(n) for _, _, names in blocks for n in names] + [6])
    for level, title, names in blocks:
        if not names:
            continue
        lines += ["", f"{title}", f"  {'metric':<{width}}  {'mean':>7}  {'95% CI':>18}  {'n':>5}"]
        means, intervals, counts = (report.means[level], report.intervals.get(level, {}),
                                    report.counts.get(level, {}))
        lines += [_row(n, means[n], intervals.get(n), counts.get(n, 0), width) for n in names]
    if not report.means.get(ANSWER_LEVEL):
        lines += ["", "answers: no checks to score (the questions have no expect, relevant documents or judges)"]
    for kind, means in report.by_type.items():
        shown = ", ".join(f"{n} {means[n]:.4f}" for n in ordered(means)[:4])
        lines.append(f"type {kind}: {shown}")
    tokens = int(usage.get("total_tokens", 0))
    latency = (f"latency p50 {usage['latency_p50']:.2f}s, p95 {usage['latency_p95']:.2f}s"
               if "latency_p50" in usage else "no latency")
    lines += ["", f"usage: {tokens} tokens ({int(usage.get('input_tokens', 0))} in, "
                  f"{int(usage.get('output_tokens', 0))} out), {int(usage.get('cached', 0))} answers from cache"
                  + (f", ${usage['cost']:.4f}" if usage.get("cost") else "") + f"; {latency}"]
    lines.append("time: " + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in report.timings.items()))
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def question_line(i: int, n: int, answered: AnsweredQuestion) -> str:
    """``[3/30] 如何做宫保鸡丁？... score=1.00 cite_f1=1.00 (0.8s, 412 tokens)`` or the error."""
    head = f"[{i}/{n}] {answered.text}..."
    if answered.error is not None:
        return f"{head} failed: {answered.error}"
    values = answered.metrics.get(ANSWER_LEVEL, {})
    shown = " ".join(f"{name}={values[name]:.2f}" for name in ordered(values)[:4]) or "no checks"
    return f"{head} {shown} ({answered.latency:.2f}s, {answered.total_tokens} tokens)"
