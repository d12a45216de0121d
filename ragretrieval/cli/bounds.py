"""Options whose values carry the library's bounds (work/limits.py): the same rule the settings models apply, shown
as a usage error naming the flag (``Invalid value for '--timeout': must be greater than 0, got '-1'``, exit 2)."""

from __future__ import annotations

import click

from ..work.limits import Port, Price, Retries, Timeout, Wait, checked, problem_with


class Bounded(click.ParamType):
    def __init__(self, bounded, name: str):
        self.bounded, self.name = bounded, name

    def convert(self, value, param, ctx):
        problem = problem_with(self.bounded, value)
        if problem is not None:
            self.fail(problem, param, ctx)
        return checked("value", value, self.bounded)


SECONDS = Bounded(Timeout, "SECONDS")
WAIT = Bounded(Wait, "SECONDS")
RETRIES = Bounded(Retries, "INTEGER")
PRICE = Bounded(Price, "DOLLARS")
PORT = Bounded(Port, "PORT")
