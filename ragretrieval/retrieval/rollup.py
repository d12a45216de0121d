"""Document roll-up: retrieve deep enough for k distinct documents, then turn a `Ranking` into the scorer's runs.

- Depth (`search_for_documents`): ask for 4k, and double until every question's ranking holds k distinct parent
  documents, or the retriever has nothing more for the questions that lack them (a row shorter than asked), or the
  depth covers every chunk. A ranking with foreign hits (hits.py) comes from the retriever's own index, which may
  hold more chunks than ours: its depth is not capped by our chunk count, only by `FOREIGN_DEPTH_LIMIT`.
- Document level: each document is ranked at its best-ranked hit (its first appearance), gaps closed: the scorer's
  roll-up (`parents_at_best_rank` in scoring/granularity.py, behind `collapse_to_parents` too), over the ranking's
  positions and the parent of each position (ours, then the foreign hits').
- Chunk level: the first k hits. A foreign hit (hits.py) is a chunk of another chunking, or of no chunking when the
  retriever named only documents; it is never relevant. Chunk level is scored only when some hit is one of our
  chunks, otherwise its numbers would say nothing; a note says why it was skipped.
- A document that is not in the corpus is unjudged, i.e. not relevant, and counted in a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..data.chunking import Chunk
from ..scoring import PAD, Run
from ..scoring.granularity import parents_at_best_rank
from .base import Ranking, Retriever

NO_CHUNK_ID = "(hit without a chunk id #{})"
FOREIGN_DEPTH_LIMIT = 1 << 16  # hits per question: the most asked of a retriever that names chunks of its own


def distinct_per_row(codes: np.ndarray) -> np.ndarray:
    """Number of distinct non-negative codes in each row."""
    ordered = np.sort(np.where(codes < 0, -1, codes), axis=1)
    new = np.concatenate([ordered[:, :1] >= 0, (ordered[:, 1:] != ordered[:, :-1]) & (ordered[:, 1:] >= 0)], axis=1)
    return new.sum(axis=1)


class HitTable:
    """Codes for everything a ranking can name: our chunks first (positions), then its foreign hits.

    Document codes follow `doc_ids` (the corpus, in the labels' order); documents the corpus lacks are appended.
    Chunk codes follow our chunks; foreign chunk ids are appended (a foreign hit that names one of our chunk ids with
    another parent keeps that chunk's code).
    """

    def __init__(self, chunks: Sequence[Chunk], doc_ids: Sequence[str]):
        self.doc_ids = list(doc_ids)
        self.n_docs = len(self.doc_ids)
        self._doc_code = {d: i for i, d in enumerate(self.doc_ids)}
        self.chunk_ids = [c.chunk_id for c in chunks]
        self.n_chunks = len(self.chunk_ids)
        self._chunk_code = {c: i for i, c in enumerate(self.chunk_ids)}
        self.parent_codes = np.array([self._doc_code[c.parent_id] for c in chunks], dtype=np.int64)
        self._parent_of = {c.chunk_id: c.parent_id for c in chunks}

    def _code(self, table: dict, ids: list, item: str) -> int:
        if item not in table:
            table[item] = len(ids)
            ids.append(item)
        return table[item]

    def parent_of(self, chunk_id: str) -> str:
        """The document of one of our chunks; empty for a chunk id we do not know."""
        return self._parent_of.get(chunk_id, "")

    def foreign_parent(self, j: int, ranking: Ranking) -> str:
        hit = ranking.foreign[j]
        return hit.parent_id or self._parent_of.get(hit.chunk_id) or f"(no parent id: {hit.chunk_id})"

    def position_codes(self, ranking: Ranking) -> tuple[np.ndarray, np.ndarray]:
        """(document code, chunk code) of each position the ranking can name: our chunks, then its foreign hits."""
        doc_of = np.concatenate([self.parent_codes, np.fromiter(
            (self._code(self._doc_code, self.doc_ids, self.foreign_parent(j, ranking))
             for j in range(len(ranking.foreign))), np.int64, len(ranking.foreign))])
        chunk_of = np.concatenate([np.arange(self.n_chunks, dtype=np.int64), np.fromiter(
            (self._code(self._chunk_code, self.chunk_ids, hit.chunk_id if hit.chunk_id is not None
                        else NO_CHUNK_ID.format(j)) for j, hit in enumerate(ranking.foreign)),
            np.int64, len(ranking.foreign))])
        return doc_of, chunk_of

    def codes(self, ranking: Ranking) -> tuple[np.ndarray, np.ndarray]:
        """(document codes, chunk codes) of every position of the ranking; PAD where the row is padded."""
        doc_of, chunk_of = self.position_codes(ranking)
        return at_positions(ranking.positions, doc_of), at_positions(ranking.positions, chunk_of)


def at_positions(positions: np.ndarray, code_of: np.ndarray) -> np.ndarray:
    """``code_of`` read at each position of a ranking; PAD where the row is padded."""
    padded = positions < 0
    return np.where(padded, PAD, code_of[np.where(padded, 0, positions)])


def search_for_documents(retriever: Retriever, questions: Sequence, k: int, table: HitTable) -> Ranking:
    """Search deep enough that every question's hits cover k distinct documents (see the module docstring)."""
    n_chunks = table.n_chunks
    depth = max(1, min(n_chunks, 4 * k)) if n_chunks else 4 * k
    while True:
        ranking = retriever.search(questions, depth)
        docs, _ = table.codes(ranking)
        full = (ranking.positions >= 0).sum(axis=1) >= depth
        wanting = full & (distinct_per_row(docs) < k)
        # a ranking of our chunks alone holds at most n_chunks hits; one with foreign hits comes from an index of
        # the retriever's own, which may hold more (a finer chunking), so only a short row says it has no more
        most = n_chunks if not (ranking.positions >= n_chunks).any() else max(n_chunks, FOREIGN_DEPTH_LIMIT)
        if depth >= most or not wanting.any():
            return ranking
        depth = min(most, depth * 2)


def _width(rows: np.ndarray, k: int, pad: int) -> np.ndarray:
    """`rows` padded on the right to k columns."""
    return np.pad(rows, ((0, 0), (0, k - rows.shape[1])), constant_values=pad) if rows.shape[1] < k else rows


@dataclass(frozen=True)
class RolledUp:
    doc_run: Run
    chunk_run: Run | None  # None: no hit is one of our chunks
    retrieved: list[list[tuple[str, str, float]]]  # per question, the first k hits: (chunk id, parent id, score)
    notes: list[str]
    empty_rankings: int  # questions for which the retriever found nothing
    short_rankings: int  # questions with fewer than k distinct documents


def roll_up(ranking: Ranking, question_ids, table: HitTable, k: int, chunk_policy: str) -> RolledUp:
    """Document and chunk runs, k deep, from a ranking; notes only state what is true of this ranking. The runs are
    no wider than the ranking: a k past every hit it holds allocates nothing more (the scorer treats the missing
    ranks as empty)."""
    doc_of, chunk_of = table.position_codes(ranking)
    chunk_codes = at_positions(ranking.positions, chunk_of)
    width = min(k, ranking.positions.shape[1])
    # the ranking's positions are the chunk codes of the roll-up; -1 pads, as PAD does
    doc_rows = _width(parents_at_best_rank(ranking.positions, doc_of)[:, :width], width, PAD)
    top = _width(ranking.positions[:, :width], width, -1)
    chunk_rows = _width(chunk_codes[:, :width], width, PAD)

    notes = []
    hits = top >= 0
    n_hits, empty = int(hits.sum()), int((~hits.any(axis=1)).sum()) if len(top) else 0
    n_doc_hits = int((doc_rows >= 0).sum())
    n_unknown_docs = int((doc_rows >= table.n_docs).sum())
    if n_unknown_docs:
        notes.append(f"{n_unknown_docs} of {n_doc_hits} retrieved documents are not in the corpus; "
                     "scored as non-relevant")
    foreign = hits & (top >= table.n_chunks)
    unnamed = np.zeros_like(foreign)
    if ranking.foreign:
        no_id = np.array([hit.chunk_id is None for hit in ranking.foreign])
        unnamed[foreign] = no_id[top[foreign] - table.n_chunks]
    n_unknown_chunks = int((hits & (chunk_rows >= table.n_chunks)).sum())
    n_unnamed = int(unnamed.sum())
    chunk_run = None
    if n_hits and n_unnamed == n_hits:
        notes.append("chunk level not scored: the retriever named documents, not chunks")
    elif n_hits and n_unknown_chunks == n_hits:
        notes.append(f"chunk level not scored: no retrieved chunk id is a chunk of this chunking ({chunk_policy}); "
                     "give the retriever's chunk_size and chunk_overlap to score chunks")
    elif n_hits:
        chunk_run = Run.from_arrays(question_ids, table.chunk_ids, chunk_rows, check_ids=False)
        if n_unknown_chunks:
            notes.append(f"{n_unknown_chunks} of {n_hits} retrieved chunks are not chunks of this chunking "
                         f"({chunk_policy}); scored as non-relevant")
    doc_run = Run.from_arrays(question_ids, table.doc_ids, doc_rows, check_ids=False)

    retrieved = []
    for i in range(len(top)):
        row = []
        for rank, position in enumerate(top[i]):
            if position < 0:
                continue
            if position < table.n_chunks:
                chunk_id, parent = table.chunk_ids[position], table.doc_ids[table.parent_codes[position]]
            else:
                hit = ranking.foreign[position - table.n_chunks]
                if hit.chunk_id is None:
                    continue
                chunk_id, parent = hit.chunk_id, hit.parent_id or table.parent_of(hit.chunk_id)
            value = ranking.scores[i, rank]
            row.append((chunk_id, parent, 0.0 if np.isnan(value) else float(value)))
        retrieved.append(row)
    short = int(((doc_rows >= 0).sum(axis=1) < k).sum())
    return RolledUp(doc_run, chunk_run, retrieved, notes, empty, short)
