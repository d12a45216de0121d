"""``--max-cost DOLLARS``: a spending limit shared by every client of one command (the generator's and the judges'),
checked before each request that is not in the answer cache.

Before a request is sent its cost is estimated (llm/tokens.py: the character rule, scaled by what the endpoint
reported so far) and held; when what was spent plus what is held plus this estimate would pass the limit, the
request is not sent and `BudgetReached` stops the command: everything finished is in the journal and every answer
received is in the answer cache, so the same command run again (with a higher limit) asks nothing twice. After the
answer, the hold becomes the request's real cost. Answers from the cache cost nothing and are never held.

With requests running at once, others may be in flight when one is refused: they were sent, so they are waited for,
kept (work/pool.py) and paid. What `BudgetReached` says is spent is read when it is shown, after they finished: every
request the endpoint answered, in-flight ones included.
"""

from __future__ import annotations

import math
import threading

from ..errors import RagretrievalError
from ..work.stop import Stopped


class BudgetError(RagretrievalError, ValueError):
    """A spending limit that cannot be one."""

    exit_code = 2


class BudgetReached(Stopped):
    """The next request would pass the spending limit: the command stops, keeping what it finished. Its message is
    the `budget`'s account when it is shown (the requests in flight when it was raised finish first)."""

    exit_code = 3

    def __init__(self, message: str = "", budget: Budget | None = None, next_request: str = ""):
        super().__init__(message)
        self.budget = budget
        self.next_request = next_request

    def __reduce__(self):  # to another process: the account as it is now
        return type(self), (str(self),)

    def __str__(self) -> str:
        if self.budget is None:
            return super().__str__()
        return (f"stopped before passing max_cost ${self.budget.limit:.4f}: {self.budget.account()}, and "
                f"{self.next_request}")


def check_max_cost(value, field: str = "max_cost") -> float | None:
    """`value` as a spending limit in dollars: None (no limit), or a finite number >= 0 (0: only free answers)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BudgetError(f"{field} must be a number of dollars; got {value!r}")
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise BudgetError(f"{field} must be a finite number of dollars, 0 or more (leave it out for no limit); "
                          f"got {value!r}")
    return float(value)


class Budget:
    """What one command may spend, shared by its clients (thread-safe)."""

    def __init__(self, max_cost: float):
        self.limit = check_max_cost(max_cost)
        self.spent = 0.0
        self.held = 0.0
        self.requests = 0
        self._lock = threading.Lock()

    def hold(self, estimate: float, who: str) -> None:
        """Reserve `estimate` dollars for a request about to be sent, or raise `BudgetReached`."""
        with self._lock:
            if self.spent + self.held + estimate > self.limit:
                raise BudgetReached(budget=self, next_request=f"the next ({who}) would cost about ${estimate:.4f}")
            self.held += estimate

    def account(self) -> str:
        """What was spent so far, on how many requests answered."""
        with self._lock:
            return f"${self.spent:.4f} spent on {self.requests} request(s)"

    def settle(self, estimate: float, cost: float) -> None:
        """The request held for `estimate` was answered and cost `cost`."""
        with self._lock:
            self.held -= estimate
            self.spent += cost
            self.requests += 1

    def release(self, estimate: float) -> None:
        """The request held for `estimate` was not answered (an error)."""
        with self._lock:
            self.held -= estimate
