"""ragretrieval: measure how well RAG retrieval and answers work, with numbers that agree with trec_eval.

The face, in five lines (docs/python.md)::

    import ragretrieval as rr
    ds = rr.build_dataset("datasets/demo/dishes", out="demo-dataset")
    report = rr.evaluate(ds, retriever="bm25", ks=[1, 5])
    print(report)
    rr.score({"q1": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.3}}, ["ndcg@10", "recall@5"])

Its names (`__all__`) are imported when first used (the module ``__getattr__`` below), so ``import ragretrieval``
loads nothing else. The package is laid out in rooms by layer (README, "Layout"); the face's functions live in
ragretrieval/api/. Modules that moved in 0.2 keep their old import path for one release: ``import
ragretrieval.corpus`` gives the module now at ``ragretrieval.data.corpus`` (the same module object, so patching
either name patches both) with a `DeprecationWarning` (``import ragretrieval.compare``, the 0.1 path of
``ragretrieval.analysis.compare``, binds that module over the face's ``compare`` in the process that does it).
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__version__ = "0.2.0"

FACE = {  # name -> the module that defines it
    "build_dataset": "ragretrieval.data.build",
    "load_dataset": "ragretrieval.api.reports",
    "evaluate": "ragretrieval.api.runs",
    "answer": "ragretrieval.api.runs",
    "score": "ragretrieval.api.scoring",
    "compare": "ragretrieval.api.reports",
    "load_run": "ragretrieval.api.reports",
    "EvalConfig": "ragretrieval.evaluation.report",
    "EvalReport": "ragretrieval.evaluation.report",
    "AnswerSettings": "ragretrieval.answers.settings",
    "AnswerReport": "ragretrieval.answers.report",
    "Comparison": "ragretrieval.analysis.compare",
    "ScoreResult": "ragretrieval.scoring",
    "Dataset": "ragretrieval.data.dataset",
    "SettingsError": "ragretrieval.work.options",
    "RagretrievalError": "ragretrieval.errors",
}
__all__ = list(FACE)


def __getattr__(name: str):
    """A face name, imported on first use (then kept in the package's namespace)."""
    if name not in FACE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(FACE[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *FACE})

MOVED_MODULES = {  # old path -> new path; removed in 0.3
    "ragretrieval.atomic": "ragretrieval.io.atomic",
    "ragretrieval.validation": "ragretrieval.io.jsonfiles",
    "ragretrieval.corpus": "ragretrieval.data.corpus",
    "ragretrieval.dataset": "ragretrieval.data.dataset",
    "ragretrieval.chunking": "ragretrieval.data.chunking",
    "ragretrieval.questions": "ragretrieval.data.filename_questions",
    "ragretrieval.executors": "ragretrieval.embedders.executors",
    "ragretrieval.executors.dask_executor": "ragretrieval.embedders.executors.dask_executor",
    "ragretrieval.hits": "ragretrieval.retrieval.hits",
    "ragretrieval.external": "ragretrieval.retrieval.external",
    "ragretrieval.external.agent_jsonl": "ragretrieval.data.importers.agent_jsonl",
    "ragretrieval.external.http": "ragretrieval.retrieval.external.http",
    "ragretrieval.external.paths": "ragretrieval.retrieval.external.paths",
    "ragretrieval.external.run_file": "ragretrieval.retrieval.external.run_file",
    "ragretrieval.report": "ragretrieval.evaluation.report",
    "ragretrieval.sweep": "ragretrieval.runs.sweep",
    "ragretrieval.stats": "ragretrieval.analysis.stats",
    "ragretrieval.compare": "ragretrieval.analysis.compare",
    "ragretrieval.diagnostics": "ragretrieval.analysis.diagnostics",
    "ragretrieval.html_report": "ragretrieval.analysis.html",
    "ragretrieval.llm.answers": "ragretrieval.llm.replies",
    "ragretrieval.llm.build": "ragretrieval.llm.questions.build",
    "ragretrieval.llm.evidence": "ragretrieval.data.evidence",
    "ragretrieval.llm.filters": "ragretrieval.llm.questions.filters",
    "ragretrieval.llm.judgements": "ragretrieval.llm.judge.judgements",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old module path with the module at its new path."""

    def find_spec(self, name, path=None, target=None):
        if name in MOVED_MODULES:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        new = MOVED_MODULES[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; the old path stops working in ragretrieval 0.3",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module) -> None:
        """The module was executed when it was imported under its new name."""


def moved_names(package: str, module: str, renamed: dict | None = None):
    """The module ``__getattr__`` of a package that replaced a module of 0.1 (``ragretrieval.evaluation`` was a
    module, now a package): the old module's names resolve in `module`, with a `DeprecationWarning`."""
    renamed = renamed or {}

    def __getattr__(name: str):
        target = importlib.import_module(module)
        new_name = renamed.get(name, name)
        if name.startswith("__") or not hasattr(target, new_name):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} moved to {module}.{new_name}; the old path stops working in ragretrieval 0.3",
                      DeprecationWarning, stacklevel=2)
        return getattr(target, new_name)

    return __getattr__


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())
