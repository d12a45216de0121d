"""One retrieval session: the steps every retrieval workflow takes, written once.

`evaluate` (evaluation/pipeline.py: every question in one batch, then a report) and the contexts of `answer`
(answers/retrieved.py: a batch at a time, then a prompt) both open a `RetrievalSession` and call the same steps:

- opening it checks the settings, chunks the corpus, builds the retriever from the configuration's spec, indexes
  the chunks, and codes the hits (rollup.py: `HitTable`) and the document labels;
- `search(questions, k)` is where questions are searched: deep enough for k distinct documents (rollup.py);
- `roll_up(ranking, question_ids, k)` turns that ranking into the document and chunk runs the scorer takes;
- `score(found, question_ids)` scores them at the levels the configuration asks for, against the labels of those
  questions, with the metric families of `SCORED_FAMILIES` at every k.

So the same settings give the same rankings and metrics in both workflows. The session does not need a
thread-safe retriever: searches and roll-ups (which code the foreign hits they meet) are serialised by a lock.
"""

from __future__ import annotations

import threading
import time
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..data.chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ..data.dataset import Dataset, retrieval_questions
from ..errors import RagretrievalError
from ..scoring import Qrels, ScoreResult, chunk_qrels, score
from ..scoring.metrics import Metric
from ..work.options import SettingsError
from ..work.progress import as_progress
from .base import Ranking
from .registry import BuildContext, build_retriever, retriever_class, spec_from_config
from .rerank.registry import check_reranker
from .rollup import HitTable, RolledUp, roll_up, search_for_documents

if TYPE_CHECKING:
    from ..evaluation.report import EvalConfig

# the metric families every retrieval is scored with at each k (the scorer knows more: scoring/metrics.py)
SCORED_FAMILIES = ("recall", "precision", "hit_rate", "mrr", "f1", "ndcg", "map")


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


def _rows(qrels: Qrels, rows: list[int]) -> Qrels:
    """The labels of some questions (rows of `qrels`), over the same document vocabulary."""
    if rows == list(range(qrels.n_queries)):
        return qrels
    starts, ends = qrels.indptr[rows], qrels.indptr[np.asarray(rows, dtype=np.int64) + 1]
    take = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if rows else np.zeros(0, np.int64)
    return Qrels.from_arrays(qrels.query_ids[rows], qrels.doc_ids, np.concatenate([[0], np.cumsum(ends - starts)]),
                             qrels.doc_codes[take], qrels.labels[take], check_ids=False)


class RetrievalSession:
    """A corpus chunked and indexed under one retrieval configuration, with the labels of its questions.

    `retriever` replaces the one the configuration names (tests, custom code); `chunk_labels` (e.g. an LLM judge's
    `Judgements`) replaces the chunk-level labels derived from relevant documents and spans. `stop` is checked after
    the retriever is built and after it has indexed; `progress` hears how many chunks the corpus made. `timings`
    gathers the seconds of chunking, of the retriever's own stages and of searching."""

    def __init__(self, dataset: Dataset, config: EvalConfig, context: BuildContext | None = None, retriever=None,
                 chunk_labels=None, progress=None, stop=None):
        check_config(config)
        self.config, self.dataset, self.chunk_labels = config, dataset, chunk_labels
        self.timings: dict[str, float] = {}
        self.spec = spec_from_config(config)
        started = time.perf_counter()
        self.policy = ChunkPolicy(config.chunk_size, config.chunk_overlap)
        self.chunks = chunk_corpus(dataset.documents, self.policy)
        self.timings["chunking"] = time.perf_counter() - started
        as_progress(progress).note(f"{len(dataset.documents)} documents -> {len(self.chunks)} chunks")
        self.retriever = retriever or build_retriever(self.spec, context or BuildContext())
        _check(stop)
        self.retriever.index(self.chunks)
        _check(stop)
        labelled, _ = retrieval_questions(dataset)
        self.row = {q.id: i for i, q in enumerate(labelled.questions)}  # questions that can be scored
        self.doc_qrels, self.spans = document_qrels(labelled)
        self.table = HitTable(self.chunks, self.doc_qrels.doc_ids.tolist())
        self.metrics = [Metric(family, k) for k in config.ks for family in SCORED_FAMILIES]
        self.levels = [g for g in ("doc", "chunk") if config.granularity in (g, "both")]
        self._lock = threading.Lock()  # the retriever and the hit table's codes for foreign hits are shared

    @property
    def chunks_fingerprint(self) -> str:
        return chunks_fingerprint(self.chunks)

    @cached_property
    def chunk_qrels(self) -> Qrels:
        """Chunk-level labels of every question that can be scored (made when a chunk level is first scored)."""
        chunks, question_ids = self.chunks, self.doc_qrels.query_ids.tolist()
        if self.chunk_labels:
            return self.chunk_labels.qrels(question_ids, chunks, self.dataset.fingerprint)
        return chunk_qrels(self.doc_qrels, [c.chunk_id for c in chunks], [c.parent_id for c in chunks],
                           [c.start for c in chunks], [c.end for c in chunks], self.spans)

    def search(self, questions, k: int) -> Ranking:
        """Search the questions deep enough for k distinct documents each; the seconds the retriever's own stages
        (question embedding, fusion, rerank, ...) did not account for add up under ``timings["searching"]``."""
        with self._lock:
            before = dict(self.retriever.timings)
            started = time.perf_counter()
            ranking = search_for_documents(self.retriever, questions, k, self.table)
            elapsed = time.perf_counter() - started
            self.timings.update(self.retriever.timings)  # embedding (chunks and questions), indexing, fusion, ...
            staged = sum(seconds - before.get(stage, 0.0) for stage, seconds in self.retriever.timings.items())
            self.timings["searching"] = self.timings.get("searching", 0.0) + elapsed - staged
        return ranking

    def roll_up(self, ranking: Ranking, question_ids, k: int) -> RolledUp:
        """Document and chunk runs, k deep, of a ranking of these questions (rollup.py)."""
        with self._lock:
            return roll_up(ranking, np.asarray(question_ids, dtype=object), self.table, k, self.policy.key)

    def retrieve(self, questions, k: int) -> tuple[Ranking, RolledUp]:
        """`search`, then `roll_up` at the same depth."""
        ranking = self.search(questions, k)
        return ranking, self.roll_up(ranking, [q.id for q in questions], k)

    def score(self, found: RolledUp, question_ids=None) -> dict[str, ScoreResult]:
        """Level ("doc", "chunk") -> the scores of the questions named (default: every question that can be
        scored; a question without relevant documents cannot and is left out), per question in that order. A level
        the configuration does not ask for, or a chunk level the ranking cannot be scored at, is absent."""
        rows = list(range(len(self.row))) if question_ids is None else [self.row[q] for q in question_ids]
        scored = {}
        for level in self.levels:
            run = found.doc_run if level == "doc" else found.chunk_run
            if run is not None:
                qrels = self.doc_qrels if level == "doc" else self.chunk_qrels
                scored[level] = score(_rows(qrels, rows), run, self.metrics, rel_level=self.config.rel_level,
                                      ties="rank")
        return scored

    def info(self):
        return self.retriever.info()


def _check(stop) -> None:
    if stop is not None:
        stop.check()
