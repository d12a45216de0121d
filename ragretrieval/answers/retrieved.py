"""Contexts found by retrieval, one question at a time, with the retrieval metrics of that same ranking.

The corpus is chunked and indexed once, by the retrieval session that `evaluate` runs too (retrieval/session.py);
`find(question)` then retrieves for one question as `evaluate` does for all of them (deep enough for k distinct
documents, documents ranked at their best chunk) and scores that ranking at document and chunk level against the
question's labels, at every cutoff of the retrieval configuration. The generator is shown the first ``context_k``
hits. `find_many` does the same for a batch at once (the batch runner's path; the numbers are the same). A
retriever need not be thread-safe: the session serialises searches, everything else runs in the caller's thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..data.dataset import Dataset, QuestionRecord
from ..evaluation.report import EvalConfig, RetrievedChunk
from ..retrieval.registry import BuildContext
from ..retrieval.session import RetrievalSession
from .report import ContextUsed


@dataclass(frozen=True)
class Retrieved:
    contexts: list[ContextUsed]
    chunks: list[RetrievedChunk]
    documents: list[str]
    metrics: dict[str, dict[str, float]]  # "doc" / "chunk" -> metric -> value; empty without relevant documents


class RetrievedContexts:
    def __init__(self, dataset: Dataset, config: EvalConfig, context_k: int, context: BuildContext | None = None,
                 retriever=None):
        self.session = RetrievalSession(dataset, config, context, retriever=retriever)
        self.config, self.context_k = config, context_k
        self.chunks, self.spec = self.session.chunks, self.session.spec
        self.titles = {d.id: d.title for d in dataset.documents}
        self.depth = max(max(config.ks), context_k)
        self.notes: list[str] = []

    @property
    def chunks_fingerprint(self) -> str:
        return self.session.chunks_fingerprint

    def find(self, question: QuestionRecord) -> Retrieved:
        return self.find_many([question])[0]

    def find_many(self, questions) -> list[Retrieved]:
        """Retrieval for a batch of questions at once (one search, one roll-up, one scoring per level): the same
        result as `find` on each, for a fraction of the work per question."""
        if not questions:
            return []
        ranking, found = self.session.retrieve(questions, self.depth)
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
        labelled = [q.id for q in questions if q.id in self.session.row]
        if not labelled:
            return {}
        values: dict[str, dict[str, dict[str, float]]] = {qid: {} for qid in labelled}
        for level, result in self.session.score(found, labelled).items():
            for i, qid in enumerate(labelled):
                values[qid][level] = {name: float(v[i]) for name, v in result.per_query.items()}
        return values

    def info(self):
        return self.session.info()
