"""``--dry-run``, and what ``--max-cost`` (a settings field: ``max_cost``) says when it stops a command; shared by
``answer``, ``judge-answers`` and ``build-dataset --generator llm`` (docs/answers/cost.md, "Cost before the bill")."""

from __future__ import annotations

import click

from ..llm.budget import BudgetError, BudgetReached, check_max_cost

dry_run_option = click.option("--dry-run", is_flag=True,
                              help="Print the requests this would send, their estimated tokens and cost at the given "
                                   "prices, and send nothing.")


def stopped_by_budget(error: BudgetReached, kept: str) -> BudgetReached:
    """`error` with what was kept and how to go on."""
    said = str(error).replace("max_cost", "--max-cost")
    return BudgetReached(f"{said}; {kept}. Run the same command again (with a higher --max-cost, or none) to "
                         "finish: nothing is asked twice")


def max_cost_option(ctx, param, value):
    """A click callback: ``--max-cost`` checked by the library's rule (`check_max_cost`)."""
    try:
        return check_max_cost(value)
    except BudgetError as error:
        raise click.BadParameter(str(error).replace("max_cost", "--max-cost")) from None
