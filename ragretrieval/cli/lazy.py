"""Commands imported only when they run: ``ragretrieval --help`` lists every command from a table, without importing
the libraries behind them (SciPy, SQLAlchemy, NumPy ...), so the listing takes a fraction of a second.

Each entry names where its command lives (``"module:attribute"``, relative to this package) and the first sentence
of its help, the text click shortens to a line of the listing; tests/cli/test_lazy_commands.py fails when that
sentence differs from the loaded command's own.
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click


class Lazy(NamedTuple):
    """A command not imported yet: where it lives, its help's first sentence, and whether ``--help`` lists it."""

    target: str
    short_help: str
    hidden: bool = False


class LazyGroup(click.Group):
    """A group whose `lazy` commands are imported on first use (`get_command`); its listing reads their stored
    sentences instead, shortened to the width of the terminal exactly as click shortens a loaded command's help."""

    def __init__(self, *args, lazy: dict[str, Lazy] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in self.lazy:
            self.add_command(self.load(name), name)
        return super().get_command(ctx, name)

    def load(self, name: str) -> click.Command:
        entry = self.lazy[name]
        module, _, attribute = entry.target.partition(":")
        command = getattr(importlib.import_module(module, __package__), attribute)
        command.hidden = command.hidden or entry.hidden
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, with a stand-in (the stored sentence as its help) for each command not loaded yet."""
        listed = click.Group(self.name, commands={
            name: self.commands.get(name) or click.Command(name, help=self.lazy[name].short_help,
                                                             hidden=self.lazy[name].hidden)
            for name in self.list_commands(ctx)})
        listed.format_commands(ctx, formatter)
