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
from .aliases import RENAMED, resolve, warn
from .lazy import Lazy, LazyGroup
from .nouns import dataset_group, judge_group, questions_group, runs_group


class CommandError(click.ClickException):
    """What the user sees of a `RagretrievalError`: its message (any URL in it without its credentials,
    io/redact.py), and its exit status."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(redact_urls(message))
        self.exit_code = exit_code


def os_error_message(error: OSError) -> str:
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


def error_message(error: RagretrievalError) -> str:
    """The one line the user reads; a `SettingsError` names fields, the user typed flags (cli/fields.py)."""
    from ..work.options import SettingsError  # imported here, as pydantic is: `--help` needs neither

    if isinstance(error, SettingsError):
        from .fields import flag_message

        return flag_message(error)
    return str(error)


class Commands(LazyGroup):
    """The top-level group, its commands imported when they run (cli/lazy.py): the 0.2 names resolve to their new
    commands (cli/aliases.py), and errors end here."""

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
        except RagretrievalError as error:
            raise CommandError(error_message(error), error.exit_code) from None
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


# the commands that are a workflow each, beside the nouns with verbs (cli/nouns.py); `stores` is 0.2's: `plugins`
# lists the stores with every other kind
COMMANDS = {
    "eval": Lazy(".evaluate:eval_command", "Evaluate retrieval on a dataset: chunk, embed (cached), index, search, "
                 "score."),
    "sweep": Lazy(".sweep:sweep_command", "Evaluate every combination of models x retrievers x rerankers x stores x "
                  "chunkings; each cell is a stored run."),
    "answer": Lazy(".answer:answer_command", "Answer every question of a dataset and score the answers: contexts "
                   "(retrieved or given), an answer from the generator, its citations, the deterministic checks of "
                   "each question, the LLM judges asked for (--judge), and the retrieval metrics of the same "
                   "ranking."),
    "score": Lazy(".score:score_command", "Score RUN (qid Q0 docid rank score tag) against QRELS (qid 0 docid "
                  "label); gzip files are read as they are."),
    "plugins": Lazy(".plugins:plugins_command", "List the retrievers, embedders, rerankers, vector stores, answer "
                    "generators, judges and answer checks that are installed, where each comes from and what it "
                    "does."),
    "serve": Lazy(".serve:serve_command", "Serve question sets, evaluations and their results on "
                  "http://HOST:PORT."),
    "worker": Lazy(".worker:worker_command", "Answer the questions of pending and running evaluations until stopped "
                   "(Ctrl-C or SIGTERM: the questions in hand are finished, the rest given back)."),
    "stores": Lazy(".stores:stores_command", "List the installed vector stores (use one with `eval --store NAME`).",
                   hidden=True),
}


@click.group(cls=Commands, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ragretrieval")
def main() -> None:
    """Measure how well RAG retrieval and answers work, with numbers that agree with trec_eval."""


main.add_command(dataset_group)
main.add_command(questions_group)
main.add_command(judge_group)
main.add_command(runs_group)
