"""Options and settings outside their bounds: timeouts, retries, waits, prices and ports are
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
from ragretrieval.work.options import SettingsError as SettingError


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
GREATER = "Input should be greater than 0"
AT_LEAST = "Input should be greater than or equal to 0"
FINITE = "Input should be a finite number"
BAD = [  # flag, value, what the error line says (the settings model's words, or click's for text that is no number)
    ("--timeout", "-1", GREATER),
    ("--timeout", "0", GREATER),
    ("--timeout", "nan", FINITE),
    ("--timeout", "inf", FINITE),
    ("--timeout", "1e400", FINITE),
    ("--timeout", "100000", "Input should be less than or equal to 86400"),
    ("--timeout", "", "'' is not a valid float"),
    ("--timeout", "soon", "'soon' is not a valid float"),
    ("--judge-timeout", "-1", GREATER),
    ("--judge-timeout", "nan", FINITE),
    ("--max-retries", "-1", AT_LEAST),
    ("--max-retries", "2.5", "'2.5' is not a valid integer"),
    ("--max-retries", "100000000000", "Input should be less than or equal to 100"),
    ("--judge-max-retries", "-1", AT_LEAST),
    ("--price-in", "-1", AT_LEAST),
    ("--price-out", "-0.5", AT_LEAST),
    ("--price-out", "inf", FINITE),
    ("--price-in", "1e7", "Input should be less than or equal to 1000000"),
    ("--judge-price-in", "-2", AT_LEAST),
    ("--judge-price-out", "nan", FINITE),
    ("--sleep-time", "-1", AT_LEAST),
    ("--sleep-time", "inf", FINITE),
]


@pytest.mark.parametrize("flag, value, problem", BAD, ids=[f"{f}={v}" for f, v, _ in BAD])
def test_answer_refuses_bounds_naming_the_flag(demo_dataset, flag, value, problem):
    line = usage_error(*ANSWER, "--dataset", demo_dataset, "--judge", "score5", flag, value)
    assert line in (f"Error: {flag}: {problem}", f"Error: Invalid value for '{flag}': {problem}."), line


@pytest.mark.parametrize("args, says", [
    (["dataset", "build", "CORPUS", "--generator", "llm", "--llm-timeout", "0"],
     "Invalid value for '--llm-timeout': must be greater than 0, got '0'"),
    (["dataset", "build", "CORPUS", "--generator", "llm", "--max-retries", "-1"],  # 0.2's flag: the new one named
     "Invalid value for '--llm-max-retries': must be greater than or equal to 0, got '-1'"),
    (["dataset", "build", "CORPUS", "--generator", "llm", "--llm-price-in", "inf"],
     "Invalid value for '--llm-price-in': must be a finite number, got 'inf'"),
    (["dataset", "build", "CORPUS", "--generator", "llm", "--concurrency", "0"], "Invalid value for '--concurrency'"),
    (["judge", "chunks", "--dataset", "DATASET", "--runs", "r", "--timeout", "-1"],
     "Invalid value for '--llm-timeout'"),
    (["judge", "answers", "r", "--judge", "score5", "--threads", "0"], "Invalid value for '--concurrency'"),
    (["questions", "nuggets", "DATASET", "--nuggets-timeout", "nan"], "Invalid value for '--llm-timeout'"),  # 0.2's
    (["questions", "nuggets", "DATASET", "--llm-timeout", "nan"], "Invalid value for '--llm-timeout'"),
    (["judge", "answers", "r", "--judge", "score5", "--judge-timeout", "0"], f"--judge-timeout: {GREATER}"),
    (["eval", "--dataset", "DATASET", "--embed-price", "-1"], f"--embed-price: {AT_LEAST}"),
    (["serve", "--port", "70000"], "Invalid value for '--port': must be less than or equal to 65535, got '70000'"),
    (["serve", "--port", "0"], "Invalid value for '--port': must be greater than or equal to 1, got '0'"),
    (["serve", "--port", "-1"], "Invalid value for '--port'"),
    (["serve", "--port", "http"], "Invalid value for '--port'"),
])
def test_every_command_refuses_bounds_naming_the_flag(demo_corpus, demo_dataset, args, says):
    args = [{"CORPUS": demo_corpus, "DATASET": demo_dataset}.get(a, a) for a in args]
    line = usage_error(*args)
    assert line.startswith(f"Error: {says}"), line


@pytest.mark.parametrize("judges", [",", "score5,", ",score5", " , ", ""])
def test_a_judge_list_with_an_empty_name_is_refused(demo_dataset, judges):
    line = usage_error(*ANSWER, "--dataset", demo_dataset, "--judge", judges)
    assert line.startswith("Error: --judge: an empty judge name in ")
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


@pytest.mark.parametrize("option, value, problem", [("timeout", "-1", GREATER),
                                                    ("timeout", "abc", "Input should be a valid number"),
                                                    ("timeout", "nan", "Input should be a finite number"),
                                                    ("retries", "-3", AT_LEAST),
                                                    ("retries", "1.5", "Input should be a valid integer")])
def test_an_http_generators_options_are_checked_when_read(option, value, problem):
    with pytest.raises(SettingError, match=f"generator_options.{option}: {problem}"):
        build_generator("http:http://127.0.0.1:9/ask", GeneratorOptions(options={option: value}))
