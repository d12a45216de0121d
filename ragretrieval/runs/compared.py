"""The runs `compare`, `report` and `calibrate` read, found by what the user typed: a report file (``eval --out`` or
``answer --out``), a TREC run file scored against qrels, or a run of the history by id, id prefix or name.

This sits in runs/, above analysis/ and answers/: finding a run needs the history and the answer report's loader,
which analysis (the statistics on runs already found) must not import. Problems are `CompareError`s, as the
comparison's own are.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis.compare import DEFAULT_METRICS, ComparedRun, CompareError, from_report, from_trec
from ..answers.report import load_report
from ..evaluation.report import ReportError
from ..scoring.answer_metrics import FORMER_NAMES, ORDER
from ..work.options import SettingsError
from .history import RunHistory, RunHistoryError, RunNotFoundError


def read_report_file(path: Path):
    """An ``eval --out`` or ``answer --out`` report."""
    try:
        return load_report(path)
    except ReportError as error:
        raise CompareError(str(error)) from None


def from_history(ref: str, runs_db: str | None) -> ComparedRun:
    """A run of the history by id, id prefix or name (`RunHistory.get`)."""
    try:
        history = RunHistory(url=runs_db)
        try:
            stored = history.get(ref)
        finally:
            history.close()
    except RunNotFoundError as error:
        raise CompareError(f"{ref!r} is neither a file nor a run in the history: {error}") from None
    except RunHistoryError as error:
        raise CompareError(str(error)) from None
    return from_report(stored.report, stored.name or stored.id, f"run {stored.id}")


def load_run(spec: str, qrels: Path | None = None, runs_db: str | None = None) -> ComparedRun:
    """A report JSON file, a TREC run file (with `qrels`), or a run id or name from the history. An existing file
    wins; otherwise the history is asked, so a run named ``bm25 300/50`` is found even though it looks like a path."""
    path = Path(spec)
    if not path.is_file():
        return from_history(spec, runs_db)
    with path.open("rb") as f:
        head = f.read(64).lstrip()
    if head.startswith(b"{"):
        return from_report(read_report_file(path), path.stem, str(path))
    if qrels is None:
        raise SettingsError(f"{path}: not a JSON report; to compare a TREC run file, give qrels, the TREC "
                            "judgements to score it against", ["qrels"])
    return from_trec(path, qrels)


def level_and_metrics(runs: list[ComparedRun], granularity: str | None = None, metrics=()) -> tuple[str, tuple]:
    """The level and metrics to compare when not named: answer runs compare their answer metrics (checks_score first),
    others `DEFAULT_METRICS` at document level."""
    all_answers = all(getattr(r.report, "kind", None) == "answer" for r in runs)
    level = granularity or ("answer" if all_answers else "doc")
    if level == "answer":  # `-m score`, the checks' score's former name, still names it (CHANGELOG: until 0.4)
        metrics = tuple(FORMER_NAMES.get(name, name) for name in metrics)
    if metrics or level != "answer":
        return level, tuple(metrics) or DEFAULT_METRICS
    means = runs[0].report.means.get("answer", {}) if runs[0].report is not None else {}
    found = tuple(name for name in ORDER if name in means and not name.startswith("pass_rate_"))
    if not found:
        raise CompareError(f"run {runs[0].label} has no answer metrics to compare; name some (metrics)")
    return level, found
