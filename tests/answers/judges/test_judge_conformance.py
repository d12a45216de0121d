"""Every built-in judge passes the judge conformance suite against a real chat server on 127.0.0.1."""

from __future__ import annotations

import pytest

from ragretrieval.answers.judges.registry import BUILT_IN
from ragretrieval.testing.judge_conformance import JudgeConformance


@pytest.mark.parametrize("name", sorted(BUILT_IN))
class TestBuiltInJudges(JudgeConformance):
    @pytest.fixture
    def judge_name(self, name):
        return name
