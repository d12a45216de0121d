"""Retrieval by id, for retrievers that run outside ragretrieval (a service, a file of results).

Such a retriever never saw our chunk positions, so it names what it found: `search_ids` returns, per question, a
ranked list of `Hit`s (a chunk id and/or a parent document id, a score, maybe the text). `hit_runs` turns them into
the runs the scorer takes. Why ids and not positions: a service has its own index and its own chunking; its ids
are the only thing both sides share.

- Document level is always scored: each hit counts for its document (its `parent_id`, else the parent of its chunk
  when the chunk id is one of ours), ranked at its best hit.
- Chunk level is scored only when some hit's `chunk_id` is a chunk of *our* chunking (same --chunk-size and
  --chunk-overlap); otherwise its numbers would say nothing, and a note says why it was skipped.
- An id that is not in the corpus (or not in our chunking) is unjudged, i.e. non-relevant, and counted in a note.
- The order of the hits is the ranking; scores are carried into the report, never used to re-order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from .chunking import Chunk
from .dataset import QuestionRecord
from .report import RetrievedChunk
from .scoring import Run
from .scoring.types import PAD


@dataclass(frozen=True)
class Hit:
    parent_id: str | None = None
    chunk_id: str | None = None
    score: float | None = None
    text: str | None = None


class HitRetriever(Protocol):
    """A retriever that answers with ids. `search_ids` returns at most `depth` hits per question, best first."""

    name: str
    timings: dict[str, float]

    def index(self, chunks: Sequence[Chunk]) -> None: ...

    def search_ids(self, questions: Sequence[QuestionRecord], depth: int) -> list[list[Hit]]: ...


def returns_ids(retriever) -> bool:
    return callable(getattr(retriever, "search_ids", None))


def search_ids_for_documents(retriever: HitRetriever, questions: Sequence[QuestionRecord], k: int,
                             n_chunks: int) -> list[list[Hit]]:
    """Ask deep enough that every question sees k distinct documents, as `search_for_documents` does for positions:
    the same depths (4k, then doubling up to our chunk count), and stop early once the retriever has nothing more."""
    depth = min(n_chunks, max(k, 4 * k))
    while True:
        hits = retriever.search_ids(questions, depth)
        wanting = [row for row in hits if len(row) >= depth and len({h.parent_id or h.chunk_id for h in row}) < k]
        if not wanting or depth >= n_chunks:
            return hits
        depth = min(n_chunks, depth * 2)


@dataclass(frozen=True)
class HitRuns:
    doc_run: Run
    chunk_run: Run | None  # None: no hit named a chunk of our chunking
    retrieved_chunks: list[list[RetrievedChunk]]
    notes: list[str]


class _Vocabulary:
    """Known ids first (their codes match the qrels), unknown ids appended as they appear."""

    def __init__(self, known: Sequence[str]):
        self.ids = list(known)
        self.code = {i: n for n, i in enumerate(self.ids)}
        self.n_known = len(self.ids)

    def __call__(self, item: str) -> int:
        if item not in self.code:
            self.code[item] = len(self.ids)
            self.ids.append(item)
        return self.code[item]


def _matrix(rows: list[list[int]], k: int) -> np.ndarray:
    out = np.full((len(rows), k), PAD, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : min(k, len(row))] = row[:k]
    return out


def hit_runs(hits: Sequence[Sequence[Hit]], question_ids: Sequence[str], chunks: Sequence[Chunk],
             doc_ids: Sequence[str], k: int, chunk_policy: str) -> HitRuns:
    """Document and chunk runs (k deep) from ranked hits; see the module docstring for the rules."""
    if len(hits) != len(question_ids):
        raise ValueError(f"the retriever answered {len(hits)} questions, expected {len(question_ids)}")
    parent_of = {c.chunk_id: c.parent_id for c in chunks}
    docs, chunk_vocab = _Vocabulary(doc_ids), _Vocabulary([c.chunk_id for c in chunks])
    doc_rows, chunk_rows, retrieved = [], [], []
    n_doc_hits = n_unknown_docs = n_chunk_hits = n_unknown_chunks = n_unnamed_chunks = 0
    for row in hits:
        doc_row: dict[int, None] = {}
        for hit in row:
            parent = hit.parent_id or parent_of.get(hit.chunk_id) or f"(no parent id: {hit.chunk_id})"
            code = docs(parent)
            if code not in doc_row and len(doc_row) < k:
                doc_row[code] = None
                n_doc_hits += 1
                n_unknown_docs += code >= docs.n_known
        doc_rows.append(list(doc_row))
        chunk_row = []
        for rank, hit in enumerate(row[:k]):
            code = chunk_vocab(hit.chunk_id if hit.chunk_id is not None else f"(hit {rank + 1} has no chunk id)")
            chunk_row.append(code)
            n_chunk_hits += 1
            n_unknown_chunks += code >= chunk_vocab.n_known
            n_unnamed_chunks += hit.chunk_id is None
        chunk_rows.append(chunk_row)
        retrieved.append([RetrievedChunk(chunk_id=h.chunk_id, parent_id=h.parent_id or parent_of.get(h.chunk_id, ""),
                                         score=0.0 if h.score is None else float(h.score))
                          for h in row[:k] if h.chunk_id is not None])

    notes = []
    if n_unknown_docs:
        notes.append(f"{n_unknown_docs} of {n_doc_hits} retrieved documents are not in the corpus; "
                     "scored as non-relevant")
    doc_run = Run.from_arrays(question_ids, docs.ids, _matrix(doc_rows, k))
    chunk_run = None
    if n_unnamed_chunks == n_chunk_hits:
        notes.append("chunk level not scored: the retriever named documents, not chunks")
    elif n_unknown_chunks == n_chunk_hits:
        notes.append(f"chunk level not scored: no retrieved chunk id is a chunk of this chunking ({chunk_policy}); "
                     "pass the retriever's --chunk-size and --chunk-overlap to score chunks")
    else:
        chunk_run = Run.from_arrays(question_ids, chunk_vocab.ids, _matrix(chunk_rows, k))
        if n_unknown_chunks:
            notes.append(f"{n_unknown_chunks} of {n_chunk_hits} retrieved chunks are not chunks of this chunking "
                         f"({chunk_policy}); scored as non-relevant")
    return HitRuns(doc_run, chunk_run, retrieved, notes)
