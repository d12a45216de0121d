"""``ragretrieval compare RUN_A RUN_B [RUN_C ...]``: paired significance tests between runs (docs/compare.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..analysis.compare import DEFAULT_METRICS, CompareError, compare, unique_labels
from ..analysis.noise import noise_bounds, noise_lines, within_noise
from ..analysis.settings import CORRECTIONS, MAX_SEED, PAIRED, TESTS, CompareSettings
from ..analysis.stats import StatsError
from ..scoring.trec import TrecFormatError
from .fields import comma_separated
from .runs import runs_db_option


class CompareFailed(click.ClickException):
    """Bad input: exit code 2, so CI can tell it from a regression (exit code 1)."""

    exit_code = 2


def load_runs(specs, qrels: Path | None, runs_db: str | None):
    """Load every RUN argument (report file, TREC run with --qrels, or history id) with distinct labels."""
    from ..runs.compared import load_run  # opens the history (SQLAlchemy): imported when a command runs, not --help

    try:
        runs = [load_run(spec, qrels, runs_db) for spec in specs]
    except (CompareError, TrecFormatError, OSError) as error:
        raise CompareFailed(str(error)) from None
    unique_labels(runs)
    return runs


def runs_options(command):
    """Options shared by `compare` and `report`: where runs come from, and which level to score."""
    command = runs_db_option(command)
    command = click.option("--qrels", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
                           help="TREC qrels for RUN arguments that are TREC run files.")(command)
    command = click.option("--granularity", type=click.Choice(["doc", "chunk", "answer"]), default=None,
                           help="Level of the metrics: retrieval (doc, chunk) or answer [default: answer when every "
                                "run is an answer run, else doc].")(command)
    return command


def calibrate_options(command):
    """--calibrate-labels, --calibrate-metric and --calibrate-lam, shared by `compare` and `report`."""
    command = click.option("--calibrate-lam", type=click.FloatRange(0, 1), default=None,
                           help="PPI's lambda for the calibrated means: 1 classic PPI, 0 the labels alone "
                                "[default: power-tuned, PPI++].")(command)
    command = click.option("--calibrate-metric", default=None,
                           help="The metric the labels are on [default: the first metric compared].")(command)
    return click.option("--calibrate-labels", "label_files", multiple=True,
                        type=click.Path(dir_okay=False, path_type=Path),
                        help="A person's labels on a run's answers ({\"question_id\": ..., \"value\": ...} per "
                             "line): one per RUN, in the same order; adds calibrated means "
                             "(docs/answers/calibrate.md).")(command)


def calibrated(runs, label_files, metric: str | None, metrics, level: str, lam: float | None):
    """The runs' calibrated means of `metric` (the first of `metrics` by default), or None without labels."""
    if not label_files:
        if metric is not None or lam is not None:
            raise click.UsageError("--calibrate-metric and --calibrate-lam need --calibrate-labels")
        return None
    from ..analysis.calibrated_runs import calibrate_runs
    from ..errors import RagretrievalError

    try:
        return calibrate_runs(runs, list(label_files), metric or metrics[0], level, lam)
    except RagretrievalError as error:
        raise CompareFailed(str(error)) from None


def resolve_level(runs, granularity: str | None, metrics) -> tuple[str, tuple[str, ...]]:
    """The level and metrics to compare (`level_and_metrics`); bad input exits 2."""
    from ..runs.compared import level_and_metrics

    try:
        return level_and_metrics(runs, granularity, metrics)
    except CompareError as error:
        raise CompareFailed(str(error)) from None


def failure_classes(runs):
    """The failure-class transitions between answer runs (None when a run is not an answer run)."""
    if not all(getattr(r.report, "kind", None) == "answer" for r in runs):
        return None
    from ..answers.failures import compare_classes

    return compare_classes([(r.label, r.report) for r in runs])


def compare_settings_options(command):
    """--test, --correction, --alpha, --n-resamples and --seed: `CompareSettings`' fields, with its defaults and
    help (``compare`` and ``report``)."""
    fields = CompareSettings.model_fields

    def option(flag: str, name: str, kind):
        return click.option(flag, name, type=kind, default=getattr(PAIRED, name), show_default=True,
                            help=fields[name].description + ".")

    for declared in reversed((
            option("--test", "test", click.Choice(TESTS)),
            option("--correction", "correction", click.Choice(CORRECTIONS)),
            option("--alpha", "alpha", click.FloatRange(0, 1, min_open=True, max_open=True)),
            option("--n-resamples", "n_resamples", click.IntRange(min=1)),
            option("--seed", "seed", click.IntRange(0, MAX_SEED)))):
        command = declared(command)
    return command


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@click.option("-m", "--metric", "metrics", multiple=True, callback=comma_separated,
              help=f"Metric to compare, repeatable or comma-separated [default: {', '.join(DEFAULT_METRICS)}; "
                   "answer runs: their answer metrics, checks_score first].")
@compare_settings_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout instead of the table.")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any metric is significantly worse than RUN_A.")
@calibrate_options
@runs_options
def compare_command(runs, metrics, test, correction, alpha, n_resamples, seed, as_json, fail_on_regression,
                    label_files, calibrate_metric, calibrate_lam, granularity, qrels, runs_db) -> None:
    """Compare RUN_B (and more) against RUN_A question by question. A RUN is a report file from `eval --out`,
    a run id or name from the runs history, or a TREC run file (with --qrels)."""
    if len(runs) < 2:
        raise CompareFailed("compare needs at least two runs")
    loaded = load_runs(runs, qrels, runs_db)
    granularity, metrics = resolve_level(loaded, granularity, metrics)
    try:
        result = compare(loaded, metrics, test, correction, alpha, granularity, n_resamples, seed)
    except (CompareError, StatsError) as error:
        raise CompareFailed(str(error)) from None
    calibration = calibrated(loaded, label_files, calibrate_metric, metrics, granularity, calibrate_lam)
    classes = failure_classes(loaded)
    bounds = noise_bounds(loaded, result)
    if as_json:
        data = result.to_json() | ({"calibrated": calibration.to_json()} if calibration else {})
        data |= {"failure_classes": classes.to_json()} if classes else {}
        data |= {"judge_noise": [{"run": label, "metric": metric, **b} for (label, metric), b in bounds.items()]}
        click.echo(json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False))
    else:
        click.echo(result.table())
        for line in ((calibration.lines() if calibration else []) + noise_lines(bounds, result.alpha)
                     + (classes.lines() if classes else [])):
            click.echo(line)
    noisy = within_noise(result, bounds)
    for label, metric, diff, mde in noisy if fail_on_regression else []:
        click.echo(f"not failing on {metric} ({label}): significantly worse ({diff:+.4f}), but within the judges' "
                   f"measured noise (smallest detectable difference {mde:.4f})", err=True)
    regressions = [(label, metric) for label, metric in result.regressions()
                   if not any(n[0] == label and n[1] == metric for n in noisy)]
    if fail_on_regression and regressions:
        listed = ", ".join(f"{metric} ({label})" for label, metric in regressions)
        click.echo(f"significantly worse than {result.runs[0]}: {listed}", err=True)
        sys.exit(1)
