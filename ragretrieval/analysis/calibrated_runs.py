"""Calibrated means of runs: a person's labels file (or a predictions file) read, a run's per-question metric paired
with it (`calibration.calibrated_mean`), and the rows ``calibrate``, ``compare --calibrate-labels`` and ``report
--calibrate-labels`` show (docs/answers/calibrate.md, "Calibrated judge scores").

A labels file and a predictions file are JSON Lines of `QuestionValue`: ``{"question_id": "q1", "value": 1}``, one
question per line, on the metric's own scale (yes/no judges: 0 or 1; score5: 1-5; retrieval metrics: 0-1). A value
off the metric's scale is refused naming its line (`metric_scale`; a 9 for a 1-5 judge would move the calibrated mean
past anything the judge can say); without a known scale (a plug-in's metric, predictions without a metric) a value
is at most `MAX_VALUE` away from 0, so that its square stays finite. Between two runs, the calibrated
difference B - A is PPI on the paired differences: labels B - A on the questions labelled in both runs, the judge's
differences on every question both runs judged.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..data.dataset import DatasetError, read_numbered_jsonl
from ..io.jsonfiles import supported_version
from ..scoring import MetricError, parse_metric
from ..scoring.answer_metrics import BY_NAME
from .calibration import Calibration, CalibrationError, Estimate, calibrated_mean, ppi_mean
from .compare import RUN_LEVEL_NAMES, ComparedRun

VALUES_VERSION = 1
MAX_VALUE = 1e12  # far beyond any metric's scale; 1e308 made the variances inf and the interval nan


class QuestionValue(BaseModel):
    """One line of a labels or predictions file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    values_version: int = VALUES_VERSION
    question_id: str = Field(min_length=1)
    value: float

    @field_validator("values_version")
    @classmethod
    def _known_version(cls, version):
        return supported_version("values_version", version, VALUES_VERSION)

    @field_validator("value", mode="before")
    @classmethod
    def _a_finite_number(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"value must be a finite number; got {value!r}")
        if abs(value) > MAX_VALUE:
            raise ValueError(f"value must be from {-MAX_VALUE:g} to {MAX_VALUE:g}; got {value!r}")
        return value


def metric_scale(metric: str | None) -> tuple[float, float] | None:
    """The range of `metric`'s value for one question: an answer metric's declared scale (score5's average_score
    and llm_judge_score: 1-5; judges' ratings and checks: 0-1), 0-1 for a retrieval metric (``recall@5``); None when
    it is not known (no metric, a plug-in's metric, token counts)."""
    if metric is None:
        return None
    name = RUN_LEVEL_NAMES.get(metric, metric)
    if name in BY_NAME:
        return BY_NAME[name].scale
    if name.startswith("pass_rate_"):
        return (0.0, 1.0)
    try:
        parse_metric(name)
    except MetricError:
        return None
    return (0.0, 1.0)


def read_values(path, metric: str | None = None) -> dict[str, float]:
    """Question id -> value of a labels or predictions file on `metric`'s scale (`metric_scale`); a bad line, a
    value off the scale or a question twice names the line."""
    scale = metric_scale(metric)
    first: dict[str, int] = {}
    values = {}
    for number, record in read_numbered_jsonl(path, QuestionValue):
        if record.question_id in first:
            raise DatasetError(f"{path}:{number}: question {record.question_id!r} is listed twice (first on line "
                               f"{first[record.question_id]})")
        if scale is not None and not scale[0] <= record.value <= scale[1]:
            raise DatasetError(f"{path}:{number}: field 'value': {record.value:g} is off the scale of {metric} "
                               f"({scale[0]:g} to {scale[1]:g})")
        first[record.question_id] = number
        values[record.question_id] = record.value
    if not values:
        raise DatasetError(f"{path}: no values (one JSON object per line: {{\"question_id\": ..., \"value\": ...}})")
    return values


def run_values(run: ComparedRun, metric: str, level: str) -> dict[str, float | None]:
    """A run's per-question values of `metric` (None where a question has none: no verdict, no answer)."""
    values = run.per_question(metric, level)
    return {qid: (float(v) if math.isfinite(v) else None) for qid, v in zip(run.question_ids, values)}


def check_known(labels: dict[str, float], known, source: str, where: str) -> None:
    """Refuse labels on questions the run does not have: they label something else."""
    unknown = [qid for qid in labels if qid not in known]
    if unknown:
        shown = ", ".join(repr(q) for q in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise CalibrationError(f"{source}: {len(unknown)} labelled question(s) are not in {where}: {shown}")


def calibrate_run(run: ComparedRun, labels_file: Path, metric: str, level: str, lam: float | None = None,
                  confidence: float = 0.95) -> Calibration:
    labels = read_values(labels_file, metric)
    check_known(labels, set(run.question_ids), str(labels_file), f"run {run.label}")
    return calibrated_mean(run_values(run, metric, level), labels, lam=lam, confidence=confidence, metric=metric)


def calibrate_predictions(predictions_file: Path, labels_file: Path, lam: float | None = None,
                          confidence: float = 0.95, metric: str | None = None) -> Calibration:
    predictions, labels = read_values(predictions_file, metric), read_values(labels_file, metric)
    check_known(labels, predictions, str(labels_file), str(predictions_file))
    return calibrated_mean(predictions, labels, lam=lam, confidence=confidence, metric=metric)


def calibrated_difference(a: dict[str, float | None], b: dict[str, float | None], labels_a: dict[str, float],
                          labels_b: dict[str, float], lam: float | None = None,
                          confidence: float = 0.95) -> Estimate | None:
    """B - A calibrated (module text), or None when fewer than 2 questions are labelled in both runs or none is
    left without labels."""
    judged = [q for q in a if a[q] is not None and b.get(q) is not None]
    both = [q for q in judged if q in labels_a and q in labels_b]
    rest = [q for q in judged if q not in both]
    if len(both) < 2 or not rest:
        return None
    mean, ci, _ = ppi_mean([labels_b[q] - labels_a[q] for q in both], [b[q] - a[q] for q in both],
                           [b[q] - a[q] for q in rest], lam, confidence)
    return Estimate("calibrated B - A", float(mean), (float(ci[0]), float(ci[1])), len(judged))


@dataclass
class CalibratedRuns:
    """Calibrated means of one metric for the runs that have labels, and B - A against the first run."""

    metric: str
    calibrations: dict[str, Calibration]  # run label -> its rows
    differences: dict[str, Estimate | None] = field(default_factory=dict)  # run B's label -> B - A
    base: str | None = None

    def to_json(self) -> dict:
        return {"metric": self.metric, "runs": {label: c.to_json() for label, c in self.calibrations.items()},
                "differences": {label: (d.to_json() if d else None) for label, d in self.differences.items()},
                "baseline": self.base}

    def lines(self) -> list[str]:
        out = []
        for label, c in self.calibrations.items():
            out += ["", f"{label}: {c.metric}, {c.labelled} labelled of {c.labelled + c.unlabelled} judged; "
                        f"{c.method}, lam {c.lam:.4f}"]
            out += table_lines(c.rows, c.confidence)
            out += [f"note: {note}" for note in c.notes]
        for label, d in self.differences.items():
            shown = (f"{d.mean:+.4f} [{d.ci[0]:+.4f}, {d.ci[1]:+.4f}] over {d.n} questions" if d else
                     "not computed (needs 2 questions labelled in both runs and 1 labelled in neither)")
            out.append(f"calibrated {label} - {self.base}: {shown}")
        return out

    def html(self) -> str:
        """The report's section: one table per run, then the calibrated differences."""
        esc = html.escape
        parts = [f'<h2 id="calibrated">Calibrated means of {esc(self.metric)} (judge corrected by labels)</h2>']
        for label, c in self.calibrations.items():
            rows = "".join(f"<tr><th>{esc(r.method)}</th><td class='num'>{r.mean:.4f}</td><td class='num'>"
                           f"[{r.ci[0]:.4f}, {r.ci[1]:.4f}]</td><td class='num'>{r.n}</td></tr>" for r in c.rows)
            notes = "".join(f'<p class="note">{esc(n)}</p>' for n in c.notes)
            parts.append(f"<h3>{esc(label)}</h3><p class='note'>{c.labelled} labelled of {c.labelled + c.unlabelled}"
                         f" judged; {esc(c.method)}, lam {c.lam:.4f}</p><table><tr><th></th><th>mean</th><th>"
                         f"{c.confidence:.0%} CI</th><th>n</th></tr>{rows}</table>{notes}")
        for label, d in self.differences.items():
            if d is not None:
                parts.append(f"<p>calibrated {esc(label)} − {esc(self.base or '')}: {d.mean:+.4f} "
                             f"[{d.ci[0]:+.4f}, {d.ci[1]:+.4f}] over {d.n} questions</p>")
        return "".join(parts)


def table_lines(rows: list[Estimate], confidence: float) -> list[str]:
    title = f"{confidence:.0%} CI"
    lines = [f"  {'estimate':<13} {'mean':>8}  {title:>20}  {'n':>6}"]
    return lines + [f"  {r.method:<13} {r.mean:>8.4f}  {f'[{r.ci[0]:.4f}, {r.ci[1]:.4f}]':>20}  {r.n:>6}"
                    for r in rows]


def calibrate_runs(runs: list[ComparedRun], label_files: list[Path], metric: str, level: str,
                   lam: float | None = None, confidence: float = 0.95) -> CalibratedRuns:
    """The i-th labels file labels the i-th run's answers (fewer files than runs: the last runs have none)."""
    if len(label_files) > len(runs):
        raise CalibrationError(f"{len(label_files)} labels files for {len(runs)} runs: give one per run, in the "
                               "runs' order")
    labelled = list(zip(runs, label_files))
    result = CalibratedRuns(metric, {}, base=runs[0].label)
    values, labels = {}, {}
    for run, path in labelled:
        labels[run.label] = read_values(path, metric)
        check_known(labels[run.label], set(run.question_ids), str(path), f"run {run.label}")
        values[run.label] = run_values(run, metric, level)
        result.calibrations[run.label] = calibrated_mean(values[run.label], labels[run.label], lam=lam,
                                                         confidence=confidence, metric=metric)
    base = runs[0].label
    for run, _ in labelled[1:]:
        result.differences[run.label] = calibrated_difference(values[base], values[run.label], labels[base],
                                                              labels[run.label], lam, confidence)
    return result

