"""`evaluate` and `answer`: ``ragretrieval eval`` and ``ragretrieval answer`` from Python (docs/python.md).

Settings are keyword arguments, validated as the workflow's model (`EvalConfig`, `AnswerSettings`; their
signatures list every field with its default), laid over ``config=`` when given. A run is stored in the runs
history only when asked (``save=True``, or ``runs_db=``), so a notebook leaves nothing behind by default.
"""

from __future__ import annotations

from ..answers.report import AnswerReport
from ..answers.settings import AnswerSettings
from ..evaluation.report import EvalConfig, EvalReport
from ..work.options import build_settings
from .inputs import as_dataset, given, label, refuse_with_given, values, with_settings_signature

RETRIEVER_FIELDS = ("retriever", "retriever_options")


def keep(report, save: bool, runs_db, name, tags) -> None:
    """Store the run in the runs history when asked."""
    if save or runs_db is not None:
        from ..runs import RunHistory

        with RunHistory(runs_db) as history:
            history.save(report, name=name, tags=list(tags))


def given_contexts(records, settings: dict):
    """A run-file retriever over the rows' ``retrieved_context`` (scored as given), with its configuration."""
    from ..retrieval.external.run_file import RunFileRetriever

    refuse_with_given(settings, RETRIEVER_FIELDS, "retrieved_context")
    name = label(records, "retrieved_context")
    return RunFileRetriever(name, records=records), {"retriever": "run-file", "retriever_options": {"run": name}}


def evaluate(dataset, questions=None, *, config=None, save: bool = False, runs_db=None, name=None, tags=(),
             progress=False, stop=None, cache=None, executor=None, index_dir=None, rebuild: bool = False,
             chunk_labels=None, **settings) -> EvalReport:
    """Evaluate retrieval on `dataset` (a `Dataset` or its folder): what ``ragretrieval eval`` does.

    `questions`: another questions.jsonl, or a DataFrame (list of dicts) in the agent-evaluation shape; its
    ``retrieved_context``, when given, is scored as it is. Settings: `EvalConfig`'s fields as keyword arguments
    (``retriever="bm25", ks=[1, 5]``), over ``config=`` (an `EvalConfig`, a dict or a settings file). `progress`:
    False (silent), True (bars on the terminal) or a `Progress`; `stop`: a `StopToken`; `cache`, `executor`,
    `index_dir`, `rebuild` and `chunk_labels` as in `ragretrieval.evaluation.pipeline.evaluate`."""
    from ..evaluation.pipeline import evaluate as run_pipeline

    dataset, records = as_dataset(dataset, questions)
    asked = values(config, EvalConfig, settings)
    retriever = None
    if given(records, "retrieved_context"):
        retriever, fields = given_contexts(records, settings)
        asked = {**asked, **fields}
    report = run_pipeline(dataset, build_settings(EvalConfig, asked), cache=cache, progress=progress,
                          retriever=retriever, index_dir=index_dir, executor=executor, rebuild=rebuild,
                          chunk_labels=chunk_labels, stop=stop)
    keep(report, save, runs_db, name, tags)
    return report


def answer(dataset, questions=None, *, config=None, save: bool = False, runs_db=None, name=None, tags=(),
           progress=False, stop=None, journal=None, **settings) -> AnswerReport:
    """Answer every question and score the answers: what ``ragretrieval answer`` does.

    `questions` as for `evaluate`; rows that give ``response`` are scored as answered (no model is asked, as with
    ``--generator file:``), rows that give only ``retrieved_context`` have those contexts shown to the generator.
    Settings: `AnswerSettings`' fields as keyword arguments (``generator="openai:gpt-4o-mini", context_k=3``; the
    retrieval ones too: ``retriever="bm25"``), over ``config=``. `journal`: a file to resume a long run from."""
    from ..answers.batch import run_answers
    from ..answers.generators import GeneratorOptions
    from ..answers.generators.answer_file import FileGenerator
    from ..answers.session import AnswerSession

    dataset, records = as_dataset(dataset, questions)
    asked = values(config, AnswerSettings, settings)
    generator = retriever = None
    answered = given(records, "response")
    if answered:
        refuse_with_given(settings, ("generator",), "response")
        asked = {**asked, "generator": "file:" + label(records, "response")}
    elif given(records, "retrieved_context"):
        retriever, fields = given_contexts(records, settings)
        asked = {**asked, **fields}
    built = build_settings(AnswerSettings, asked)  # `settings` are the keyword arguments as given
    if answered:
        options = GeneratorOptions.from_settings(built, documents={d.id: d for d in dataset.documents},
                                                 questions=dataset.questions)
        rows = [(where, record.model_dump(exclude_none=True)) for where, record in records or []]
        generator = FileGenerator.from_records(built.generator.removeprefix("file:"), rows, options)
    session = AnswerSession(dataset, built, generator=generator, progress=progress, stop=stop,
                            retriever=retriever)
    report = run_answers(session, built.threads, journal, progress, stop)
    keep(report, save, runs_db, name, tags)
    return report


with_settings_signature(evaluate, EvalConfig)
with_settings_signature(answer, AnswerSettings, EvalConfig)
