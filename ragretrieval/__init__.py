"""ragretrieval: measure how well RAG retrieval and answers work, with numbers that agree with trec_eval.

The face, in five lines (docs/python.md)::

    import ragretrieval as rr
    ds = rr.build_dataset("datasets/demo/dishes", out="demo-dataset")
    report = rr.evaluate(ds, retriever="bm25", ks=[1, 5])
    print(report)
    rr.score({"q1": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.3}}, ["ndcg@10", "recall@5"])

Its names (`__all__`) are imported when first used (the module ``__getattr__`` below), so ``import ragretrieval``
loads nothing else. The package is laid out in rooms by layer (README, "Layout"); the face's functions live in
ragretrieval/api/. The 0.1 module paths (``ragretrieval.corpus``, ``ragretrieval.sweep``, ...) were removed in 0.3
(CHANGELOG.md has where each went).
"""

import importlib

__version__ = "0.3.0"

FACE = {  # name -> the module that defines it
    "build_dataset": "ragretrieval.data.build",
    "load_dataset": "ragretrieval.api.reports",
    "evaluate": "ragretrieval.api.runs",
    "answer": "ragretrieval.api.runs",
    "judge_answers": "ragretrieval.api.judging",
    "sweep": "ragretrieval.api.sweeps",
    "score": "ragretrieval.api.scoring",
    "compare": "ragretrieval.api.reports",
    "load_run": "ragretrieval.api.reports",
    "EvalConfig": "ragretrieval.evaluation.report",
    "EvalReport": "ragretrieval.evaluation.report",
    "AnswerSettings": "ragretrieval.answers.settings",
    "CompareSettings": "ragretrieval.analysis.settings",
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
