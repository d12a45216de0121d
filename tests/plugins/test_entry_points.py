"""A retriever, an embedder and an answer generator installed as plugins (entry points of a distribution on
sys.path), used by `eval`, `sweep`, `answer` and `plugins` without touching ragretrieval's code, and passing the
conformance suites."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragretrieval.retrieval import RetrieverSpec
from ragretrieval.testing.embedder_conformance import EmbedderConformance
from ragretrieval.testing.generator_conformance import GeneratorConformance
from ragretrieval.testing.judge_conformance import JudgeConformance
from ragretrieval.testing.retriever_conformance import RetrieverConformance

TOY_MODULE = '''
"""A toy plugin: ranks chunks by how many of the question's characters they hold; embeds by character counts."""
import time
import numpy as np
from ragretrieval.answers.judges import BaseJudge, JudgeResult
from ragretrieval.embedders.base import Symmetric
from ragretrieval.retrieval.base import Ranking, RetrieverInfo, SimpleRetriever
from ragretrieval.retrieval.rerank.base import PerQuestion


class OverlapRetriever(SimpleRetriever):
    sweepable = True

    def __init__(self, boost: float = 1.0):
        self.boost = float(boost)
        self.timings = {}

    @classmethod
    def build(cls, spec, context):
        return cls(**spec.options)

    def index(self, chunks):
        started = time.perf_counter()
        self.sets = [set(c.text) for c in chunks]
        self.timings["indexing"] = time.perf_counter() - started

    def search(self, questions, depth):
        positions = np.full((len(questions), depth), -1, np.int64)
        scores = np.full((len(questions), depth), np.nan, np.float32)
        for i, q in enumerate(questions):
            wanted = set(q.text)
            values = np.array([len(wanted & s) * self.boost for s in self.sets], np.float32)
            order = np.argsort(-values, kind="stable")[:depth]
            positions[i, :len(order)], scores[i, :len(order)] = order, values[order]
        return Ranking(positions, scores)

    def info(self):
        return RetrieverInfo(details={"boost": self.boost})


class CharacterCounts(Symmetric):
    def __init__(self, name, dim=97):
        self.dim, self.identity = dim, f"toy:{name}:v1"

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for ch in text:
                out[row, ord(ch) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


class ShoutGenerator:
    needs_contexts = True
    provides_contexts = False

    def __init__(self, spec, volume):
        self.spec, self.volume = spec, volume

    @classmethod
    def build(cls, spec, argument, options):
        return cls(spec, argument)

    def generate(self, request):
        from ragretrieval.answers.generators import Generated

        first = request.contexts[0].text[:20] if request.contexts else request.refusal_message
        return Generated(first.upper() + "!" * len(self.volume) + " [0]", input_tokens=len(first), output_tokens=3)

    def info(self):
        return {"volume": self.volume}


class LengthJudge(BaseJudge):
    """A judge that asks no model: is the answer at most `limit` characters?"""

    name = "short"
    metric = "short_answer"

    def __init__(self, limit):
        self.limit = limit

    @classmethod
    def build(cls, context):
        return cls(80)

    def settings(self):
        return {"limit": self.limit}

    def judge(self, answered):
        short = len(answered.answer) <= self.limit
        return JudgeResult(value=float(short), rating="yes" if short else "no",
                           reasoning=f"{len(answered.answer)} characters")


def length_at_most(sample, value, settings):
    """An answer check: is the answer at most `value` characters?"""
    return {"length_at_most": float(len(sample.answer) <= value)}


def _length_value(value):
    from ragretrieval.answers.checks import CheckError

    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CheckError(f"length_at_most: expected a number of characters >= 0, got {value!r}")


length_at_most.check_value = _length_value


class OverlapReranker(PerQuestion):
    def __init__(self, name, settings, context):
        super().__init__(context.progress, context.stop)
        self.identity = name

    def score(self, question, passages):
        return np.array([len(set(question) & set(p)) for p in passages], np.float32)
'''


def install_toy(folder: Path) -> Path:
    """A distribution `toy-plugin` with one retriever and one embedder family, as pip would leave it."""
    (folder / "toy_plugin.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    info = folder / "toy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[ragretrieval.retrievers]\noverlap = toy_plugin:OverlapRetriever\n\n"
        "[ragretrieval.embedders]\ntoy: = toy_plugin:CharacterCounts\n\n"
        "[ragretrieval.generators]\nshout: = toy_plugin:ShoutGenerator\n\n"
        "[ragretrieval.judges]\nshort = toy_plugin:LengthJudge\n\n"
        "[ragretrieval.rerankers]\noverlap: = toy_plugin:OverlapReranker\n\n"
        "[ragretrieval.checks]\nlength_at_most = toy_plugin:length_at_most\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def toy_path(tmp_path_factory):
    folder = install_toy(tmp_path_factory.mktemp("toy-site"))
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    yield folder
    sys.path.remove(str(folder))
    sys.modules.pop("toy_plugin", None)


def cli(toy_path: Path, *args, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(toy_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "ragretrieval", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_plugins_are_listed(toy_path):
    done = cli(toy_path, "plugins")
    assert done.returncode == 0, done.stderr
    assert "  overlap              toy-plugin sweepable" in done.stdout
    assert "  toy:NAME             toy-plugin" in done.stdout
    assert "  shout:...            toy-plugin" in done.stdout
    assert "  short                toy-plugin" in done.stdout
    assert "  overlap:NAME         toy-plugin" in done.stdout
    assert "  length_at_most       toy-plugin" in done.stdout
    kinds = [line for line in done.stdout.splitlines() if not line.startswith(" ")]
    assert [k.split()[0] for k in kinds] == ["retrievers", "embedders", "rerankers", "stores", "generators", "judges",
                                             "checks"]
    one = cli(toy_path, "plugins", "--kind", "check,judges")
    assert one.returncode == 0, one.stderr
    assert [line.split()[0] for line in one.stdout.splitlines() if not line.startswith(" ")] == ["judges", "checks"]
    assert "length_at_most" in one.stdout and "overlap" not in one.stdout
    bad = cli(toy_path, "plugins", "--kind", "widgets")
    assert bad.returncode == 2 and "'widgets' is not a kind of plug-in" in bad.stderr


def checked_questions(folder: Path, limit) -> Path:
    """The demo's answer questions, each also expecting an answer of at most `limit` characters (the toy check)."""
    source = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "answer_questions.jsonl"
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row["expect"] = {**row.get("expect", {}), "length_at_most": limit}
    path = folder / "questions.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.slow  # a whole CLI run in a new process: seconds of CPU; not in make test-fast
def test_answer_runs_the_plugin_check(toy_path, demo_dataset, tmp_path):
    done = cli(toy_path, "answer", "--dataset", demo_dataset, "--questions", checked_questions(tmp_path, 10_000),
               "--generator", "extractive", "--retriever", "bm25", "--no-progress", "--no-save",
               "--out", tmp_path / "a.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert report["means"]["answer"]["length_at_most"] == 1.0  # extractive answers are a few sentences
    assert all(q["metrics"]["answer"]["length_at_most"] == 1.0 for q in report["questions"])
    assert "include" in report["means"]["answer"]  # the built-in checks still run beside it


@pytest.mark.slow  # a whole CLI run in a new process: seconds of CPU; not in make test-fast
@pytest.mark.parametrize("limit", ["long", -1, None, True])
def test_a_bad_value_for_a_plugin_check_is_refused_before_answering(toy_path, demo_dataset, tmp_path, limit):
    done = cli(toy_path, "answer", "--dataset", demo_dataset, "--questions", checked_questions(tmp_path, limit),
               "--generator", "extractive", "--retriever", "bm25", "--no-progress", "--no-save",
               "--out", tmp_path / "a.json")
    assert done.returncode != 0, done.stderr  # the exit code of bad input is the command line's
    assert "length_at_most: expected a number of characters >= 0" in done.stderr and "a-luyu" in done.stderr
    assert not (tmp_path / "a.json").exists()


@pytest.mark.slow  # a whole CLI run in a new process: seconds of CPU; not in make test-fast
def test_answer_runs_the_plugin_generator(toy_path, demo_dataset, tmp_path):
    done = cli(toy_path, "answer", "--dataset", demo_dataset, "--generator", "shout:loud", "--retriever", "bm25",
               "--no-progress", "--no-save", "--out", tmp_path / "a.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert report["config"]["generator"] == "shout:loud" and report["config"]["generator_settings"] == {
        "volume": "loud"}
    assert report["questions"][0]["answer"].endswith("!!!! [0]") and report["usage"]["output_tokens"] == 90


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_answer_and_judge_answers_run_the_plugin_judge_without_any_key(toy_path, demo_dataset, tmp_path,
                                                                       monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a judge that asks no model needs no key
    done = cli(toy_path, "answer", "--dataset", demo_dataset, "--generator", "extractive", "--retriever", "bm25",
               "--judge", "short", "--no-progress", "--no-save", "--out", tmp_path / "a.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert report["config"]["scorers"]["short"] == {"limit": 80} and report["judges"]["short"]["judged"] == 30
    assert 0 <= report["means"]["answer"]["short_answer"] <= 1
    again = cli(toy_path, "judge", "answers", tmp_path / "a.json", "--judge", "short", "--out", tmp_path / "b.json",
                "--no-progress")
    assert again.returncode == 0, again.stderr  # the same judge and settings: every verdict is kept


@pytest.mark.slow  # a whole CLI run in a new process: seconds of CPU; not in make test-fast
def test_a_plugin_reranker_reranks_a_built_in_first_stage(toy_path, demo_dataset, tmp_path):
    out = tmp_path / "reranked.json"
    done = cli(toy_path, "eval", "--dataset", demo_dataset, "--retriever", "bm25", "--rerank", "overlap:chars",
               "--rerank-depth", "20", "--no-progress", "--no-save", "--out", out)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["retriever"]["details"]["reranker"] == "overlap:chars"
    assert report["retriever"]["spec"]["children"][0]["name"] == "bm25"


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines): not in make test-fast
def test_eval_and_sweep_run_the_plugin_retriever_with_a_plugin_embedder(toy_path, demo_dataset, tmp_path):
    out = tmp_path / "overlap.json"
    done = cli(toy_path, "eval", "--dataset", demo_dataset, "--retriever", "overlap", "--retriever-option",
               "boost=2", "--no-progress", "--no-save", "--out", out)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["retriever"]["spec"] == {"name": "overlap", "options": {"boost": 2}, "children": []}
    assert report["retriever"]["details"] == {"boost": 2.0}
    assert 0.5 < report["means"]["doc"]["recall@10"] <= 1.0

    runs = tmp_path / "runs.sqlite"
    done = cli(toy_path, "sweep", "--dataset", demo_dataset, "--retriever", "overlap", "--retriever", "dense",
               "--model", "toy:counts", "--store", "numpy", "--runs-db", runs, "--no-progress")
    assert done.returncode == 0, done.stderr
    table = done.stdout.splitlines()
    assert "2 cells" in table[0] and "ran 2" in table[0]
    assert any(" overlap " in line for line in table) and any(" toy:counts " in line for line in table)
    again = cli(toy_path, "sweep", "--dataset", demo_dataset, "--retriever", "overlap", "--retriever", "dense",
                "--model", "toy:counts", "--store", "numpy", "--runs-db", runs, "--no-progress")
    assert "ran 0, 2 finished earlier" in again.stdout.splitlines()[0]


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
def test_an_unknown_retriever_names_the_known_ones(toy_path, demo_dataset):
    done = cli(toy_path, "eval", "--dataset", demo_dataset, "--retriever", "nope", "--no-save")
    assert done.returncode == 2 and "'nope' is not one of" in done.stderr and "overlap" in done.stderr


@pytest.mark.usefixtures("toy_path")
class TestOverlapPlugin(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return RetrieverSpec(name="overlap", options={"boost": 1.5})


@pytest.mark.usefixtures("toy_path")
class TestOverlapReranker(RetrieverConformance):
    @pytest.fixture
    def spec(self):
        return RetrieverSpec(name="rerank", options={"name": "overlap:chars", "depth": 20},
                             children=(RetrieverSpec(name="bm25"),))


@pytest.mark.usefixtures("toy_path")
class TestToyEmbedder(EmbedderConformance):
    @pytest.fixture
    def model_name(self):
        return "toy:chars"


@pytest.mark.usefixtures("toy_path")
class TestShoutGenerator(GeneratorConformance):
    @pytest.fixture
    def generator_spec(self):
        return "shout:soft"


@pytest.mark.usefixtures("toy_path")
class TestLengthJudge(JudgeConformance):
    @pytest.fixture
    def judge_name(self):
        return "short"

    @pytest.fixture
    def uses_llm(self):
        return False
