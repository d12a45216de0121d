"""Paired comparison of runs, question by question: per metric, each mean, b - a with its bootstrap CI, the p-value of
a paired test (corrected for multiple testing), Cohen's d_z and wins/ties/losses. See docs/compare.md.

A run comes from the runs history (by id), from an ``eval --out`` report file, or from a TREC run file scored against
``--qrels`` with the scorer's defaults: runs/compared.py finds it (the history and the answer reports live in rooms
above this one) and `from_report` / `from_trec` here make it comparable. With more than two runs, each is compared
against the first; the correction treats every (pair, metric) p-value of one comparison as one family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import RagretrievalError
from ..evaluation.report import ANSWER_LEVEL, GRANULARITIES, EvalReport
from ..scoring import MetricError, Qrels, Run, parse_metric, score
from ..work.options import SettingsError
from .paired_batch import paired_stats_many
from .settings import CORRECTIONS, DEFAULT_RESAMPLES, DEFAULT_SEED, PAIRED, TESTS, CompareSettings  # noqa: F401
from .stats import PairedStats, adjust

SHOWN_IDS = 5  # question ids quoted in a "different question sets" message
DEFAULT_METRICS = ("ndcg@10", "recall@5")  # of retrieval runs; answer runs compare their answer metrics
LEVELS = (*GRANULARITIES, ANSWER_LEVEL)
# answer metrics whose run-level mean has a name of its own: score5's per-question llm_judge_score averages to the
# run's average_score (the names of the question-set design); `compare -m average_score` pairs llm_judge_score
RUN_LEVEL_NAMES = {"llm_judge_score": "average_score"}
PER_QUESTION_NAMES = {run: question for question, run in RUN_LEVEL_NAMES.items()}
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
              "permutation": "sign-flip permutation test", "bootstrap": "paired bootstrap test"}


class CompareError(RagretrievalError, ValueError):
    """Runs that cannot be compared, or an input that cannot be read."""


@dataclass
class ComparedRun:
    """One input run: a label, where it came from, its question ids and a way to get per-question metric values.

    `report` is set for runs from the history or a report file (the HTML report needs it); TREC runs have none.
    """

    label: str
    source: str
    question_ids: list[str]
    per_question: Callable[[str, str], np.ndarray]  # (metric name, granularity) -> values aligned with question_ids
    report: EvalReport | None = None  # or an AnswerReport
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------------- loading
def report_values(report, metric: str, granularity: str, label: str = "run") -> np.ndarray:
    """Per-question values of `metric`: stored ones, else recomputed at document level from the stored rankings.

    An answer run (``report.kind == "answer"``) holds its answer metrics at level ``answer`` and its retrieval
    metrics at ``doc``/``chunk``; a question that lacks a metric there (no such check, no relevant documents, a
    failed answer) is NaN, and `compare` pairs only the questions both runs have values for."""
    if granularity not in LEVELS:
        raise CompareError(f"granularity must be one of {', '.join(LEVELS)}; got {granularity!r}")
    if granularity == ANSWER_LEVEL:
        metric = PER_QUESTION_NAMES.get(metric, metric)
    stored = [q.metrics.get(granularity, {}) for q in report.questions]
    if stored and all(metric in values for values in stored):
        return np.array([values[metric] for values in stored], dtype=np.float64)
    if getattr(report, "kind", "retrieval") == "answer" or granularity == ANSWER_LEVEL:
        if any(metric in values for values in stored):
            return np.array([values.get(metric, np.nan) for values in stored], dtype=np.float64)
        present = sorted({name for values in stored for name in values})
        raise CompareError(f"{label}: no question has {granularity}-level metric {metric}; it has: "
                           f"{', '.join(present) if present else 'none at this level'}")
    available = sorted(set.intersection(*(set(v) for v in stored))) if stored else []
    reason = recompute_obstacle(report, metric, granularity)
    if reason:
        listed = ", ".join(available) if available else "none"
        raise CompareError(f"{label}: metric {metric} is not stored at {granularity} level and cannot be recomputed "
                           f"({reason}); stored {granularity}-level metrics: {listed}")
    return recompute_doc_metric(report, metric)


def recompute_obstacle(report: EvalReport, metric: str, granularity: str) -> str | None:
    """Why `metric` cannot be recomputed from the report's stored rankings, or None when it can."""
    if granularity == "chunk":
        return "chunk labels need every chunk of the relevant documents, which the report does not hold"
    parsed = parse_metric(metric)
    if parsed.k is None:
        return f"the report holds rankings to depth {max(report.config.ks)} only; give a cutoff, e.g. {metric}@10"
    if parsed.k > max(report.config.ks):
        return f"the report holds rankings to depth {max(report.config.ks)} only"
    if any(not q.relevant_grades for q in report.questions) and (report.config.rel_level != 1 or "ndcg" in metric):
        return "the report holds relevant document ids without their grades (written by an older ragretrieval)"
    return None


def recompute_doc_metric(report: EvalReport, metric: str) -> np.ndarray:
    """Score the stored document rankings against the stored relevant documents and grades, ties broken by rank."""
    qrels = Qrels.from_dict({q.id: q.relevant_grades or {doc: 1 for doc in q.relevant} for q in report.questions})
    run = Run.from_dict({q.id: list(q.retrieved_documents) for q in report.questions})
    return score(qrels, run, [metric], ties="rank", rel_level=report.config.rel_level).per_query[metric]


def from_report(report: EvalReport, label: str, source: str) -> ComparedRun:
    return ComparedRun(label, source, [q.id for q in report.questions],
                       lambda metric, granularity: report_values(report, metric, granularity, label), report)


def from_trec(path: Path, qrels_path: Path) -> ComparedRun:
    """A TREC run scored against TREC qrels with the scorer's defaults; questions are the qrels' queries."""
    from ..scoring.trec import read_qrels, read_run

    qrels, run = read_qrels(qrels_path), read_run(path)
    notes = []
    missing = sorted(set(qrels.query_ids.tolist()) - set(run.query_ids.tolist()))
    if missing:
        notes.append(f"{path.name}: {len(missing)} judged question(s) have no ranking and score 0 "
                     f"(e.g. {', '.join(missing[:SHOWN_IDS])})")

    def values(metric: str, granularity: str) -> np.ndarray:
        return score(qrels, run, [metric]).per_query[metric]

    return ComparedRun(path.stem, str(path), qrels.query_ids.tolist(), values, notes=notes)


def unique_labels(runs: list[ComparedRun]) -> None:
    """Make labels distinct (two files called report.json) by appending #2, #3, ..."""
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label}#{seen[run.label]}"


# ---------------------------------------------------------------------------------------------------- comparing
def check_same_questions(a: ComparedRun, b: ComparedRun) -> None:
    """Refuse runs over different question sets, naming the first ids found in only one of them."""
    only_a = sorted(set(a.question_ids) - set(b.question_ids))
    only_b = sorted(set(b.question_ids) - set(a.question_ids))
    if not only_a and not only_b:
        return

    def some(ids, side):
        shown = ", ".join(ids[:SHOWN_IDS]) + (", ..." if len(ids) > SHOWN_IDS else "")
        return f"{len(ids)} only in {side}" + (f" ({shown})" if ids else "")

    raise CompareError(f"runs {a.label} (A) and {b.label} (B) cover different question sets, so they cannot be "
                       f"paired: {some(only_a, 'A')}; {some(only_b, 'B')}")


def positions(run: ComparedRun, order: list[str]) -> np.ndarray | None:
    """Where each question of `order` is among `run`'s (None: `run` holds them in that order already)."""
    if run.question_ids == order:
        return None
    position = {q: i for i, q in enumerate(run.question_ids)}
    return np.array([position[q] for q in order], dtype=np.int64)


def aligned(run: ComparedRun, metric: str, granularity: str, order: list[str],
            rows: np.ndarray | None = None) -> np.ndarray:
    """`run`'s values of `metric` in the order `order` (`rows`: its `positions`, found once for many metrics)."""
    values = np.asarray(run.per_question(metric, granularity), dtype=np.float64)
    rows = positions(run, order) if rows is None else rows
    return values if rows is None else values[rows]


def _number(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class MetricComparison:
    metric: str
    stats: PairedStats
    p_corrected: float
    significant: bool

    @property
    def regression(self) -> bool:
        return self.significant and self.stats.diff < 0

    def to_json(self) -> dict:
        s = self.stats
        return {"a": _number(s.mean_a), "b": _number(s.mean_b), "diff": _number(s.diff),
                "ci": [_number(s.ci[0]), _number(s.ci[1])], "p": _number(s.p), "p_corrected": _number(self.p_corrected),
                "significant": self.significant, "effect_size": _number(s.effect_size), "wins": s.wins,
                "ties": s.ties, "losses": s.losses, "n": s.n, "note": s.note}


@dataclass(frozen=True)
class PairComparison:
    a: str
    b: str
    metrics: dict[str, MetricComparison]

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "metrics": {name: m.to_json() for name, m in self.metrics.items()}}


@dataclass(frozen=True)
class Comparison:
    """The result of `compare`: one `PairComparison` per run after the first, against the first."""

    runs: list[str]
    pairs: list[PairComparison]
    test: str
    correction: str
    alpha: float
    granularity: str
    n_questions: int
    n_resamples: int
    seed: int
    notes: list[str] = field(default_factory=list)

    def regressions(self) -> list[tuple[str, str]]:
        """(run label, metric) for every metric significantly worse than in the first run."""
        return [(pair.b, name) for pair in self.pairs for name, m in pair.metrics.items() if m.regression]

    def to_json(self) -> dict:
        """Two runs: the pair's keys at the top level; more: ``"pairs": [...]`` each against the first run."""
        head = {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                "granularity": self.granularity, "n_questions": self.n_questions, "n_resamples": self.n_resamples,
                "seed": self.seed, "effect_size": "cohen_dz", "notes": self.notes}
        if len(self.pairs) == 1:
            return {**self.pairs[0].to_json(), **head}
        return {"baseline": self.runs[0], "runs": self.runs, **head, "pairs": [p.to_json() for p in self.pairs]}

    def table(self) -> str:
        return render_table(self)

    def __str__(self) -> str:
        return render_table(self)


def metric_name(metric: str, granularity: str, answer_runs: bool) -> str:
    """A retrieval metric in its canonical spelling; answer metrics (and an answer run's ``document_recall``) are
    names as the run stores them."""
    if granularity == ANSWER_LEVEL:
        return metric
    try:
        return parse_metric(metric).name
    except MetricError as error:
        if answer_runs and "@" not in metric:
            return metric
        raise CompareError(str(error)) from None


def check_settings(test: str, correction: str, alpha: float) -> None:
    """`compare`'s test, correction and alpha (a `CompareError` naming the bad one): also the web's, before it reads
    any run."""
    try:
        CompareSettings(test=test, correction=correction, alpha=alpha)
    except SettingsError as error:
        raise CompareError(str(error)) from None


def compare(runs: list[ComparedRun], metrics, test: str = PAIRED.test, correction: str = PAIRED.correction,
            alpha: float = PAIRED.alpha,
            granularity: str = "doc", n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> Comparison:
    """Pair every run after the first with the first, question by question, and test each metric."""
    if len(runs) < 2:
        raise CompareError("compare needs at least two runs")
    check_settings(test, correction, alpha)
    if granularity not in LEVELS:
        raise CompareError(f"granularity must be one of {', '.join(LEVELS)}; got {granularity!r}")
    answer_runs = any(getattr(r.report, "kind", None) == "answer" for r in runs)
    names = list(dict.fromkeys(metric_name(m, granularity, answer_runs) for m in metrics))
    if not names:
        raise CompareError("no metrics given")
    base = runs[0]
    if not base.question_ids:
        raise CompareError(f"run {base.label} has no questions")
    for other in runs[1:]:
        check_same_questions(base, other)
    order = base.question_ids
    raw, notes = [], []
    for other in runs[1:]:
        rows = positions(other, order)
        for name in names:
            a, b = aligned(base, name, granularity, order), aligned(other, name, granularity, order, rows)
            both = np.isfinite(a) & np.isfinite(b)
            if not both.all():
                if not both.any():
                    raise CompareError(f"no question has {name} in both {base.label} and {other.label}")
                notes.append(f"{name}: {int(both.sum())} of {len(order)} questions paired ({other.label} vs "
                             f"{base.label}; the others lack it in a run: no such check, no relevant documents, or "
                             "no answer)")
                a, b = a[both], b[both]
            raw.append((a, b))
    raw = paired_stats_many(raw, test, n_resamples, seed)  # every metric at once: paired_stats' numbers, faster
    corrected = adjust([s.p for s in raw], correction)
    pairs = []
    for i, other in enumerate(runs[1:]):
        chunk = range(i * len(names), (i + 1) * len(names))
        pairs.append(PairComparison(base.label, other.label, {
            names[j - i * len(names)]: MetricComparison(names[j - i * len(names)], raw[j], corrected[j],
                                                         bool(corrected[j] < alpha)) for j in chunk}))
    notes = [note for run in runs for note in run.notes] + notes
    return Comparison([r.label for r in runs], pairs, test, correction, alpha, granularity, len(order),
                      n_resamples, seed, notes)


# ---------------------------------------------------------------------------------------------------- rendering
def _signed(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:+.4f}"


def _p(x: float) -> str:
    return "-" if not math.isfinite(x) else ("<0.0001" if x < 1e-4 else f"{x:.4f}")


def render_table(comparison: Comparison) -> str:
    """One block per pair: a row per metric; ``*`` marks a corrected p below alpha, ``worse`` a regression."""
    c = comparison
    corrected_title = "p" if c.correction == "none" else f"p({c.correction})"
    lines = [f"{c.n_questions} questions paired, {c.granularity} level; {TEST_NAMES[c.test]}, "
             f"correction {c.correction}, alpha {c.alpha}; 95% CI by paired bootstrap; effect size Cohen's d_z"]
    for pair in c.pairs:
        lines += ["", f"A = {pair.a}", f"B = {pair.b}"]
        width = max(len("metric"), *(len(name) for name in pair.metrics))
        lines.append(f"{'metric':<{width}}  {'A':>7}  {'B':>7}  {'B-A':>8}  {'95% CI':>19}  {'p':>7}  "
                     f"{corrected_title:>10}  {'d_z':>6}  {'W/T/L':>9}")
        for name, m in pair.metrics.items():
            s = m.stats
            ci = f"[{_signed(s.ci[0])}, {_signed(s.ci[1])}]"
            mark = " * worse" if m.regression else (" * better" if m.significant else "")
            dz = f"{s.effect_size:.2f}" if math.isfinite(s.effect_size) else str(s.effect_size)
            lines.append(f"{name:<{width}}  {s.mean_a:>7.4f}  {s.mean_b:>7.4f}  {_signed(s.diff):>8}  {ci:>19}  "
                         f"{_p(s.p):>7}  {_p(m.p_corrected):>10}  {dz:>6}  "
                         f"{f'{s.wins}/{s.ties}/{s.losses}':>9}{mark}")
            if s.note:
                lines.append(f"{'':<{width}}  note: {s.note}")
    lines.extend(f"note: {note}" for note in c.notes)
    return "\n".join(lines)
