"""Document and chunk granularity: roll chunk rankings up to their parents, derive chunk labels from documents.

- Document level: each chunk ranking becomes the ranking of the parents of its chunks, keeping each parent at the
  rank of its best-ranked chunk and closing the gaps (dense re-ranking). `parents_at_best_rank` is the one document
  roll-up of the package: `collapse_to_parents` (a `Run`) and retrieval's roll-up of a `Ranking`
  (retrieval/rollup.py, what `eval` and `answer` run) both call it.
- Chunk level: a chunk of a relevant document has grade 1 (`PARENT_GRADE`); a chunk that overlaps a relevant
  character span of the question, ``chunk.start < span.end and span.start < chunk.end``, has grade 2 (`SPAN_GRADE`).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .ranking import drop_duplicates, ranked_codes
from .types import PAD, Qrels, Run, as_id_array

PARENT_GRADE = 1
SPAN_GRADE = 2


def collapse_to_parents(run: Run, parent_codes: np.ndarray, parent_ids, ties: str = "rank") -> Run:
    """Document-level run from a chunk-level one. ``parent_codes[c]`` is the index in `parent_ids` of chunk c's parent.

    The result is in rank order without scores: score it with ``ties="rank"``.
    """
    return Run.from_arrays(run.query_ids, parent_ids, parents_at_best_rank(ranked_codes(run, ties), parent_codes))


def parents_at_best_rank(codes: np.ndarray, parent_codes) -> np.ndarray:
    """Rows of chunk codes in rank order (`PAD`: empty slot) -> rows of their parents' codes, each parent at the rank
    of its best-ranked chunk, gaps closed. ``parent_codes[c]`` is chunk c's parent."""
    parent_codes = np.asarray(parent_codes, dtype=np.int64)
    parents = np.where(codes == PAD, PAD, parent_codes[np.where(codes == PAD, 0, codes)])
    return drop_duplicates(parents)


def chunk_qrels(
    doc_qrels: Qrels,
    chunk_ids: Sequence[str],
    chunk_parent_ids: Sequence[str],
    chunk_starts: Sequence[int],
    chunk_ends: Sequence[int],
    spans: Mapping[tuple[str, str], Sequence[tuple[int, int]]] | None = None,
) -> Qrels:
    """Chunk-level labels: every chunk of a relevant document (label > 0) gets `PARENT_GRADE`, raised to `SPAN_GRADE`
    where it overlaps a relevant span; ``spans[(query_id, doc_id)]`` lists ``(start, end)`` character offsets."""
    chunk_id_array = as_id_array(chunk_ids)
    starts, ends = np.asarray(chunk_starts, dtype=np.int64), np.asarray(chunk_ends, dtype=np.int64)
    doc_code = {d: i for i, d in enumerate(doc_qrels.doc_ids.tolist())}
    parent = np.fromiter((doc_code.get(p, -1) for p in chunk_parent_ids), dtype=np.int64, count=len(chunk_id_array))
    by_parent = np.argsort(parent, kind="stable")  # chunks grouped by parent document, in corpus order
    first = np.searchsorted(parent[by_parent], np.arange(len(doc_qrels.doc_ids)), side="left")
    count = np.searchsorted(parent[by_parent], np.arange(len(doc_qrels.doc_ids)), side="right") - first

    rows = doc_qrels.rows
    relevant = doc_qrels.labels > 0
    rows, docs = rows[relevant], doc_qrels.doc_codes[relevant]
    n_chunks = count[docs]
    entry = np.repeat(np.arange(len(docs)), n_chunks)
    offset = np.arange(len(entry)) - np.repeat(np.cumsum(n_chunks) - n_chunks, n_chunks)
    chunks = by_parent[np.repeat(first[docs], n_chunks) + offset]
    grades = np.full(len(chunks), PARENT_GRADE, dtype=np.int64)

    if spans:
        end_of = np.cumsum(n_chunks)
        query_ids, doc_ids = doc_qrels.query_ids, doc_qrels.doc_ids
        entry_of = {(query_ids[r], doc_ids[d]): e for e, (r, d) in enumerate(zip(rows.tolist(), docs.tolist()))}
        for key, pairs in spans.items():
            if key not in entry_of or not len(pairs):
                continue
            e = entry_of[key]
            lo, hi = end_of[e] - n_chunks[e], end_of[e]
            span = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
            mine = chunks[lo:hi]
            overlap = (starts[mine][:, None] < span[None, :, 1]) & (span[None, :, 0] < ends[mine][:, None])
            grades[lo:hi][overlap.any(axis=1)] = SPAN_GRADE

    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[entry], minlength=doc_qrels.n_queries))])
    return Qrels.from_arrays(doc_qrels.query_ids, chunk_id_array, indptr, chunks, grades)
