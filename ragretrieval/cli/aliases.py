"""The 0.2 command names, kept for one minor version: each is a hidden alias that prints one deprecation line to
stderr and then runs the new command as it is (same options, same output, same exit status).

The table is the one place that knows the old spellings: `Commands` (cli/__init__.py) resolves them, the tests run
each of them, docs/cli.md lists them.
"""

from __future__ import annotations

import click

from .lazy import LazyGroup

REMOVED_IN = "0.4"

# old top-level name -> its new spelling (a command path; `stores` stays a hidden command of its own, printing its 0.2
# table, while `plugins --kind stores` lists the stores with their options)
RENAMED: dict[str, str] = {
    "build-dataset": "dataset build",
    "import-dataset": "dataset import",
    "export-dataset": "dataset export",
    "import-questions": "questions import",
    "export-questions": "questions export",
    "import-traces": "questions import-traces",
    "judge-answers": "judge answers",
    "calibrate": "judge calibrate",
    "compare": "runs compare",
    "report": "runs report",
    "stores": "plugins --kind stores",
}


def warn(old: str, new: str) -> None:
    """The one deprecation line."""
    click.echo(f"warning: '{old}' is now '{new}'; the old name stops working in {REMOVED_IN}", err=True)


def resolve(group: click.Group, ctx: click.Context, spelling: str) -> click.Command | None:
    """The command `spelling` (``dataset build``) names below `group` (None if some step is missing)."""
    command: click.Command | None = group
    for name in spelling.split():
        if not isinstance(command, click.Group):
            return None
        command = command.get_command(ctx, name)
    return command


class DefaultVerbGroup(LazyGroup):
    """A group whose name was a command in 0.2 (``judge``): arguments that do not start with one of its verbs are
    the old command's, run as `default_verb` after one deprecation line (``judge --dataset D`` -> ``judge chunks
    --dataset D``). ``judge`` alone, or with ``--help``, shows the group."""

    def __init__(self, *args, default_verb: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.default_verb = default_verb

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        help_only = set(args) <= set(ctx.help_option_names)
        if args and not help_only and args[0] not in self.list_commands(ctx):
            warn(ctx.info_name, f"{ctx.info_name} {self.default_verb}")
            args = [self.default_verb, *args]
        return super().parse_args(ctx, args)


class OldSpellings(click.Option):
    """An option whose 0.2 flags (`old`) still parse, silently, but are left out of ``--help`` and of error
    messages, which name the new flag (``--concurrency``, not ``--threads``); docs/cli.md lists them."""

    def __init__(self, *args, old: tuple[str, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.old = tuple(old)

    def _without_old(self, method, ctx):
        kept = self.opts
        self.opts = [flag for flag in kept if flag not in self.old] or kept
        try:
            return method(ctx)
        finally:
            self.opts = kept

    def get_help_record(self, ctx):
        return self._without_old(super().get_help_record, ctx)

    def get_error_hint(self, ctx):
        return self._without_old(super().get_error_hint, ctx)


def renamed_option(new: str, *old: str, **settings):
    """``click.option(new, *old, ...)`` with the old flags kept out of the help (`OldSpellings`)."""
    return click.option(new, *old, cls=OldSpellings, old=tuple(f for f in old if f.startswith("-")), **settings)
