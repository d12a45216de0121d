"""The evaluation pipeline: chunk the corpus, index it, retrieve once at the largest k, score both granularities.

`evaluate()` is what ``ragretrieval eval`` runs; the CLI only parses options and prints.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from . import __version__
from .chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from .dataset import Dataset
from .hits import hit_runs, returns_ids, search_ids_for_documents
from .report import GRANULARITIES, DatasetInfo, EvalConfig, EvalReport, QuestionResult, RetrievedChunk
from .retrieval import BM25Retriever, DenseRetriever, search_for_documents
from .scoring import Qrels, Run, chunk_qrels, collapse_to_parents, score
from .scoring.metrics import Metric

FAMILIES = ("recall", "precision", "hit_rate", "mrr", "f1", "ndcg", "map")
RETRIEVERS = ("dense", "bm25", "http", "run-file")
ROLL_UP_NOTE = ("document level: each document is ranked at its best-ranked chunk; chunks were retrieved until "
                "every question had k distinct documents")


class EvaluationError(ValueError):
    """Settings the pipeline cannot run with."""


def check_config(config: EvalConfig) -> None:
    if config.retriever not in RETRIEVERS:
        raise EvaluationError(f"retriever must be one of {', '.join(RETRIEVERS)}; got {config.retriever!r}")
    if config.granularity not in (*GRANULARITIES, "both"):
        raise EvaluationError(f"granularity must be doc, chunk or both; got {config.granularity!r}")
    if not config.ks or min(config.ks) <= 0:
        raise EvaluationError(f"every k must be a positive integer; got {config.ks}")
    ChunkPolicy(config.chunk_size, config.chunk_overlap)


def make_retriever(config: EvalConfig, cache=None, progress: bool = True, index_dir=None, rebuild: bool = False,
                   executor=None):
    """`executor` (ragretrieval/executors) embeds the corpus for the dense retriever; None embeds in this process."""
    if config.retriever == "bm25":
        return BM25Retriever()
    if config.retriever in ("http", "run-file"):
        from .external import make_external_retriever

        return make_external_retriever(config.retriever, config.retriever_options, progress)
    from .embedders import EmbeddingCache, get_embedder

    return DenseRetriever(get_embedder(config.model), cache or EmbeddingCache(), config.store,
                          config.store_options, progress, index_dir=index_dir, rebuild=rebuild, executor=executor)


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


def evaluate(dataset: Dataset, config: EvalConfig, cache=None, progress: bool = True,
             retriever=None, on_stage: Callable[[str], None] | None = None, index_dir=None, executor=None,
             rebuild: bool = False, chunk_labels=None) -> EvalReport:
    """Run the whole pipeline on `dataset` and return the report (see docs/report-format.md).

    `chunk_labels` (e.g. an LLM judge's `ragretrieval.llm.judgements.Judgements`) replaces the chunk-level labels
    derived from relevant documents and spans: it has ``qrels(question_ids, chunks, corpus_fingerprint)``, ``source``
    and ``note``.

    `index_dir`: save the dense index there and reuse it while chunks and model are unchanged (docs/stores.md)."""
    check_config(config)
    if index_dir is not None and config.retriever != "dense":
        raise EvaluationError(f"an index folder keeps a dense index; the {config.retriever} retriever has none")
    say = on_stage or (lambda message: None)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    chunks = chunk_corpus(dataset.documents, ChunkPolicy(config.chunk_size, config.chunk_overlap))
    timings["chunking"] = time.perf_counter() - started
    say(f"{len(dataset.documents)} documents -> {len(chunks)} chunks")

    retriever = retriever or make_retriever(config, cache, progress, index_dir, rebuild, executor)
    retriever.index(chunks)
    if getattr(retriever, "reloaded", False):
        say(f"index loaded from {index_dir}")
    questions = [q.text for q in dataset.questions]
    doc_qrels, spans = document_qrels(dataset)
    doc_code = {d: i for i, d in enumerate(doc_qrels.doc_ids.tolist())}
    parent_codes = np.array([doc_code[c.parent_id] for c in chunks], dtype=np.int64)

    max_k = max(config.ks)
    embedding_before = retriever.timings.get("embedding", 0.0)
    t = time.perf_counter()
    by_id = returns_ids(retriever)  # an outside retriever names ids, not positions in our chunks (see hits.py)
    if by_id:
        hits = search_ids_for_documents(retriever, dataset.questions, max_k, len(chunks))
    else:
        result = search_for_documents(retriever, questions, max_k, parent_codes, len(chunks))
    timings.update(retriever.timings)  # embedding (chunks and questions), indexing
    timings["searching"] = time.perf_counter() - t - (timings.get("embedding", 0.0) - embedding_before)

    t = time.perf_counter()
    chunk_ids = [c.chunk_id for c in chunks]
    question_ids = doc_qrels.query_ids
    if by_id:
        found = hit_runs(hits, question_ids.tolist(), chunks, doc_qrels.doc_ids.tolist(), max_k,
                         ChunkPolicy(config.chunk_size, config.chunk_overlap).key)
        doc_run, chunk_run, retrieved, hit_notes = found.doc_run, found.chunk_run, found.retrieved_chunks, found.notes
        hit_notes = list(getattr(retriever, "notes", [])) + hit_notes
        if chunk_run is None and config.granularity == "chunk":
            raise EvaluationError("; ".join(hit_notes))
    else:
        chunk_run = Run.from_arrays(question_ids, chunk_ids, result.indices)
        doc_run = collapse_to_parents(chunk_run, parent_codes, doc_qrels.doc_ids)
        doc_run = Run.from_arrays(question_ids, doc_qrels.doc_ids, doc_run.codes[:, :max_k])
        chunk_run = Run.from_arrays(question_ids, chunk_ids, result.indices[:, :max_k])
        retrieved = [[RetrievedChunk(chunk_id=chunks[j].chunk_id, parent_id=chunks[j].parent_id, score=float(s))
                      for j, s in zip(result.indices[i, :max_k], result.scores[i, :max_k]) if j >= 0]
                     for i in range(len(questions))]
        hit_notes = []
    metrics = [Metric(family, k) for k in config.ks for family in FAMILIES]
    scored = {}
    if config.granularity in ("doc", "both"):
        scored["doc"] = score(doc_qrels, doc_run, metrics, rel_level=config.rel_level, ties="rank")
    if config.granularity in ("chunk", "both") and chunk_run is not None:
        labels = (chunk_labels.qrels(question_ids.tolist(), chunks, dataset.fingerprint) if chunk_labels else
                  chunk_qrels(doc_qrels, chunk_ids, [c.parent_id for c in chunks], [c.start for c in chunks],
                              [c.end for c in chunks], spans))
        scored["chunk"] = score(labels, chunk_run, metrics, rel_level=config.rel_level, ties="rank")
    timings["scoring"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - started

    per_question = []
    for i, question in enumerate(dataset.questions):
        per_question.append(QuestionResult(
            id=question.id,
            text=question.text,
            relevant=[r.doc_id for r in question.relevant],
            relevant_grades={r.doc_id: r.grade for r in question.relevant},
            retrieved_chunks=retrieved[i],
            retrieved_documents=[doc_run.doc_ids[c] for c in doc_run.codes[i] if c >= 0],
            metrics={g: {name: float(v[i]) for name, v in r.per_query.items()} for g, r in scored.items()},
        ))
    generators = sorted({q.provenance.generator for q in dataset.questions})
    generators += [chunk_labels.source] if chunk_labels else []
    return EvalReport(
        ragretrieval_version=__version__,
        config=config,
        embedder_identity=getattr(getattr(retriever, "embedder", None), "identity", None),
        dataset=DatasetInfo(path=str(dataset.path), corpus_fingerprint=dataset.fingerprint,
                            chunks_fingerprint=chunks_fingerprint(chunks), n_documents=len(dataset.documents),
                            n_questions=len(dataset.questions), n_chunks=len(chunks), label_sources=generators),
        timings=timings,
        embedded_texts=getattr(retriever, "embedded", 0),
        notes=([ROLL_UP_NOTE] if "doc" in scored else []) + hit_notes + ([chunk_labels.note] if chunk_labels else []),
        means={g: r.means for g, r in scored.items()},
        questions=per_question,
    )
