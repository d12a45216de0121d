"""Chunk labels from documents and spans, and the roll-up of a chunk run to its documents, against references that
compare intervals one character at a time and walk each ranking from the top."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.data.chunking import Chunk
from ragretrieval.retrieval import rollup
from ragretrieval.retrieval.base import Ranking
from ragretrieval.scoring import Qrels, Run, chunk_qrels, collapse_to_parents, granularity
from ragretrieval.scoring.granularity import PARENT_GRADE, SPAN_GRADE

from .reference import first_appearances, intervals_share_a_character

DOCS = ["a", "b", "c", "d"]


@st.composite
def labelled_chunks(draw):
    """Chunks with arbitrary (possibly overlapping, touching, out-of-order) intervals, some of documents the labels
    do not know; labels from -1 to 3; spans that may touch a chunk's end exactly."""
    n_chunks = draw(st.integers(0, 10))
    parents = draw(st.lists(st.sampled_from(DOCS + ["unlabelled"]), min_size=n_chunks, max_size=n_chunks))
    intervals = draw(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)).map(lambda s: (s[0], s[0] + s[1])),
                              min_size=n_chunks, max_size=n_chunks))
    labels = {}
    for q in ("q0", "q1", "q2"):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=len(DOCS)))
        labels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
    spans = {}
    for q, judged in labels.items():
        for d in judged:
            if draw(st.booleans()):
                spans[(q, d)] = draw(st.lists(st.tuples(st.integers(0, 14), st.integers(1, 5))
                                              .map(lambda s: (s[0], s[0] + s[1])), max_size=3))
    return parents, intervals, labels, spans


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
@settings(max_examples=300, deadline=None)
@given(labelled_chunks())
def test_chunk_grades_equal_a_character_by_character_reference(drawn):
    parents, intervals, labels, spans = drawn
    doc_qrels = Qrels.from_arrays(list(labels), DOCS, np.cumsum([0] + [len(v) for v in labels.values()]),
                                  [DOCS.index(d) for v in labels.values() for d in v],
                                  [g for v in labels.values() for g in v.values()])
    chunk_ids = [f"c{i}" for i in range(len(parents))]
    got = chunk_qrels(doc_qrels, chunk_ids, parents, [s for s, _ in intervals], [e for _, e in intervals], spans)
    expected = {}
    for q, judged in labels.items():
        expected[q] = {}
        for chunk_id, parent, interval in zip(chunk_ids, parents, intervals):
            if judged.get(parent, 0) <= 0:
                continue  # only chunks of relevant documents are labelled
            touched = any(intervals_share_a_character(interval, span) for span in spans.get((q, parent), []))
            expected[q][chunk_id] = SPAN_GRADE if touched else PARENT_GRADE
    assert got.to_dict() == expected
    assert list(got.doc_ids) == chunk_ids


@st.composite
def chunk_runs(draw):
    n_chunks = draw(st.integers(1, 8))
    parent_codes = draw(st.lists(st.integers(0, 2), min_size=n_chunks, max_size=n_chunks))
    depth = draw(st.integers(0, n_chunks))
    rows = [draw(st.lists(st.integers(0, n_chunks - 1), unique=True, max_size=depth)) for _ in range(3)]
    scores = [draw(st.lists(st.integers(0, 3).map(float), min_size=len(r), max_size=len(r))) for r in rows]
    return parent_codes, rows, scores


@settings(max_examples=200, deadline=None)
@given(chunk_runs())
def test_collapsing_to_parents_keeps_each_document_at_its_best_ranked_chunk(drawn):
    parent_codes, rows, scores = drawn
    depth = max(map(len, rows), default=0)
    codes = np.full((3, depth), -1)
    values = np.full((3, depth), np.nan)
    for i, (row, score) in enumerate(zip(rows, scores)):
        codes[i, : len(row)], values[i, : len(row)] = row, score
    chunk_ids = [f"c{i}" for i in range(len(parent_codes))]
    parents = ["pa", "pb", "pc"]
    run = Run.from_arrays(["q0", "q1", "q2"], chunk_ids, codes, values)
    by_default = collapse_to_parents(run, parent_codes, parents)  # the default keeps the rank order
    assert by_default.codes.tolist() == collapse_to_parents(run, parent_codes, parents, "rank").codes.tolist()
    for ties in ("rank", "score"):
        collapsed = collapse_to_parents(run, parent_codes, parents, ties)
        for i, (row, score) in enumerate(zip(rows, scores)):
            if ties == "score":  # score descending, equal scores by chunk id descending (trec_eval's order)
                row = [c for _, c in sorted(zip(score, row), key=lambda p: (p[0], chunk_ids[p[1]]), reverse=True)]
            expected = first_appearances(parents[parent_codes[c]] for c in row)
            got = [parents[c] for c in collapsed.codes[i] if c >= 0]
            assert got == expected, ties


@settings(max_examples=200, deadline=None)
@given(chunk_runs())
def test_the_pipeline_rolls_rankings_up_with_the_same_collapse(drawn):
    """One document roll-up: retrieval's `roll_up` (what `eval` and `answer` run) ranks documents with the scorer's
    `parents_at_best_rank`, so the oracle above holds for it too."""
    assert rollup.parents_at_best_rank is granularity.parents_at_best_rank
    parent_codes, rows, _ = drawn
    depth = max(map(len, rows), default=0)
    positions = np.full((3, depth), -1)
    for i, row in enumerate(rows):
        positions[i, : len(row)] = row
    parents = ["pa", "pb", "pc"]
    chunks = [Chunk(f"c{i}", parents[p], 0, 1, (), "") for i, p in enumerate(parent_codes)]
    found = rollup.roll_up(Ranking(positions, np.zeros(positions.shape)), ["q0", "q1", "q2"],
                           rollup.HitTable(chunks, parents), depth, "p")
    for i, row in enumerate(rows):
        expected = first_appearances(parents[parent_codes[c]] for c in row)
        assert [parents[c] for c in found.doc_run.codes[i] if c >= 0] == expected
