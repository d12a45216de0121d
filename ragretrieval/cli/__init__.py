"""The `ragretrieval` command: a thin layer over the Python API; each command lives in its own module.

Errors are handled here, once: a `RagretrievalError` (bad input, settings that cannot work, a service that failed;
a `SettingsError` names fields, which cli/fields.py writes as the flags)
and an operating-system error (a read-only or full disk, a missing file) become one ``Error: ...`` line and a non-zero
exit status, with every URL in it written without credentials (io/redact.py): 2 for what the user must change in the
command (a bad option, an unknown run, a missing or unreadable input), 1 for a failure while working, 130 interrupted
(Ctrl-C, with what was kept said by the command), 3 when ``--max-cost`` stopped the work. Anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

import click

from ..errors import RagretrievalError
from ..io.redact import redact_urls
from ..work.options import SettingsError
from .aliases import RENAMED, DefaultVerbGroup, resolve, warn


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
    """The top-level group: the 0.2 names resolve to their new commands (cli/aliases.py), and errors end here."""

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is None and name in RENAMED:
            command = resolve(self, ctx, RENAMED[name])
        return command

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        if name in RENAMED:
            warn(name, RENAMED[name])
        return name, command, rest

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SettingsError as error:  # the library names fields; the user typed flags
            from .fields import flag_message

            raise CommandError(flag_message(error), error.exit_code) from None
        except RagretrievalError as error:
            raise CommandError(str(error), error.exit_code) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:  # input to name anew
            raise CommandError(os_error_message(error), 2) from None
        except OSError as error:  # a failure while working: a full disk, a lost mount
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
    """The eleven entries of ``ragretrieval --help``: nouns with verbs, and the commands that are a workflow each."""
    from . import evaluate, plugins, questions_io, score, sweep
    from .answer import answer_command
    from .build_dataset import build_dataset
    from .calibrate import calibrate_command
    from .compare import compare_command
    from .export_dataset import export_dataset_command
    from .import_dataset import import_dataset_command
    from .import_traces import import_traces_command
    from .judge import judge_command
    from .judge_answers import judge_answers_command
    from .questions import questions_group
    from .questions_generate import generate_command
    from .report import report_command
    from .runs import runs_group
    from .serve import serve_command
    from .stores import stores_command
    from .worker import worker_command

    dataset = click.Group("dataset", help="Make a dataset (corpus.jsonl, questions.jsonl, manifest.json): `build` "
                                          "from a folder of Markdown files, `import` a benchmark, `export` as BEIR.")
    for command in (build_dataset, import_dataset_command, export_dataset_command):
        dataset.add_command(command)
    for command in (questions_io.import_command, questions_io.export_command, generate_command,
                    import_traces_command):
        questions_group.add_command(command)
    judge = DefaultVerbGroup(
        "judge", default_verb="chunks",
        help="Grade with an LLM: `chunks` labels the pooled top chunks of eval runs (for `eval --judgements`), "
             "`answers` judges the stored answers of an answer run, `calibrate` sets a judge's mean against human "
             "labels. The 0.2 form `judge --dataset D --runs R` still runs as `judge chunks` (with a warning).")
    for command in (judge_command, judge_answers_command, calibrate_command):
        judge.add_command(command)
    for command in (compare_command, report_command):
        runs_group.add_command(command)
    stores_command.hidden = True  # 0.2's; `plugins` lists the stores with every other kind
    for command in (dataset, questions_group, evaluate.eval_command, sweep.sweep_command, answer_command, judge,
                    runs_group, score.score_command, plugins.plugins_command, serve_command, worker_command,
                    stores_command):
        main.add_command(command)


_register()
