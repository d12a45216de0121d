"""`CompareSettings`: how runs are compared question by question (the paired test, the multiple-testing
correction, the significance level, the resamples and their seed), declared once for ``runs compare``, ``runs
report``, the web app's compare page and API, and `ragretrieval.compare`. Light on purpose (no NumPy): the command
line reads its defaults and choices when it declares its options.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from ..work.limits import Integer
from ..work.options import SettingsError, SettingsModel
from ..work.significance import ALPHA

TESTS = ("t", "wilcoxon", "permutation", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
MAX_RESAMPLES = 10_000_000  # a command may wait; the web app allows fewer (server/store/comparing.py)
MAX_SEED = 2**32 - 1  # NumPy's seeds are unsigned


class CompareSettings(SettingsModel):
    """The statistics of a comparison (docs/compare.md). A bad value is a `SettingsError` naming the field."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    test: str = Field("t", description="Paired test: " + ", ".join(TESTS))
    correction: str = Field("holm", description="Multiple-testing correction over every (run, metric) p-value: "
                                                + ", ".join(CORRECTIONS))
    alpha: float = Field(ALPHA, description="Significance level for the corrected p-values (between 0 and 1)")
    n_resamples: Integer = Field(DEFAULT_RESAMPLES, ge=1, le=MAX_RESAMPLES,
                                 description="Resamples of the bootstrap CI and the permutation/bootstrap tests")
    seed: Integer = Field(DEFAULT_SEED, ge=0, le=MAX_SEED, description="Seed of every resample")

    @field_validator("test", "correction", mode="before")
    @classmethod
    def _one_of(cls, value, info):
        allowed = TESTS if info.field_name == "test" else CORRECTIONS
        if value not in allowed:
            raise SettingsError(f"{info.field_name} must be one of {', '.join(allowed)}; got {value!r}",
                                [info.field_name])
        return value

    @field_validator("alpha", mode="wrap")
    @classmethod
    def _a_probability(cls, value, handler):
        alpha = value if isinstance(value, bool) else handler(value)  # True is not a level of 1
        if isinstance(alpha, bool) or not 0 < alpha < 1:  # NaN is not either
            raise SettingsError(f"alpha must lie between 0 and 1, got {value}", ["alpha"])
        return alpha


PAIRED = CompareSettings()  # the defaults, for functions that take the settings one by one
