"""The evaluation pipeline: chunk the corpus, index it, retrieve once at the largest k, score both granularities.

`evaluate()` is what ``ragretrieval eval`` and every sweep cell run; the CLI only parses options and prints. There is
one path for every retriever: each answers with a `Ranking` (retrieval/base.py), which rollup.py turns into the
document and chunk runs the scorer takes. The steps are the retrieval session's (retrieval/session.py), which
`ragretrieval answer` runs too; this module adds what a report needs.
"""

from __future__ import annotations

import time

from .. import __version__
from ..data.dataset import Dataset, labels_fingerprint, retrieval_questions
from ..errors import RagretrievalError
from ..retrieval.registry import BuildContext, retriever_class
from ..retrieval.search_timing import measure_search
from ..retrieval.session import SCORED_FAMILIES, RetrievalSession, check_config, document_qrels
from ..work.progress import as_progress
from .report import DatasetInfo, EvalConfig, EvalReport, QuestionResult, RetrievedChunk

__all__ = ["ROLL_UP_NOTE", "SCORED_FAMILIES", "EvaluationError", "check_config", "document_qrels", "evaluate",
           "grade_warnings", "roll_up_note"]  # the session's steps are named here as before they moved there
ROLL_UP_NOTE = ("document level: each document is ranked at its best-ranked chunk; chunks were retrieved until "
                "every question had k distinct documents")


class EvaluationError(RagretrievalError, ValueError):
    """Settings the pipeline cannot run with, or a retrieval that found nothing to score."""


def evaluate(dataset: Dataset, config: EvalConfig, cache=None, progress=None, retriever=None, index_dir=None,
             executor=None, rebuild: bool = False, chunk_labels=None, stop=None, context: BuildContext | None = None
             ) -> EvalReport:
    """Run the whole pipeline on `dataset` and return the report (see docs/report-format.md).

    `progress` follows the `Progress` protocol (work/progress.py; False or None: silent); `stop` is a `StopToken`
    checked between batches. `retriever` replaces the one the configuration names (tests, custom code); `context`
    shares loaded models and the embedding cache between evaluations (sweeps). `chunk_labels` (e.g. an LLM judge's
    `Judgements`) replaces the chunk-level labels derived from relevant documents and spans: it has
    ``qrels(question_ids, chunks, corpus_fingerprint)``, ``source``, ``note`` and ``fingerprint``.
    `index_dir`: save the dense index there and reuse it while chunks and model are unchanged (docs/stores.md).
    `cache`, `executor`, `index_dir` and `rebuild` make the `BuildContext` when none is given; given beside a
    `context` they are refused (the context holds its own)."""
    check_config(config)
    progress = as_progress(progress)
    if not dataset.questions:
        raise EvaluationError(f"no questions in {dataset.questions_path or 'the question set'}: nothing to evaluate")
    dataset, unlabelled = retrieval_questions(dataset)
    if not dataset.questions:
        raise EvaluationError(f"none of the {unlabelled} questions in {dataset.questions_path or 'the question set'} "
                              "has relevant documents: retrieval cannot be scored (score their answers with "
                              "`ragretrieval answer`)")
    if index_dir is not None and not retriever_class(config.retriever).keeps_index:
        raise EvaluationError(f"an index folder keeps a dense index; the {config.retriever} retriever has none")
    if context is None:
        context = BuildContext(cache=cache, progress=progress, stop=stop, executor=executor, index_dir=index_dir,
                               rebuild=rebuild)
    elif cache is not None or executor is not None or index_dir is not None or rebuild:
        raise EvaluationError("cache, executor, index_dir and rebuild are the context's when one is given: set "
                              "them on the BuildContext, not beside it")
    started = time.perf_counter()
    session = RetrievalSession(dataset, config, context, retriever=retriever, chunk_labels=chunk_labels,
                               progress=progress, stop=stop)
    # the stages between here and the report are short: a stop is honoured before them or not at all
    max_k = max(config.ks)
    ranking = session.search(dataset.questions, max_k)  # the one place the questions are searched
    timings = session.timings

    t = time.perf_counter()
    found = session.roll_up(ranking, session.doc_qrels.query_ids, max_k)
    if found.empty_rankings == len(dataset.questions):
        raise EvaluationError(f"the {config.retriever} retriever returned nothing for any of the "
                              f"{len(dataset.questions)} questions; check its index, URL or field mapping")
    info = session.info()
    notes = list(info.notes) + found.notes
    if found.empty_rankings:
        notes.append(f"{found.empty_rankings} of {len(dataset.questions)} questions got an empty ranking "
                     "(scored 0)")
    if found.chunk_run is None and config.granularity == "chunk":
        raise EvaluationError("; ".join(found.notes))
    scored = session.score(found)
    timings["scoring"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - started
    notes = ([roll_up_note(found)] if "doc" in scored else []) + notes
    notes += [chunk_labels.note] if chunk_labels else []
    notes += grade_warnings(dataset, config.rel_level)
    if unlabelled:
        notes.append(f"{unlabelled} question(s) without relevant documents were left out of retrieval scoring")

    per_question = []
    doc_ids = found.doc_run.doc_ids
    for i, question in enumerate(dataset.questions):
        per_question.append(QuestionResult(
            id=question.id,
            text=question.text,
            relevant=[r.doc_id for r in question.relevant],
            relevant_grades={r.doc_id: r.grade for r in question.relevant},
            retrieved_chunks=[RetrievedChunk(chunk_id=c, parent_id=p, score=s) for c, p, s in found.retrieved[i]],
            retrieved_documents=[doc_ids[c] for c in found.doc_run.codes[i] if c >= 0],
            metrics={g: {name: float(v[i]) for name, v in r.per_query.items()} for g, r in scored.items()},
        ))
    generators = sorted({q.provenance.generator for q in dataset.questions})
    generators += [chunk_labels.source] if chunk_labels else []
    report = EvalReport(
        ragretrieval_version=__version__,
        config=config,
        embedder_identity=info.embedders.get("dense"),
        dataset=DatasetInfo(path=dataset.folder, corpus_fingerprint=dataset.fingerprint,
                            chunks_fingerprint=session.chunks_fingerprint, n_documents=len(dataset.documents),
                            n_questions=len(dataset.questions), n_chunks=len(session.chunks), label_sources=generators,
                            labels_fingerprint=labels_fingerprint(dataset.questions, chunk_labels),
                            questions=dataset.other_questions),
        timings=timings,
        embedded_texts=info.embedded_texts,
        notes=notes,
        retriever={"spec": session.spec.model_dump(mode="json"), "embedders": info.embedders, "details": info.details},
        means={g: r.means for g, r in scored.items()},
        questions=per_question,
    )
    return measure_search(report, session.retriever, dataset.questions, ranking, session.table, session.doc_qrels,
                          session.policy.key)


def roll_up_note(found) -> str:
    """The document-level note, true of this ranking: a retriever may have run out before k documents."""
    if not found.short_rankings:
        return ROLL_UP_NOTE
    return (f"{ROLL_UP_NOTE}, or the retriever had no more ({found.short_rankings} questions have fewer than k "
            "documents)")


def grade_warnings(dataset: Dataset, rel_level: int) -> list[str]:
    """A relevance level above every grade makes every binary metric 0 while nDCG (which uses raw grades) is not."""
    top = max((r.grade for q in dataset.questions for r in q.relevant), default=0)
    if rel_level > top:
        return [f"rel_level {rel_level} is above every grade in the labels (highest {top}): no label counts as "
                "relevant, so every binary metric is 0; nDCG uses the raw grades and is not"]
    return []
