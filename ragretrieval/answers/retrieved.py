"""Contexts found by retrieval, one question at a time, with the retrieval metrics of that same ranking.

The corpus is chunked and indexed once (`RetrievedContexts.__init__`); `find(question)` then retrieves for one
question as `evaluate` does for all of them (retrieval/rollup.py: deep enough for k distinct documents, documents
ranked at their best chunk) and scores that ranking at document and chunk level against the question's labels, at
every cutoff of the retrieval configuration. The generator is shown the first ``context_k`` hits. A retriever need
not be thread-safe: searches are serialised by a lock, everything else runs in the caller's thread.
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


def _one_row(qrels: Qrels, row: int) -> Qrels:
    start, end = qrels.indptr[row], qrels.indptr[row + 1]
    return Qrels.from_arrays(qrels.query_ids[row: row + 1], qrels.doc_ids, [0, end - start],
                             qrels.doc_codes[start:end], qrels.labels[start:end], check_ids=False)


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
        with self._lock:  # the retriever and the hit table's codes for foreign hits are shared
            ranking = search_for_documents(self.retriever, [question], self.depth, self.table)
            found = roll_up(ranking, np.array([question.id], dtype=object), self.table, self.depth, self.policy.key)
            foreign = ranking.foreign
        contexts = []
        for position in ranking.positions[0]:
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
        scores = {chunk_id: value for chunk_id, _, value in found.retrieved[0]}
        contexts = [c.model_copy(update={"score": scores.get(c.chunk_id)}) for c in contexts]
        doc_codes = found.doc_run.codes[0]
        documents = [found.doc_run.doc_ids[c] for c in doc_codes if c >= 0]
        chunks = [RetrievedChunk(chunk_id=c, parent_id=p, score=s) for c, p, s in found.retrieved[0]]
        return Retrieved(contexts, chunks, documents, self._metrics(question, found))

    def _metrics(self, question: QuestionRecord, found) -> dict[str, dict[str, float]]:
        row = self.row.get(question.id)
        if row is None:
            return {}
        values = {}
        if "doc" in self.levels:
            result = score(_one_row(self.doc_qrels, row), found.doc_run, self.metrics,
                           rel_level=self.config.rel_level, ties="rank")
            values["doc"] = {name: float(v[0]) for name, v in result.per_query.items()}
        if "chunk" in self.levels and found.chunk_run is not None:
            result = score(_one_row(self.chunk_qrels, row), found.chunk_run, self.metrics,
                           rel_level=self.config.rel_level, ties="rank")
            values["chunk"] = {name: float(v[0]) for name, v in result.per_query.items()}
        return values

    def info(self):
        return self.retriever.info()
