"""The `ragretrieval` command: a thin layer over the Python API; each command lives in its own module.

Errors are handled here, once: a `RagretrievalError` (bad input, settings that cannot work, a service that failed;
a `SettingsError` names fields, which cli/fields.py writes as the flags)
and an operating-system error (a read-only or full disk, a missing file) become one ``Error: ...`` line and a non-zero
exit status, with every URL in it written without credentials (io/redact.py); Ctrl-C exits 130 with what was kept
said by the command. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import click

from ..errors import RagretrievalError
from ..io.redact import redact_urls
from ..work.options import SettingsError


class CommandError(click.ClickException):
    """What the user sees of a `RagretrievalError`: its message (any URL in it without its credentials,
    io/redact.py), and its exit status."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(redact_urls(message))
        self.exit_code = exit_code


def os_error_message(error: OSError) -> str:
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


class Commands(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SettingsError as error:  # the library names fields; the user typed flags
            from .fields import flag_message

            raise CommandError(flag_message(error), error.exit_code) from None
        except RagretrievalError as error:
            raise CommandError(str(error), error.exit_code) from None
        except OSError as error:
            raise CommandError(os_error_message(error)) from None
        except KeyboardInterrupt:
            raise CommandError("interrupted; finished work is kept (caches, journals, stored runs): run the same "
                               "command again to continue", 130) from None
        except click.ClickException as error:  # a usage error may quote an option's value: a URL with its token
            error.message = redact_urls(error.message)
            raise


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragretrieval")
def main() -> None:
    """Measure how well RAG retrieval and answers work, with numbers that agree with trec_eval."""


def _register() -> None:
    from . import build_dataset, evaluate, plugins, questions_io, runs, score, sweep
    from .answer import answer_command
    from .calibrate import calibrate_command
    from .compare import compare_command
    from .export_dataset import export_dataset_command
    from .import_dataset import import_dataset_command
    from .import_traces import import_traces_command
    from .judge import judge_command
    from .judge_answers import judge_answers_command
    from .questions import questions_group
    from .report import report_command
    from .serve import serve_command
    from .stores import stores_command
    from .worker import worker_command

    for command in (build_dataset.build_dataset, evaluate.eval_command, score.score_command, runs.runs_group,
                    sweep.sweep_command, compare_command, report_command, judge_command, stores_command,
                    plugins.plugins_command, questions_io.import_command, questions_io.export_command,
                    answer_command, judge_answers_command, import_dataset_command, export_dataset_command,
                    import_traces_command, serve_command, worker_command, questions_group, calibrate_command):
        main.add_command(command)


_register()
