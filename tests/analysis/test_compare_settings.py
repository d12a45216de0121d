"""`CompareSettings` (analysis/settings.py) against hostile values: each is refused with a `SettingsError` (a
`ValueError`) naming the field, whether built directly or given to `rr.compare` as keywords or as ``settings=``."""

from __future__ import annotations

import pytest

import ragretrieval as rr
from ragretrieval.analysis.compare import CompareError
from ragretrieval.analysis.settings import MAX_RESAMPLES, MAX_SEED, PAIRED, CompareSettings
from ragretrieval.work.options import SettingsError

HUGE = 10**30
HOSTILE = [
    ("test", "T"), ("test", "paired"), ("test", 1), ("test", True), ("test", ""), ("test", None), ("test", ["t"]),
    ("correction", "fdr"), ("correction", 0), ("correction", False), ("correction", ""), ("correction", None),
    ("alpha", "five percent"), ("alpha", True), ("alpha", False), ("alpha", -0.05), ("alpha", 0), ("alpha", 1),
    ("alpha", HUGE), ("alpha", ""), ("alpha", None), ("alpha", float("nan")), ("alpha", float("inf")),
    ("alpha", [0.05]),
    ("n_resamples", "many"), ("n_resamples", True), ("n_resamples", -1), ("n_resamples", 0),
    ("n_resamples", MAX_RESAMPLES + 1), ("n_resamples", HUGE), ("n_resamples", ""), ("n_resamples", None),
    ("n_resamples", 2.5), ("n_resamples", float("nan")),
    ("seed", "lucky"), ("seed", True), ("seed", -1), ("seed", MAX_SEED + 1), ("seed", HUGE), ("seed", ""),
    ("seed", None), ("seed", 0.5),
]


@pytest.mark.parametrize("field, value", HOSTILE)
def test_a_hostile_value_is_refused_naming_its_field(field, value):
    with pytest.raises(SettingsError) as raised:
        CompareSettings(**{field: value})
    assert isinstance(raised.value, ValueError)
    assert raised.value.fields == (field,) and str(raised.value).startswith(field), str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("field, value", HOSTILE)
def test_rr_compare_refuses_it_before_reading_any_run(field, value):
    # the runs do not exist: the settings are checked first, so the message is about the field
    for given in ({field: value}, {"settings": {field: value}}):
        with pytest.raises(CompareError, match=rf"^{field}\b"):
            rr.compare("missing-a.json", "missing-b.json", **given)


def test_settings_of_another_type_or_an_unknown_field_are_named():
    with pytest.raises(CompareError, match="settings must be a CompareSettings or a mapping of its fields, got str"):
        rr.compare("a.json", "b.json", settings="t")
    with pytest.raises(CompareError, match="^n_resample: Extra inputs are not permitted"):
        rr.compare("a.json", "b.json", settings={"n_resample": 10})
    with pytest.raises(SettingsError, match="^alhpa"):
        CompareSettings(alhpa=0.1)


def test_the_edges_that_are_fine_and_the_defaults():
    fine = CompareSettings(test="bootstrap", correction="none", alpha=1e-9, n_resamples=1, seed=MAX_SEED)
    assert (fine.alpha, fine.n_resamples, fine.seed) == (1e-9, 1, MAX_SEED)
    assert CompareSettings(alpha="0.01", n_resamples="100", seed="7").model_dump() == {
        "test": "t", "correction": "holm", "alpha": 0.01, "n_resamples": 100, "seed": 7}
    assert PAIRED == CompareSettings() and (PAIRED.test, PAIRED.correction, PAIRED.alpha) == ("t", "holm", 0.05)
    with pytest.raises(ValueError):
        PAIRED.alpha = 0.1  # the defaults cannot be changed in place
