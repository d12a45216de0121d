"""``ragretrieval runs report RUN... --out out.html``: the self-contained HTML report (docs/compare.md)."""

from __future__ import annotations

from pathlib import Path

import click

from ..analysis.compare import CompareError
from ..analysis.html import write_html_report
from ..analysis.stats import StatsError
from .aliases import renamed_option
from .compare import (
    CompareFailed,
    calibrate_options,
    calibrated,
    compare_settings_options,
    load_runs,
    resolve_level,
    runs_options,
)
from .fields import comma_separated
from .runs import open_history


def sweep_runs(sweep_id: str, runs_db) -> list[str]:
    """The ids of a sweep's runs (tagged with its id), oldest first; none is a usage error."""
    with open_history(runs_db) as history:
        ids = [s.id for s in history.list(tag=sweep_id)]
    if not ids:
        raise click.BadParameter(f"no run is tagged {sweep_id!r} in the runs history", param_hint="--sweep")
    return ids


@click.command("report")
@click.argument("runs", nargs=-1)
@click.option("--sweep", "sweep_id", default=None,
              help="Add every run of this sweep (its id, as `sweep` prints it): the frontier of its cells.")
@renamed_option("--out", "--html", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
               help="HTML file to write (atomically).")
@click.option("-m", "--metric", "metrics", multiple=True, callback=comma_separated,
              help="Metrics of the comparison table; the first also drives the difference plot "
                   "[default: ndcg, recall, mrr at the first run's top-k].")
@click.option("--k", "k", type=click.IntRange(min=1), default=None,
              help="Cutoff of the newly fail/pass lists [default: the first run's top-k].")
@compare_settings_options
@calibrate_options
@runs_options
def report_command(runs, sweep_id, out, metrics, k, test, correction, alpha, n_resamples, seed, label_files,
                   calibrate_metric,
                   calibrate_lam, granularity, qrels, runs_db) -> None:
    """Write one self-contained HTML page about RUN (report files from `eval --out` or history run ids): the
    configurations, a summary, plots, the comparison against the first run, changed questions and diagnostics;
    with --calibrate-labels, the calibrated means of a judge metric."""
    if sweep_id:
        runs = [*runs, *sweep_runs(sweep_id, runs_db)]
    if not runs:
        raise click.UsageError("give RUN arguments or --sweep ID")
    loaded = load_runs(runs, qrels, runs_db)
    granularity, chosen = resolve_level(loaded, granularity, metrics)
    if granularity == "answer":
        metrics = chosen
    calibration = calibrated(loaded, label_files, calibrate_metric, metrics or chosen, granularity, calibrate_lam)
    classes = None
    if granularity == "answer" and all(getattr(r.report, "kind", None) == "answer" for r in loaded):
        from ..answers.failures import compare_classes

        classes = compare_classes([(r.label, r.report) for r in loaded])
    try:
        write_html_report(loaded, out, granularity=granularity, metrics=metrics or None, test=test,
                          correction=correction, alpha=alpha, k=k, n_resamples=n_resamples, seed=seed,
                          calibration=calibration, classes=classes)
    except (CompareError, StatsError) as error:
        raise CompareFailed(str(error)) from None
    click.echo(f"report written to {out}", err=True)
