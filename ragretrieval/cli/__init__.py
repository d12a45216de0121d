"""The `ragretrieval` command: a thin layer over the Python API; each command lives in its own module."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragretrieval")
def main() -> None:
    """Measure how well RAG retrieval works, with numbers that agree with trec_eval."""


def _register() -> None:
    from . import build_dataset, evaluate, questions_io, runs, score, sweep
    from .compare import compare_command
    from .judge import judge_command
    from .report import report_command
    from .stores import stores_command

    for command in (build_dataset.build_dataset, evaluate.eval_command, score.score_command, runs.runs_group,
                    sweep.sweep_command, compare_command, report_command, judge_command, stores_command,
                    questions_io.import_command, questions_io.export_command):
        main.add_command(command)


_register()
