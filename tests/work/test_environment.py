"""Settings from the environment come from one class (work/environment.py): each variable keeps its name and
meaning, a bad value is one line naming the variable, and no other library module reads a setting from
``os.environ``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval import SettingsError
from ragretrieval.cli import main
from ragretrieval.embedders.cache import default_cache_dir
from ragretrieval.embedders.openai_api import OpenAIEmbedder
from ragretrieval.embedders.sentence_transformer import SentenceTransformerEmbedder
from ragretrieval.io.storage import CACHE_VARIABLE
from ragretrieval.runs.history import RunHistory, default_url
from ragretrieval.server.jobs.engine import ENGINE_VARIABLE, load_engine
from ragretrieval.server.settings import TOKEN_VARIABLE
from ragretrieval.work.environment import EnvironmentSettings, environment

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = [EnvironmentSettings.variable(name) for name in EnvironmentSettings.model_fields]


@pytest.fixture
def clean(monkeypatch):
    """None of the class's variables set (the suite's own cache and history folders included)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_each_variable_keeps_its_name():
    assert VARIABLES == ["RAGRETRIEVAL_CACHE_DIR", "XDG_CACHE_HOME", "RAGRETRIEVAL_DEVICE",
                         "RAGRETRIEVAL_EMBED_BASE_URL", "RAGRETRIEVAL_RUNS_URL", "RAGRETRIEVAL_SERVE_ENGINE",
                         "RAGRETRIEVAL_SERVE_TOKEN"]
    # the names other modules write into their messages are the class's
    assert {CACHE_VARIABLE, ENGINE_VARIABLE, TOKEN_VARIABLE} <= set(VARIABLES)


def test_the_defaults_with_nothing_set(clean):
    clean.setenv("HOME", "/home/someone")
    settings = environment()
    assert settings.device == "cpu" and settings.runs_url is None and settings.serve_engine is None
    assert settings.cache_folder() == Path("/home/someone/.cache/ragretrieval") == default_cache_dir()
    assert default_url() == ".ragretrieval/runs.sqlite"


def test_each_variable_reaches_the_code_that_uses_it(clean, tmp_path):
    clean.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    clean.setenv("RAGRETRIEVAL_DEVICE", "cuda:1")
    clean.setenv("RAGRETRIEVAL_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
    clean.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "runs.sqlite"))
    clean.setenv("RAGRETRIEVAL_SERVE_ENGINE", "ragretrieval.server.jobs.answer_engine:AnswerEngine")
    assert default_cache_dir() == tmp_path / "cache"
    assert SentenceTransformerEmbedder("m3e-small").device == "cuda:1"  # named only: nothing loads
    assert OpenAIEmbedder("openai:m").base_url == "http://127.0.0.1:9/v1"
    assert default_url() == str(tmp_path / "runs.sqlite")
    assert load_engine().__name__ == "AnswerEngine"


def test_xdg_cache_home_when_the_cache_dir_is_unset(clean, tmp_path):
    clean.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "ragretrieval"


def test_an_empty_variable_counts_as_unset(clean):
    for name in VARIABLES:
        clean.setenv(name, "")
    settings = environment()
    assert settings == EnvironmentSettings.model_construct(**{n: f.default for n, f in
                                                              EnvironmentSettings.model_fields.items()})


def test_a_variable_spelt_otherwise_or_in_a_dotenv_file_is_not_read(clean, tmp_path):
    clean.setenv("ragretrieval_device", "cuda")
    (tmp_path / ".env").write_text("RAGRETRIEVAL_DEVICE=mps\n", encoding="utf-8")
    clean.chdir(tmp_path)
    assert environment().device == "cpu"


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("RAGRETRIEVAL_DEVICE", "gpu 0", "'gpu 0' is not a device name"),
    ("RAGRETRIEVAL_DEVICE", "CUDA", "'CUDA' is not a device name"),
    ("RAGRETRIEVAL_EMBED_BASE_URL", "ftp://example.org/v1", "is not an http:// or https:// URL"),
    ("RAGRETRIEVAL_EMBED_BASE_URL", "localhost:8080", "is not an http:// or https:// URL"),
    ("RAGRETRIEVAL_SERVE_ENGINE", "mymodule", "must be written module:function"),
    ("RAGRETRIEVAL_SERVE_ENGINE", "a:b:c", "must be written module:function"),
])
def test_a_bad_value_is_a_settings_error_naming_the_variable(clean, variable, value, says):
    clean.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        environment()
    assert str(raised.value).startswith(f"environment variable {variable}: ") and says in str(raised.value)
    assert raised.value.fields == (variable,) and isinstance(raised.value, ValueError)


def test_two_bad_values_are_both_named(clean):
    clean.setenv("RAGRETRIEVAL_DEVICE", "gpu 0")
    clean.setenv("RAGRETRIEVAL_SERVE_ENGINE", "mymodule")
    with pytest.raises(SettingsError) as raised:
        environment()
    assert set(raised.value.fields) == {"RAGRETRIEVAL_DEVICE", "RAGRETRIEVAL_SERVE_ENGINE"}


def test_the_library_raises_it_where_the_variable_is_read(clean):
    clean.setenv("RAGRETRIEVAL_DEVICE", "gpu 0")
    with pytest.raises(SettingsError, match="RAGRETRIEVAL_DEVICE"):
        SentenceTransformerEmbedder("m3e-small")
    assert SentenceTransformerEmbedder("m3e-small", device="cpu").device == "cpu"  # an argument wins: not read
    clean.setenv("RAGRETRIEVAL_DEVICE", "cpu")
    clean.setenv("RAGRETRIEVAL_SERVE_ENGINE", "mymodule")
    with pytest.raises(SettingsError, match="RAGRETRIEVAL_SERVE_ENGINE"):
        load_engine()


def test_a_command_exits_2_with_one_line_naming_the_variable(clean, tmp_path):
    clean.setenv("RAGRETRIEVAL_EMBED_BASE_URL", "localhost:8080")
    result = CliRunner().invoke(main, ["runs", "list"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == ("Error: environment variable RAGRETRIEVAL_EMBED_BASE_URL: "
                                              "'localhost:8080' is not an http:// or https:// URL")
    assert "Traceback" not in result.output


def test_options_win_over_the_variables(clean, tmp_path):
    clean.setenv("RAGRETRIEVAL_RUNS_URL", str(tmp_path / "from-the-environment.sqlite"))
    given = tmp_path / "given.sqlite"
    assert RunHistory(str(given)).url.endswith("given.sqlite")
    result = CliRunner().invoke(main, ["runs", "list", "--runs-db", str(given)])
    assert result.exit_code == 0, result.output
    assert given.exists() and not (tmp_path / "from-the-environment.sqlite").exists()


def test_the_serve_token_comes_from_the_environment(clean):
    """`serve` on another address with the token only in the environment gets past the bind check (and stops at a
    port nothing can bind: a host this machine does not have)."""
    clean.setenv("RAGRETRIEVAL_SERVE_TOKEN", "short")
    result = CliRunner().invoke(main, ["serve", "--host", "192.0.2.1", "--no-worker"])
    assert result.exit_code == 2 and "the token must be at least 16 characters" in result.output


def test_no_other_module_reads_a_setting_from_the_environment():
    """A ``RAGRETRIEVAL_*`` variable is read through the class only: not by ``os.environ``/``getenv``, not by a
    click option's ``envvar``."""
    readers = []
    for path in sorted((ROOT / "ragretrieval").rglob("*.py")):
        if path.name == "environment.py" and path.parent.name == "work":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if re.search(r"(environ|getenv|envvar).*RAGRETRIEVAL_|XDG_CACHE_HOME\W*\)", line):
                readers.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not readers


def test_the_docs_table_lists_every_variable_with_its_field():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| `(\w+)` \|", section, re.MULTILINE)}
    assert rows == {EnvironmentSettings.variable(name): name for name in EnvironmentSettings.model_fields}
