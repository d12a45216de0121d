"""One `Registry` for every kind of plug-in (work/named.py, declared in work/plugins.py): exact, prefix and pattern
names, installed entries after the built-in ones, and every name of 0.2 resolving to the same class as before."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from ragretrieval.answers.generators import generator_class
from ragretrieval.answers.generators.base import GeneratorError
from ragretrieval.answers.judges import JudgeError, judge_class, judge_names
from ragretrieval.answers.settings import AnswerSettings
from ragretrieval.cli import main
from ragretrieval.embedders.registry import family_of
from ragretrieval.retrieval.registry import RetrieverError, retriever_class
from ragretrieval.retrieval.rerank.base import RerankError
from ragretrieval.retrieval.rerank.registry import check_reranker
from ragretrieval.stores import StoreError, store_class
from ragretrieval.work.named import Entry, Registry, UnknownPluginError
from ragretrieval.work.plugins import REGISTRIES


def test_exact_prefix_and_pattern_entries_claim_names_and_give_the_argument():
    exact, prefix = Entry("bm25", "m:a"), Entry("openai:", "m:b", match="prefix")
    pattern = Entry(r"hashing(-\d+)?", "m:c", match="pattern")
    assert exact.claims("bm25") == "" and exact.claims("bm25x") is None and exact.claims("BM25") is None
    assert prefix.claims("openai:gpt-4o") == "gpt-4o" and prefix.claims("openai:") is None
    assert prefix.claims("xopenai:gpt") is None
    assert pattern.claims("hashing") == "" and pattern.claims("hashing-64") == ""
    assert pattern.claims("hashing-x") is None and pattern.claims("my-hashing") is None  # the whole name
    assert prefix.shown == "openai:NAME" and Entry("a:", "m:b", match="prefix", shown_as="a:...").shown == "a:..."
    with pytest.raises(ValueError, match="match must be exact, prefix or pattern"):
        Entry("x", "m:a", match="glob")


def test_a_registry_finds_the_first_claim_and_names_what_it_knows():
    registry = Registry("widget", "ragretrieval.no-such-group", (
        Entry("http:", "json:loads", "a prefix", match="prefix"), Entry(r"h.*", "json:dumps", match="pattern")))
    assert registry.find("http:x")[0].name == "http:" and registry.find("http:x")[1] == "x"
    assert registry.find("hello")[0].target == "json:dumps"  # the prefix does not claim it; the pattern does
    assert registry.load("http:x") is importlib.import_module("json").loads
    with pytest.raises(UnknownPluginError, match=r"unknown widget 'zzz'; known: h\.\*, http:NAME .*"
                                                 r"'ragretrieval.no-such-group' entry point"):
        registry.load("zzz")
    assert registry.available() == {"http:": "built in", "h.*": "built in"}


@pytest.mark.parametrize("spec", ["", ",", "a,", " , a", ["a", ""]])
def test_a_name_left_empty_in_a_list_is_refused(spec):
    registry = Registry("widget", "ragretrieval.no-such-group", (Entry("a", "json:loads"),))
    if spec == "":
        assert registry.names(spec) == []  # a blank text alone names none
        return
    with pytest.raises(UnknownPluginError, match="an empty widget name"):
        registry.names(spec)


def test_names_keep_order_drop_repeats_and_refuse_unknown_ones():
    registry = Registry("widget", "ragretrieval.no-such-group", (Entry("a", "json:loads"), Entry("b", "json:dumps")))
    assert registry.names("b,a,b") == ["b", "a"] and registry.names(["a", "b,a"]) == ["a", "b"]
    assert registry.names(None) == []
    with pytest.raises(UnknownPluginError, match="unknown widget 'c'"):
        registry.names("a,c")


# every 0.2 name, and what it resolved to then
OLD_NAMES = [
    (retriever_class, "bm25", "ragretrieval.retrieval.lexical", "BM25Retriever"),
    (retriever_class, "run-file", "ragretrieval.retrieval.external.run_file", "RunFileRetriever"),
    (retriever_class, "rerank", "ragretrieval.retrieval.rerank.reranked", "RerankedRetriever"),
    (store_class, "faiss", "ragretrieval.stores.faiss_store", "FaissStore"),
    (store_class, "numpy", "ragretrieval.stores.numpy_store", "NumpyStore"),
    (lambda spec: generator_class(spec)[0], "extractive", "ragretrieval.answers.generators.extractive",
     "ExtractiveGenerator"),
    (lambda spec: generator_class(spec)[0], "openai:gpt-4o-mini", "ragretrieval.answers.generators.openai_chat",
     "OpenAIGenerator"),
    (lambda spec: generator_class(spec)[0], "http:http://127.0.0.1:9/x", "ragretrieval.answers.generators."
     "http_service", "HttpGenerator"),
    (lambda spec: generator_class(spec)[0], "file:a.jsonl", "ragretrieval.answers.generators.answer_file",
     "FileGenerator"),
    (judge_class, "score5", "ragretrieval.answers.judges.score5", "Score5Judge"),
    (judge_class, "nuggets", "ragretrieval.answers.judges.nuggets", "NuggetsJudge"),
]


@pytest.mark.parametrize("load, name, module, attribute", OLD_NAMES, ids=[row[1] for row in OLD_NAMES])
def test_every_old_name_resolves_to_the_same_class(load, name, module, attribute):
    assert load(name) is getattr(importlib.import_module(module), attribute)


@pytest.mark.parametrize("name, shown", [("m3e-small", "m3e-small"), ("default", "m3e-small"),
                                         ("e5-small-q4", "e5-small-q4"), ("openai:text-embedding-3-small",
                                                                          "openai:MODEL"),
                                         ("hashing", "hashing[-DIM]"), ("hashing-64", "hashing[-DIM]"),
                                         ("st:/models/x", "st:ID-OR-FOLDER"), ("BAAI/bge-m3", "ID-OR-FOLDER")])
def test_embedder_names_find_the_same_family(name, shown):
    assert family_of(name).shown_as == shown


def test_unknown_names_raise_each_kinds_own_error_with_the_known_ones():
    with pytest.raises(RetrieverError, match="unknown retriever 'nope'; known: bm25, dense, http, hybrid, rerank, "
                                             "run-file"):
        retriever_class("nope")
    with pytest.raises(GeneratorError, match=r"unknown generator 'gpt'; known: extractive, file:\.\.\., http:\.\.\., "
                                             r"openai:\.\.\."):
        generator_class("gpt")
    with pytest.raises(GeneratorError, match="unknown generator 'openai:'"):
        generator_class("openai:")  # a prefix alone names no model
    with pytest.raises(JudgeError, match="unknown judge 'nope'; known: chunk_relevance, "):
        judge_names("score5,nope")
    with pytest.raises(RerankError, match="unknown reranker 'nope:x'; a name starts with one of embed:, http:, "):
        check_reranker("nope:x")
    with pytest.raises(StoreError, match="unknown store 'nope'; installed: "):
        store_class("nope")


def test_settings_check_generator_and_judge_names_without_importing_them():
    """answers/settings.py looks names up in work/plugins.py: the generators' and judges' modules import the
    settings, so the settings must not import them (the architecture test keeps it so)."""
    with pytest.raises(ValueError, match="judges: unknown judge 'nope'"):
        AnswerSettings(judges="nope")
    with pytest.raises(ValueError, match="generator: unknown generator 'gpt'"):
        AnswerSettings(generator="gpt")
    assert AnswerSettings(judges="score5, correctness,score5").judges == ["score5", "correctness"]


def test_each_built_in_entry_has_a_summary_and_loads_with_typed_options_or_none_declared():
    for kind, registry in REGISTRIES.items():
        for entry in registry.built_in:
            assert entry.summary, (kind, entry.name)
            model = entry.options_model()
            assert model is None or issubclass(model, BaseModel), (kind, entry.name, model)  # typed (pydantic)


def test_stores_still_works_and_says_once_that_it_is_deprecated():
    result = CliRunner().invoke(main, ["stores"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: 'stores' is now 'plugins --kind stores'; the old name stops working in 0.4\n")
    assert "faiss" in result.stdout and "numpy" in result.stdout


def test_plugins_lists_every_kind_once_and_a_kind_alone():
    everything = CliRunner().invoke(main, ["plugins"])
    assert everything.exit_code == 0, everything.output
    heads = [line.split()[0] for line in everything.stdout.splitlines() if not line.startswith(" ")]
    assert heads == list(REGISTRIES)
    assert "  include              built in  the answer holds each phrase" in everything.stdout
    stores = CliRunner().invoke(main, ["plugins", "--kind", "store", "-v"])
    assert [line for line in stores.stdout.splitlines() if not line.startswith(" ")][0].startswith("stores (")
    assert "kind             flat | hnsw | ivf" in stores.stdout and "judges" not in stores.stdout
    for bad in ("", ",", "plugin"):
        refused = CliRunner().invoke(main, ["plugins", "--kind", bad])
        assert refused.exit_code == 2 or bad in ("", ","), refused.output


def test_an_installed_plugin_cannot_take_a_built_in_name(tmp_path, monkeypatch):
    """A distribution publishing ``bm25`` does not replace ours (built-in entries claim first), and is not listed
    twice; its other names are."""
    (tmp_path / "shadow.py").write_text(textwrap.dedent('''
        class Mine:
            sweepable = False
    '''), encoding="utf-8")
    info = tmp_path / "shadow-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[ragretrieval.retrievers]\nbm25 = shadow:Mine\nmine = shadow:Mine\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        registry = REGISTRIES["retrievers"]
        assert registry.available()["bm25"] == "built in" and registry.available()["mine"] == "shadow"
        assert [e.name for e in registry.entries()].count("bm25") == 1
        assert retriever_class("bm25").__name__ == "BM25Retriever"
        assert retriever_class("mine").__name__ == "Mine"
    finally:
        sys.modules.pop("shadow", None)
