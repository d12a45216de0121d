"""The `ragretrieval` command: a thin layer over the Python API; each command lives in its own module."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragretrieval")
def main() -> None:
    """Measure how well RAG retrieval works, with numbers that agree with trec_eval."""


def _register() -> None:
    from . import questions_io
    from . import build_dataset, evaluate, runs, sweep
    from .stores import stores_command
    from .compare import compare_command
    from .judge import judge_command
    from .report import report_command

    main.add_command(build_dataset.build_dataset)
    main.add_command(evaluate.eval_command)
    main.add_command(stores_command)
    main.add_command(questions_io.import_command)
    main.add_command(questions_io.export_command)
    main.add_command(runs.runs_group)
    main.add_command(sweep.sweep_command)
    main.add_command(compare_command)
    main.add_command(report_command)
    main.add_command(judge_command)


_register()
