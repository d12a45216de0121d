"""Fixtures shared by the whole suite: an isolated embedding cache, and where the demo and HowToCook corpora are.

The embedding cache folder is set for the whole session before any test runs, so no test ever reads or writes the
user's ``~/.cache/ragretrieval``; tests that need an empty cache make their own ``EmbeddingCache(tmp_path)``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import Phase, settings

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = REPO_ROOT / "datasets" / "demo" / "dishes"
# the read-only shared data: beside the repository (/work/main), or beside the folder of worktrees (/work/wt/NAME)
SHARED = next((p / "shared" for p in (REPO_ROOT.parent, REPO_ROOT.parent.parent) if (p / "shared").is_dir()),
              REPO_ROOT.parent / "shared")
HOWTOCOOK_CORPUS = (SHARED / "data" / "howtocook" / "dishes").resolve()


# Property tests draw the same examples on every run (a fixed seed per test), so CI and `make mutation` judge a change
# or a mutant the same way each time; RAGRETRIEVAL_HYPOTHESIS=explore draws new ones, and `make mutation` uses
# "mutation": the same examples, no shrinking (a mutant needs one failure, not the smallest) (docs/testing.md).
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.register_profile("mutation", derandomize=True, phases=[Phase.explicit, Phase.generate])
settings.load_profile(os.environ.get("RAGRETRIEVAL_HYPOTHESIS", "fixed"))


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: minutes of CPU work (still part of `make test`; -m 'not slow' skips)")


@pytest.fixture(scope="session", autouse=True)
def embedding_cache_dir(tmp_path_factory) -> Path:
    """``RAGRETRIEVAL_CACHE_DIR`` in a session tmp folder; shared by every test so the demo corpus embeds once.

    The runs history default moves there too, so an `eval` in a test never writes ``./.ragretrieval``."""
    folder = tmp_path_factory.mktemp("embedding-cache")
    names = ("RAGRETRIEVAL_CACHE_DIR", "RAGRETRIEVAL_RUNS_URL", "HF_HUB_OFFLINE")
    saved = {name: os.environ.get(name) for name in names}
    os.environ["RAGRETRIEVAL_CACHE_DIR"] = str(folder)
    os.environ["RAGRETRIEVAL_RUNS_URL"] = str(tmp_path_factory.mktemp("runs-history") / "runs.sqlite")
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may reach for a model hub
    yield folder
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    """The 31-recipe demo corpus in ``datasets/demo/dishes``."""
    assert DEMO_CORPUS.is_dir(), f"{DEMO_CORPUS}: the demo corpus is part of the repository and must exist"
    return DEMO_CORPUS


@pytest.fixture(scope="session")
def howtocook_corpus() -> Path:
    """HowToCook's ``dishes`` folder next to the repository (``../shared/data/howtocook/dishes``), else skip."""
    if not HOWTOCOOK_CORPUS.is_dir():
        pytest.skip(f"HowToCook corpus not found at {HOWTOCOOK_CORPUS} "
                    "(expected ../shared/data/howtocook/dishes relative to the repository root)")
    return HOWTOCOOK_CORPUS


@pytest.fixture(scope="session")
def demo_dataset(demo_corpus, tmp_path_factory) -> Path:
    """The demo corpus built into a dataset folder once per session, through the real CLI."""
    from click.testing import CliRunner

    from ragretrieval.cli import main

    out = tmp_path_factory.mktemp("demo-dataset") / "dataset"
    result = CliRunner().invoke(main, ["build-dataset", str(demo_corpus), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def llm_env(tmp_path, monkeypatch) -> Path:
    """An empty cache folder (answers and embeddings) and the API key in OPENAI_API_KEY."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(cache))
    from ragretrieval.testing.chat_server import TEST_API_KEY

    monkeypatch.setenv("OPENAI_API_KEY", TEST_API_KEY)
    return cache
