"""The evaluation pipeline: chunk the corpus, index it, retrieve once at the largest k, score both granularities.

`evaluate()` is what ``ragretrieval eval`` and every sweep cell run; the CLI only parses options and prints. There is
one path for every retriever: each answers with a `Ranking` (retrieval/base.py), which rollup.py turns into the
document and chunk runs the scorer takes.
"""

from __future__ import annotations

import time

from .. import __version__
from ..data.chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ..data.dataset import Dataset, labels_fingerprint, retrieval_questions
from ..errors import RagretrievalError
from ..retrieval.registry import BuildContext, build_retriever, retriever_class, spec_from_config
from ..retrieval.rerank.registry import check_reranker
from ..retrieval.rollup import HitTable, roll_up, search_for_documents
from ..retrieval.search_timing import measure_search
from ..scoring import Qrels, chunk_qrels, score
from ..scoring.metrics import Metric
from ..work.options import SettingsError
from ..work.progress import as_progress
from .report import DatasetInfo, EvalConfig, EvalReport, QuestionResult, RetrievedChunk

# the metric families every evaluation scores at each k (the scorer knows more: scoring/metrics.py)
SCORED_FAMILIES = ("recall", "precision", "hit_rate", "mrr", "f1", "ndcg", "map")
ROLL_UP_NOTE = ("document level: each document is ranked at its best-ranked chunk; chunks were retrieved until "
                "every question had k distinct documents")


class EvaluationError(RagretrievalError, ValueError):
    """Settings the pipeline cannot run with, or a retrieval that found nothing to score."""


def check_config(config: EvalConfig) -> None:
    """What the settings model cannot know when it is built: the retriever and reranker are still installed (a
    configuration read back from a report is not checked against the plug-ins)."""
    try:
        retriever_class(config.retriever)  # an unknown retriever names the known ones
        if config.rerank:
            check_reranker(config.rerank["name"])
    except RagretrievalError as error:
        raise SettingsError(str(error), ["rerank.name" if config.rerank else "retriever"]) from None


def document_qrels(dataset: Dataset) -> tuple[Qrels, dict]:
    """Document labels over the corpus vocabulary, and the relevant spans keyed by (question id, doc id)."""
    doc_ids = [d.id for d in dataset.documents]
    code = {d: i for i, d in enumerate(doc_ids)}
    indptr, codes, labels, spans = [0], [], [], {}
    for question in dataset.questions:
        for rel in question.relevant:
            codes.append(code[rel.doc_id])
            labels.append(rel.grade)
            if rel.spans:
                spans[(question.id, rel.doc_id)] = rel.spans
        indptr.append(len(codes))
    return Qrels.from_arrays([q.id for q in dataset.questions], doc_ids, indptr, codes, labels), spans


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
    spec = spec_from_config(config)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    policy = ChunkPolicy(config.chunk_size, config.chunk_overlap)
    chunks = chunk_corpus(dataset.documents, policy)
    timings["chunking"] = time.perf_counter() - started
    progress.note(f"{len(dataset.documents)} documents -> {len(chunks)} chunks")

    retriever = retriever or build_retriever(spec, context)
    _check(stop)
    retriever.index(chunks)
    _check(stop)  # the stages between here and the report are short: a stop is honoured before them or not at all
    doc_qrels, spans = document_qrels(dataset)
    table = HitTable(chunks, doc_qrels.doc_ids.tolist())

    max_k = max(config.ks)
    before = dict(retriever.timings)
    t = time.perf_counter()
    ranking = search_for_documents(retriever, dataset.questions, max_k, table)
    timings.update(retriever.timings)  # embedding (chunks and questions), indexing, fusion, rerank, ...
    # searching is what the retriever's own stages (question embedding, fusion, rerank) did not account for
    staged = sum(seconds - before.get(stage, 0.0) for stage, seconds in retriever.timings.items())
    timings["searching"] = time.perf_counter() - t - staged

    t = time.perf_counter()
    question_ids = doc_qrels.query_ids
    found = roll_up(ranking, question_ids, table, max_k, policy.key)
    if found.empty_rankings == len(dataset.questions):
        raise EvaluationError(f"the {config.retriever} retriever returned nothing for any of the "
                              f"{len(dataset.questions)} questions; check its index, URL or field mapping")
    info = retriever.info()
    notes = list(info.notes) + found.notes
    if found.empty_rankings:
        notes.append(f"{found.empty_rankings} of {len(dataset.questions)} questions got an empty ranking "
                     "(scored 0)")
    if found.chunk_run is None and config.granularity == "chunk":
        raise EvaluationError("; ".join(found.notes))
    metrics = [Metric(family, k) for k in config.ks for family in SCORED_FAMILIES]
    scored = {}
    if config.granularity in ("doc", "both"):
        scored["doc"] = score(doc_qrels, found.doc_run, metrics, rel_level=config.rel_level, ties="rank")
    if config.granularity in ("chunk", "both") and found.chunk_run is not None:
        labels = (chunk_labels.qrels(question_ids.tolist(), chunks, dataset.fingerprint) if chunk_labels else
                  chunk_qrels(doc_qrels, [c.chunk_id for c in chunks], [c.parent_id for c in chunks],
                              [c.start for c in chunks], [c.end for c in chunks], spans))
        scored["chunk"] = score(labels, found.chunk_run, metrics, rel_level=config.rel_level, ties="rank")
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
                            chunks_fingerprint=chunks_fingerprint(chunks), n_documents=len(dataset.documents),
                            n_questions=len(dataset.questions), n_chunks=len(chunks), label_sources=generators,
                            labels_fingerprint=labels_fingerprint(dataset.questions, chunk_labels),
                            questions=dataset.other_questions),
        timings=timings,
        embedded_texts=info.embedded_texts,
        notes=notes,
        retriever={"spec": spec.model_dump(mode="json"), "embedders": info.embedders, "details": info.details},
        means={g: r.means for g, r in scored.items()},
        questions=per_question,
    )
    return measure_search(report, retriever, dataset.questions, ranking, table, doc_qrels, policy.key)


def _check(stop) -> None:
    if stop is not None:
        stop.check()


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
