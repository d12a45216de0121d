"""`load_dataset`, `load_run` and `compare`: datasets, stored runs and their paired comparison from Python."""

from __future__ import annotations

from pathlib import Path

from ..analysis.compare import ComparedRun, CompareError, Comparison, from_report
from ..analysis.settings import PAIRED, CompareSettings
from ..data.dataset import Dataset
from ..runs.compared import level_and_metrics
from ..work.options import SettingsError, build_settings, merged
from .inputs import as_dataset


def load_dataset(path, questions=None) -> Dataset:
    """A dataset folder (built by `build_dataset`); `questions` replaces its questions: another questions.jsonl, or
    a DataFrame (list of dicts) in the agent-evaluation shape (docs/python.md)."""
    return as_dataset(path, questions)[0]


def load_run(run, runs_db=None):
    """A run's report (`EvalReport` or `AnswerReport`): a report file (``eval --out``, ``answer --out``), else a
    run of the runs history by id, unique id prefix or name (`runs_db`: its URL or SQLite file)."""
    path = Path(run)
    if path.suffix == ".json" and path.is_file():
        from ..answers.report import load_report

        return load_report(path)
    from ..runs import RunHistory

    with RunHistory(runs_db) as history:
        return history.get(str(run)).report


def _compared(run, index: int, qrels, runs_db) -> ComparedRun:
    if isinstance(run, ComparedRun):
        return run
    if hasattr(run, "questions") and hasattr(run, "means"):  # a report
        return from_report(run, f"run {index + 1}", "a report")
    if isinstance(run, (str, Path)):
        from ..runs.compared import load_run as load_compared

        return load_compared(str(run), Path(qrels) if qrels else None, runs_db)
    raise CompareError(f"run {index + 1}: expected a report, a report file, a TREC run file or a run id; got "
                       f"{type(run).__name__}")


def compare(*runs, metrics=(), test: str = PAIRED.test, correction: str = PAIRED.correction,
            alpha: float = PAIRED.alpha, granularity: str | None = None, n_resamples: int = PAIRED.n_resamples,
            seed: int = PAIRED.seed, qrels=None, runs_db=None, names=None,
            settings: CompareSettings | dict | None = None) -> Comparison:
    """Compare the second run (and any further ones) with the first, question by question: what
    ``ragretrieval compare`` does. A run is a report (what `evaluate` and `answer` return), a report file, a run id
    or name of the runs history, or a TREC run file (with `qrels`). `names` labels them (default: their files'
    names, run names, or ``run 1``, ``run 2``...). The result prints as the command's table; ``.to_json()`` and
    ``.regressions()`` as the command's ``--json`` and ``--fail-on-regression``. The statistics' settings
    (`CompareSettings`: test, correction, alpha, n_resamples, seed) are keywords, or ``settings=`` (whose values
    replace the keywords')."""
    from ..analysis.compare import compare as paired
    from ..analysis.compare import unique_labels

    if len(runs) < 2:
        raise CompareError("compare needs at least two runs")
    if settings is not None and not isinstance(settings, (CompareSettings, dict)):
        raise CompareError(f"settings must be a CompareSettings or a mapping of its fields, got "
                           f"{type(settings).__name__}")
    given = settings.model_dump(exclude_unset=True) if isinstance(settings, CompareSettings) else settings
    try:
        how = build_settings(CompareSettings, merged({"test": test, "correction": correction, "alpha": alpha,
                                                      "n_resamples": n_resamples, "seed": seed}, dict(given or {})))
    except SettingsError as error:
        raise CompareError(str(error)) from None
    loaded = [_compared(run, i, qrels, runs_db) for i, run in enumerate(runs)]
    for run, label in zip(loaded, names or ()):
        run.label = str(label)
    unique_labels(loaded)
    level, chosen = level_and_metrics(loaded, granularity, [metrics] if isinstance(metrics, str) else metrics)
    return paired(loaded, chosen, how.test, how.correction, how.alpha, level, how.n_resamples, how.seed)
