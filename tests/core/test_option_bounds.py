"""Options and settings outside their bounds (issue R3, item 7): timeouts, retries, waits, prices and ports are
refused by the settings models themselves (work/limits.py), so Python, the web API and the command line agree; the
command line shows the refusal as a usage error naming the flag, exit 2, one line, never a traceback (0.2.0 gave an
AssertionError for --max-retries -1, a ValueError for --timeout -1, retried --timeout 0 for 26 s, ran --judge ','
with no judge, billed a negative price, and printed an HFValidationError for a model path that does not exist)."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from ragretrieval.answers.generators import GeneratorOptions, build_generator
from ragretrieval.answers.judges import JudgeError, JudgeOptions, judge_names
from ragretrieval.cli import main
from ragretrieval.embedders import EmbedderError
from ragretrieval.embedders.settings import EmbedSettings
from ragretrieval.llm.client import LLMSettings
from ragretrieval.retrieval.external.http import HttpMapping
from ragretrieval.server.settings import ServeSettings
from ragretrieval.work.limits import SettingError


@pytest.fixture(autouse=True)
def _a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # so that nothing else stops the command first


def usage_error(*args) -> str:
    """The one error line of a command refused as a usage error (exit 2)."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stderr.count("Error") == 1, result.stderr
    return result.stderr.splitlines()[-1]


ANSWER = ["answer", "--generator", "openai:gen", "--base-url", "http://127.0.0.1:9/v1", "--retriever", "bm25",
          "--no-save", "--no-progress"]
BAD = [  # flag, value, what the error line says after the flag
    ("--timeout", "-1", "must be greater than 0, got '-1'"),
    ("--timeout", "0", "must be greater than 0, got '0'"),
    ("--timeout", "nan", "must be a finite number, got 'nan'"),
    ("--timeout", "inf", "must be a finite number, got 'inf'"),
    ("--timeout", "1e400", "must be a finite number, got '1e400'"),
    ("--timeout", "100000", "must be less than or equal to 86400, got '100000'"),
    ("--timeout", "", "must be a valid number"),
    ("--timeout", "soon", "must be a valid number, unable to parse string as a number, got 'soon'"),
    ("--judge-timeout", "-1", "must be greater than 0, got '-1'"),
    ("--max-retries", "-1", "must be greater than or equal to 0, got '-1'"),
    ("--max-retries", "2.5", "must be a valid integer"),
    ("--max-retries", "100000000000", "must be less than or equal to 100, got '100000000000'"),
    ("--judge-max-retries", "-1", "must be greater than or equal to 0, got '-1'"),
    ("--price-in", "-1", "must be greater than or equal to 0, got '-1'"),
    ("--price-out", "-0.5", "must be greater than or equal to 0, got '-0.5'"),
    ("--price-out", "inf", "must be a finite number, got 'inf'"),
    ("--judge-price-in", "-2", "must be greater than or equal to 0, got '-2'"),
    ("--judge-price-out", "nan", "must be a finite number, got 'nan'"),
    ("--sleep-time", "-1", "must be greater than or equal to 0, got '-1'"),
]


@pytest.mark.parametrize("flag, value, problem", BAD, ids=[f"{f}={v}" for f, v, _ in BAD])
def test_answer_refuses_bounds_naming_the_flag(demo_dataset, flag, value, problem):
    line = usage_error(*ANSWER, "--dataset", demo_dataset, "--judge", "score5", flag, value)
    assert line.startswith(f"Error: Invalid value for '{flag}': {problem}"), line


@pytest.mark.parametrize("args, flag", [
    (["build-dataset", "CORPUS", "--generator", "llm", "--timeout", "0"], "--timeout"),
    (["build-dataset", "CORPUS", "--generator", "llm", "--max-retries", "-1"], "--max-retries"),
    (["build-dataset", "CORPUS", "--generator", "llm", "--price-in", "-1"], "--price-in"),
    (["build-dataset", "CORPUS", "--generator", "llm", "--concurrency", "0"], "--concurrency"),
    (["judge", "--dataset", "DATASET", "--runs", "r", "--timeout", "-1"], "--timeout"),
    (["judge-answers", "r", "--judge", "score5", "--judge-timeout", "0"], "--judge-timeout"),
    (["eval", "--dataset", "DATASET", "--embed-price", "-1"], "--embed-price"),
    (["serve", "--port", "70000"], "--port"),
    (["serve", "--port", "0"], "--port"),
    (["serve", "--port", "-1"], "--port"),
    (["serve", "--port", "http"], "--port"),
])
def test_every_command_refuses_the_same_bounds(demo_corpus, demo_dataset, args, flag):
    args = [{"CORPUS": demo_corpus, "DATASET": demo_dataset}.get(a, a) for a in args]
    assert usage_error(*args).startswith(f"Error: Invalid value for '{flag}': ")


@pytest.mark.parametrize("judges", [",", "score5,", ",score5", " , ", ""])
def test_a_judge_list_with_an_empty_name_is_refused(demo_dataset, judges):
    line = usage_error(*ANSWER, "--dataset", demo_dataset, "--judge", judges)
    assert line.startswith("Error: Invalid value for '--judge': an empty judge name in ")
    assert "score5" in line  # the names there are


def test_a_blank_judge_spec_alone_names_no_judge_in_python():
    assert judge_names("") == [] and judge_names("  ") == [] and judge_names("score5, correctness") == [
        "score5", "correctness"]
    for spec in (",", ["score5", ""], "score5,,correctness"):
        with pytest.raises(JudgeError, match="an empty judge name"):
            judge_names(spec)


@pytest.mark.parametrize("model, says", [
    ("/nonexistent/dir", "model '/nonexistent/dir': no such folder"),
    ("./not-here", "model './not-here': no such folder"),
    ("no such model", "model 'no such model' is neither a folder nor a sentence-transformers model"),
    ("org/never-downloaded", "model 'org/never-downloaded' is neither a folder nor"),
])
def test_a_model_that_is_not_there_is_a_usage_error(demo_dataset, model, says):
    line = usage_error("eval", "--dataset", demo_dataset, "--retriever", "dense", "--model", model, "--no-save",
                       "--no-progress")
    assert line.startswith(f"Error: {says}"), line


@pytest.mark.parametrize("make, field", [
    (lambda value: GeneratorOptions(timeout=value), "timeout"),
    (lambda value: GeneratorOptions(max_retries=value), "max_retries"),
    (lambda value: GeneratorOptions(sleep_time=value), "sleep_time"),
    (lambda value: GeneratorOptions(price_in=value), "price_in"),
    (lambda value: JudgeOptions(timeout=value), "timeout"),
    (lambda value: JudgeOptions(max_retries=value), "max_retries"),
    (lambda value: JudgeOptions(price_out=value), "price_out"),
    (lambda value: LLMSettings(timeout=value), "timeout"),
    (lambda value: LLMSettings(backoff=value), "backoff"),
    (lambda value: LLMSettings(price_in=value), "price_in"),
    (lambda value: ServeSettings(port=value), "port"),
])
@pytest.mark.parametrize("value", [-1, math.inf, math.nan, "ten", [5], True, 10**30])
def test_the_settings_models_refuse_them_too(make, field, value):
    """Python and the web app build these models: the same bounds hold without the command line."""
    with pytest.raises(SettingError) as error:
        make(value)
    assert error.value.field == field and str(error.value).startswith(f"{field}: ")


def test_zero_is_refused_where_it_cannot_work_and_kept_where_it_means_none():
    with pytest.raises(SettingError, match="timeout: must be greater than 0, got 0"):
        GeneratorOptions(timeout=0)
    assert GeneratorOptions(max_retries=0, sleep_time=0, price_in=0).max_retries == 0  # no retry, no wait, free
    assert JudgeOptions(timeout=0.5, max_retries=0).max_retries == 0


@pytest.mark.parametrize("values, field", [({"timeout": 0}, "timeout"), ({"max_retries": -1}, "max_retries"),
                                           ({"price": -1}, "price"), ({"timeout": math.inf}, "timeout")])
def test_embedding_settings_share_the_bounds(values, field):
    with pytest.raises(EmbedderError, match=f"embedding setting '{field}'"):
        EmbedSettings.parse(values)


@pytest.mark.parametrize("values", [{"timeout": 0}, {"retries": -1}, {"backoff": -1}, {"timeout": "nan"}])
def test_an_http_retrievers_mapping_shares_the_bounds(values):
    with pytest.raises(ValueError):
        HttpMapping.model_validate({"url": "http://127.0.0.1:9/search", **values})


@pytest.mark.parametrize("option, value, problem", [("timeout", "-1", "must be greater than 0"),
                                                    ("timeout", "abc", "must be a valid number"),
                                                    ("retries", "-3", "must be greater than or equal to 0"),
                                                    ("retries", "1.5", "must be a valid integer")])
def test_an_http_generators_options_are_checked_where_they_are_read(option, value, problem):
    with pytest.raises(SettingError, match=f"^http option {option}: {problem}"):
        build_generator("http:http://127.0.0.1:9/ask", GeneratorOptions(options={option: value}))
