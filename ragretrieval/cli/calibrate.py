"""``ragretrieval calibrate RUN --labels FILE --metric NAME``: a judge metric's mean corrected by a person's labels on
some of the answers (prediction-powered inference), beside the judge alone and the labels alone
(docs/answers/calibrate.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import RagretrievalError
from .compare import CompareFailed, load_runs, runs_options

LAM = click.FloatRange(0, 1)


def calibration_options(command):
    """--lam and --confidence, shared by `calibrate`, `compare` and `report`."""
    command = click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
                           show_default=True, help="Confidence level of the intervals.")(command)
    return click.option("--lam", type=LAM, default=None,
                        help="PPI's lambda: 1 is classic PPI, 0 the labels alone [default: power-tuned, PPI++].")(
        command)


@click.command("calibrate")
@click.argument("run", required=False)
@click.option("--labels", "labels_file", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A person's values on some answers: JSON Lines of {\"question_id\": ..., \"value\": ...}.")
@click.option("--metric", default=None, help="The run's per-question metric the labels are on (required with RUN).")
@click.option("--predictions", "predictions_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The judge's values from a file ({\"question_id\": ..., \"value\": ...} per line) instead of RUN.")
@calibration_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the table.")
@runs_options
def calibrate_command(run, labels_file, metric, predictions_file, lam, confidence, as_json, granularity, qrels,
                      runs_db) -> None:
    """Three estimates of a judge metric's mean: the judge alone (biased by the judge), the labels alone (a wide
    interval) and the calibrated one (the judge corrected by the labels: unbiased, narrower than the labels alone
    when the judge agrees with people). RUN is a run id or name of the history, or a report file. Bad input exits
    with status 2, as in `compare`."""
    from ..analysis.calibrated_runs import calibrate_predictions, calibrate_run

    if (run is None) == (predictions_file is None):
        raise click.UsageError("give RUN or --predictions FILE (one of them)")
    try:
        if predictions_file is not None:
            calibration = calibrate_predictions(predictions_file, labels_file, lam, confidence, metric)
            source = str(predictions_file)
        else:
            if not metric:
                raise click.UsageError("--metric NAME says which of the run's metrics the labels are on")
            loaded = load_runs([run], qrels, runs_db)[0]
            level = granularity or ("answer" if getattr(loaded.report, "kind", None) == "answer" else "doc")
            calibration = calibrate_run(loaded, labels_file, metric, level, lam, confidence)
            source = loaded.label
    except RagretrievalError as error:  # bad input: exit 2, as `compare`
        raise CompareFailed(str(error)) from None
    if as_json:
        click.echo(json.dumps({"source": source, **calibration.to_json()}, ensure_ascii=False, indent=1,
                              allow_nan=False))
        return
    from ..analysis.calibrated_runs import table_lines

    c = calibration
    click.echo(f"{c.metric or 'values'} of {source}: {c.labelled} labelled of {c.labelled + c.unlabelled} judged; "
               f"{c.method}, lam {c.lam:.4f}")
    for line in table_lines(c.rows, c.confidence) + [f"note: {note}" for note in c.notes]:
        click.echo(line)
