"""Contexts found by retrieval, one question at a time, with the retrieval metrics of that same ranking.

The corpus is chunked and indexed once (`RetrievedContexts.__init__`); `find(question)` then retrieves for one
question as `evaluate` does for all of them (retrieval/rollup.py: deep enough for k distinct documents, documents
ranked at their best chunk) and scores that ranking at document and chunk level against the question's labels, at
every cutoff of the retrieval configuration. The generator is shown the first ``context_k`` hits. `find_many` does
the same for a batch at once (the batch runner's path; the numbers are the same). A retriever need not be
thread-safe: searches are serialised by a lock, everything else runs in the caller's thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..data.chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ..data.dataset import Dataset, QuestionRecord, retrieval_questions
from ..evaluation.pipeline import SCORED_FAMILIES, check_config, document_qrels
from ..evaluation.report import EvalConfig, RetrievedChunk
from ..retrieval.registry import BuildContext, build_retriever, spec_from_config
from ..retrieval.rollup import HitTable, roll_up, search_for_documents
from ..scoring import Qrels, chunk_qrels, score
from ..scoring.metrics import Metric
from .report import ContextUsed


@dataclass(frozen=True)
class Retrieved:
    contexts: list[ContextUsed]
    chunks: list[RetrievedChunk]
    documents: list[str]
    metrics: dict[str, dict[str, float]]  # "doc" / "chunk" -> metric -> value; empty without relevant documents


def _rows(qrels: Qrels, rows: list[int]) -> Qrels:
    """The labels of some questions (rows of `qrels`), over the same document vocabulary."""
    starts, ends = qrels.indptr[rows], qrels.indptr[np.asarray(rows, dtype=np.int64) + 1]
    take = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if rows else np.zeros(0, np.int64)
    return Qrels.from_arrays(qrels.query_ids[rows], qrels.doc_ids, np.concatenate([[0], np.cumsum(ends - starts)]),
                             qrels.doc_codes[take], qrels.labels[take], check_ids=False)


class RetrievedContexts:
    def __init__(self, dataset: Dataset, config: EvalConfig, context_k: int, context: BuildContext | None = None,
                 retriever=None):
        check_config(config)
        self.config, self.context_k = config, context_k
        self.policy = ChunkPolicy(config.chunk_size, config.chunk_overlap)
        self.chunks = chunk_corpus(dataset.documents, self.policy)
        self.titles = {d.id: d.title for d in dataset.documents}
        self.spec = spec_from_config(config)
        self.retriever = retriever or build_retriever(self.spec, context or BuildContext())
        self.retriever.index(self.chunks)
        self.table = HitTable(self.chunks, [d.id for d in dataset.documents])
        labelled, _ = retrieval_questions(dataset)
        self.row = {q.id: i for i, q in enumerate(labelled.questions)}
        self.doc_qrels, spans = document_qrels(labelled)
        self.chunk_qrels = chunk_qrels(self.doc_qrels, [c.chunk_id for c in self.chunks],
                                       [c.parent_id for c in self.chunks], [c.start for c in self.chunks],
                                       [c.end for c in self.chunks], spans)
        self.depth = max(max(config.ks), context_k)
        self.metrics = [Metric(family, k) for k in config.ks for family in SCORED_FAMILIES]
        self.levels = [g for g in ("doc", "chunk") if config.granularity in (g, "both")]
        self._lock = threading.Lock()
        self.notes: list[str] = []

    @property
    def chunks_fingerprint(self) -> str:
        return chunks_fingerprint(self.chunks)

    def find(self, question: QuestionRecord) -> Retrieved:
        return self.find_many([question])[0]

    def find_many(self, questions) -> list[Retrieved]:
        """Retrieval for a batch of questions at once (one search, one roll-up, one scoring per level): the same
        result as `find` on each, for a fraction of the work per question."""
        if not questions:
            return []
        with self._lock:  # the retriever and the hit table's codes for foreign hits are shared
            ranking = search_for_documents(self.retriever, questions, self.depth, self.table)
            found = roll_up(ranking, np.array([q.id for q in questions], dtype=object), self.table, self.depth,
                            self.policy.key)
        metrics = self._metrics(questions, found)
        results = []
        for i, question in enumerate(questions):
            scores = {chunk_id: value for chunk_id, _, value in found.retrieved[i]}
            contexts = [c.model_copy(update={"score": scores.get(c.chunk_id)})
                        for c in self._contexts(ranking.positions[i], ranking.foreign)]
            documents = [found.doc_run.doc_ids[c] for c in found.doc_run.codes[i] if c >= 0]
            chunks = [RetrievedChunk(chunk_id=c, parent_id=p, score=v) for c, p, v in found.retrieved[i]]
            results.append(Retrieved(contexts, chunks, documents, metrics.get(question.id, {})))
        return results

    def _contexts(self, positions, foreign) -> list[ContextUsed]:
        """The first `context_k` hits that have a text: our chunks, or an outside retriever's hits with text."""
        contexts = []
        for position in positions:
            if len(contexts) == self.context_k:
                break
            if 0 <= position < len(self.chunks):
                chunk = self.chunks[position]
                contexts.append(ContextUsed(doc_id=chunk.parent_id, chunk_id=chunk.chunk_id,
                                            title=self.titles.get(chunk.parent_id, ""), text=chunk.text))
            elif position >= len(self.chunks) and foreign[position - len(self.chunks)].text:
                hit = foreign[position - len(self.chunks)]
                contexts.append(ContextUsed(doc_id=hit.parent_id, chunk_id=hit.chunk_id,
                                            title=self.titles.get(hit.parent_id or "", ""), text=hit.text))
        return contexts

    def _metrics(self, questions, found) -> dict[str, dict[str, dict[str, float]]]:
        """Question id -> level -> metric -> value, for the questions that have relevant documents."""
        labelled = [q.id for q in questions if q.id in self.row]
        if not labelled:
            return {}
        rows = [self.row[qid] for qid in labelled]
        values: dict[str, dict[str, dict[str, float]]] = {qid: {} for qid in labelled}
        runs = {"doc": found.doc_run, "chunk": found.chunk_run}
        for level, qrels in (("doc", self.doc_qrels), ("chunk", self.chunk_qrels)):
            if level not in self.levels or runs[level] is None:
                continue
            result = score(_rows(qrels, rows), runs[level], self.metrics, rel_level=self.config.rel_level,
                           ties="rank")
            for i, qid in enumerate(labelled):
                values[qid][level] = {name: float(v[i]) for name, v in result.per_query.items()}
        return values

    def info(self):
        return self.retriever.info()
