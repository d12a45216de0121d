"""``--dry-run`` and ``--max-cost``, shared by ``answer``, ``judge-answers`` and ``build-dataset --generator llm``
(docs/answers.md, "Cost before the bill")."""

from __future__ import annotations

import click

from ..llm.budget import Budget, BudgetError, BudgetReached, check_max_cost


def _max_cost(ctx, param, value):
    try:
        return check_max_cost(value)
    except BudgetError as error:
        raise click.BadParameter(str(error).replace("max_cost", "--max-cost")) from None


def cost_options(command):
    command = click.option(
        "--max-cost", type=float, default=None, callback=_max_cost, metavar="DOLLARS",
        help="Stop before the spend (at the given prices) would pass DOLLARS; finished work is kept and the same "
             "command continues it. 0: only answers already in the cache.")(command)
    return click.option("--dry-run", is_flag=True,
                        help="Print the requests this would send, their estimated tokens and cost at the given "
                             "prices, and send nothing.")(command)


def make_budget(max_cost: float | None, prices) -> Budget | None:
    """The command's budget, or None; refused when no price is given (every request would cost $0)."""
    if max_cost is None:
        return None
    if not any(prices):
        raise click.UsageError("--max-cost needs the prices of the model(s) asked (--price-in/--price-out, "
                               "--judge-price-in/--judge-price-out): without them every request costs $0")
    return Budget(max_cost)


def show_plan(plan, verbose: bool) -> None:
    for line in plan.lines(verbose):
        click.echo(line)


def stopped_by_budget(error: BudgetReached, kept: str) -> BudgetReached:
    """`error` with what was kept and how to go on."""
    said = str(error).replace("max_cost", "--max-cost")
    return BudgetReached(f"{said}; {kept}. Run the same command again (with a higher --max-cost, or none) to "
                         "finish: nothing is asked twice")
