"""`judge_endpoint`: the one fallback rule of the judges' endpoint (answer --judge, judge-answers, the web app)."""

from __future__ import annotations

import pytest

from ragretrieval.answers.judges import judge_endpoint
from ragretrieval.llm.client import DEFAULT_KEY_ENV, DEFAULT_MODEL


def test_the_judges_own_settings_come_first():
    assert judge_endpoint("openai:gen", "judge-m", "http://127.0.0.1:1/v1", "JUDGE_KEY", base_url="http://gen/v1",
                          api_key_env="GEN_KEY") == {"model": "judge-m", "base_url": "http://127.0.0.1:1/v1",
                                                     "api_key_env": "JUDGE_KEY"}


def test_unset_ones_fall_back_to_an_openai_generator_then_to_the_defaults():
    assert judge_endpoint("openai:gen", base_url="http://gen/v1", api_key_env="GEN_KEY") == {
        "model": "gen", "base_url": "http://gen/v1", "api_key_env": "GEN_KEY"}
    assert judge_endpoint("openai:gen") == {"model": "gen", "base_url": None, "api_key_env": DEFAULT_KEY_ENV}


@pytest.mark.parametrize("generator", ["extractive", "http:http://127.0.0.1:9/answer", "file:answers.jsonl",
                                       "xopenai:m"])
def test_a_generator_that_is_not_openai_lends_no_model(generator):
    assert judge_endpoint(generator)["model"] == DEFAULT_MODEL
    assert judge_endpoint(generator, "m")["model"] == "m"
