"""`parallel_map` when a call stops the work (``--max-cost`` reached): the calls already running were sent, so their
results are still yielded, then the stop is raised; any other error drops them."""

from __future__ import annotations

import threading

import pytest

from ragretrieval.llm.budget import BudgetReached
from ragretrieval.work.pool import parallel_map


def test_a_call_that_stops_lets_the_running_ones_finish_and_be_yielded():
    started = threading.Barrier(3)  # items 0, 1 and 2 run together

    def work(item):
        if item < 3:
            started.wait(timeout=5)
        if item == 2:
            raise BudgetReached("limit")
        return item * 10

    seen = []
    with pytest.raises(BudgetReached, match="limit"):
        for index, result in parallel_map(work, range(10), 3):
            seen.append((index, result))
    assert sorted(seen) == [(0, 0), (1, 10)]  # finished, yielded; nothing after the stop was started


def test_any_other_error_is_raised_at_once():
    def work(item):
        if item == 1:
            raise ValueError("broken")
        return item

    with pytest.raises(ValueError, match="broken"):
        list(parallel_map(work, range(5), 1))
