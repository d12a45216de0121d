"""`RemoteCall` (work/remote.py) against hostile values: each is refused with a `SettingsError` (a `ValueError`, exit
2 on the command line) whose message and `fields` name the part at fault, built directly or through ``but``."""

from __future__ import annotations

import pytest

from ragretrieval.llm.client import LLM_CALLS
from ragretrieval.work.options import SettingsError
from ragretrieval.work.remote import PARTS, RemoteCall

GOOD = {"timeout": 10.0, "retries": 2, "backoff": 0.5, "concurrency": 3}
HUGE = 10**30
# value -> the parts that refuse it (zero: no retry and no wait are allowed; a timeout or no request at once is not)
HOSTILE = [
    ("ten", PARTS),              # a wrong type
    (True, PARTS),               # a boolean for a number: not a timeout of 1 second
    (False, PARTS),
    (-1, PARTS),                 # negative
    (0, ("timeout", "concurrency")),
    (HUGE, PARTS),               # far above any use: a day, a hundred retries, 256 at once
    ("", PARTS),                 # an empty text (an empty form field)
    (None, PARTS),
    ([3], PARTS),
    (float("nan"), PARTS),
    (float("inf"), PARTS),
    (2.5, ("retries", "concurrency")),  # not whole
]
CASES = [(part, value) for value, parts in HOSTILE for part in parts]


def _refused(build, field: str) -> SettingsError:
    with pytest.raises(SettingsError) as raised:
        build()
    assert isinstance(raised.value, ValueError)
    assert raised.value.fields[0] == field and str(raised.value).startswith(field), str(raised.value)
    assert "\n" not in str(raised.value)  # one line
    return raised.value


@pytest.mark.parametrize("part, value", CASES)
def test_a_hostile_value_is_refused_naming_its_part(part, value):
    _refused(lambda: RemoteCall(**{**GOOD, part: value}), part)


@pytest.mark.parametrize("part, value", CASES)
def test_but_refuses_it_too(part, value):
    _refused(lambda: LLM_CALLS.but(**{part: value}), part)


@pytest.mark.parametrize("alias, part", [("max_retries", "retries"), ("sleep_time", "backoff")])
def test_the_settings_names_are_accepted_and_their_bad_values_named_as_given(alias, part):
    assert getattr(RemoteCall(**{**{k: v for k, v in GOOD.items() if k != part}, alias: 0}), part) == 0
    assert getattr(LLM_CALLS.but(**{alias: 0}), part) == 0
    _refused(lambda: LLM_CALLS.but(**{alias: -1}), alias)
    _refused(lambda: RemoteCall(**{**{k: v for k, v in GOOD.items() if k != part}, alias: True}), alias)


@pytest.mark.parametrize("alias, part", [("max_retries", "retries"), ("sleep_time", "backoff")])
def test_a_part_given_under_both_its_names_is_refused_not_silently_one(alias, part):
    error = _refused(lambda: RemoteCall(**{**GOOD, alias: 1}), part)
    assert alias in str(error)
    _refused(lambda: LLM_CALLS.but(**{part: 1, alias: 2}), part)


def test_an_unknown_or_missing_part_is_named():
    _refused(lambda: RemoteCall(**GOOD, timout=3), "timout")
    _refused(lambda: RemoteCall(**{k: v for k, v in GOOD.items() if k != "concurrency"}), "concurrency")
    _refused(lambda: LLM_CALLS.but(threads=2), "threads")


def test_numbers_given_as_text_are_read_and_a_call_is_frozen():
    call = RemoteCall(timeout="2.5", retries="0", backoff="0", concurrency="1")
    assert (call.timeout, call.retries, call.backoff, call.concurrency) == (2.5, 0, 0.0, 1)
    with pytest.raises(ValueError):
        call.timeout = 1.0  # a caller's declared defaults cannot be changed in place
