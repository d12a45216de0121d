"""Document roll-up and every metric `evaluate` reports, against a brute-force oracle, through `evaluate` itself.

A scripted retriever answers each question with a ranking hypothesis wrote (our chunks and foreign hits, ties in
scores, several chunks of one document, rankings that run out or are empty), cut at whatever depth `evaluate` asks
for, as a real retriever is. The oracle walks each whole ranking to its end, keeps each document at its best rank,
and recomputes every document- and chunk-level metric at every k with plain loops (reference.py), along with the
retrieved lists and the notes. A roll-up that stops early (the k - 1 bug an earlier version had) or looks at too few hits for
any reason disagrees with the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.corpus import Document, corpus_fingerprint
from ragretrieval.data.dataset import Dataset, Manifest, Provenance, QuestionRecord, RelevantDocument
from ragretrieval.evaluation.pipeline import ROLL_UP_NOTE, EvaluationError, evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval.base import Hit, Ranking, RetrieverInfo
from ragretrieval.retrieval.rollup import distinct_per_row

from .reference import first_appearances, intervals_share_a_character, metrics_at

LINE = 8  # characters per line of a toy document; chunk size 8, overlap 0: exactly one chunk per line
UNKNOWN_DOC = "elsewhere.md"  # a document the corpus lacks


def doc_id(d: int) -> str:
    return f"d{d}.md"


def doc_text(d: int, lines: int) -> str:
    return "".join(f"d{d}l{j:03d}".ljust(LINE - 1, "x") + "\n" for j in range(lines))


@dataclass(frozen=True)
class Case:
    lines: tuple[int, ...]  # chunks (lines) of each document
    ks: tuple[int, ...]
    rel_level: int
    foreign: tuple[Hit, ...]  # hits that are not our chunks, at table positions n_chunks + j
    rows: tuple[tuple[int, ...], ...]  # per question, the whole ranking: table positions, best first
    scores: tuple[tuple[float, ...], ...]  # per question, one score per position (NaN: none given)
    labels: tuple[tuple[tuple[int, int, tuple[tuple[int, int], ...]], ...], ...]  # per question: (doc, grade, spans)

    @property
    def parents(self) -> list[int]:
        return [d for d, n in enumerate(self.lines) for _ in range(n)]


@st.composite
def cases(draw) -> Case:
    n_docs = draw(st.integers(1, 4))
    lines = tuple(draw(st.lists(st.integers(1, 12), min_size=n_docs, max_size=n_docs)))
    parents = [d for d, n in enumerate(lines) for _ in range(n)]
    n_chunks = len(parents)
    our_chunk_ids = [f"{doc_id(d)}#{j}" for d, n in enumerate(lines) for j in range(n)]
    foreign = tuple(draw(st.lists(st.one_of(
        st.builds(Hit, parent_id=st.sampled_from([doc_id(d) for d in range(n_docs)] + [UNKNOWN_DOC]),
                  chunk_id=st.sampled_from([None, "other#0", "other#1"])),
        st.builds(Hit, chunk_id=st.sampled_from(["other#2", *our_chunk_ids])),  # no parent: found by chunk id
    ), max_size=4)))
    rows, scores, labels = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        order = list(draw(st.permutations(range(n_chunks))))
        if draw(st.booleans()):  # a retriever that likes one document ranks its chunks together
            doc_rank = list(draw(st.permutations(range(n_docs))))
            order.sort(key=lambda c: doc_rank.index(parents[c]))
        row = order[: draw(st.one_of(st.just(n_chunks), st.integers(0, n_chunks)))]
        for j in draw(st.lists(st.integers(0, len(foreign) - 1), unique=True)) if foreign else []:
            row.insert(draw(st.integers(0, len(row))), n_chunks + j)
        rows.append(tuple(row))
        tiers = sorted(draw(st.lists(st.integers(0, 3), min_size=len(row), max_size=len(row))), reverse=True)
        scores.append(tuple(float("nan") if draw(st.booleans()) and t == 0 else float(t) for t in tiers))
        judged = draw(st.lists(st.integers(0, n_docs - 1), min_size=1, max_size=n_docs, unique=True))
        question_labels = []
        for d in judged:
            length = LINE * lines[d]
            spans = draw(st.lists(st.tuples(st.integers(0, length - 1), st.integers(1, length))
                                  .filter(lambda s: s[0] < s[1]), max_size=2))
            question_labels.append((d, draw(st.integers(0, 3)), tuple(spans)))
        labels.append(tuple(question_labels))
    ks = tuple(sorted(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3, unique=True))))
    return Case(lines, ks, draw(st.integers(1, 2)), foreign, tuple(rows), tuple(scores), tuple(labels))


class ScriptedRetriever:
    """Gives each question its scripted ranking, cut at the depth asked for; records the depths asked for (`depths`:
    the evaluation's searches; the timing pass after them repeats the last depth, one question at a time)."""

    def __init__(self, case: Case):
        self.case, self.depths, self.timings = case, [], {}

    def index(self, chunks) -> None:
        assert [c.parent_id for c in chunks] == [doc_id(d) for d in self.case.parents]

    def search(self, questions, depth: int) -> Ranking:
        if not self.depths or depth != self.depths[-1]:  # the evaluation doubles the depth; the timing pass repeats it
            self.depths.append(depth)
        positions = np.full((len(questions), depth), -1, dtype=np.int64)
        scores = np.full((len(questions), depth), np.nan, dtype=np.float32)
        for i, question in enumerate(questions):
            script = int(question.text.rsplit(" ", 1)[1])  # "question {i}": dataset_of's text
            row, values = self.case.rows[script], self.case.scores[script]
            positions[i, : len(row[:depth])] = row[:depth]
            scores[i, : len(row[:depth])] = values[:depth]
        return Ranking(positions, scores, self.case.foreign)

    def info(self) -> RetrieverInfo:
        return RetrieverInfo()


def dataset_of(case: Case) -> Dataset:
    documents = tuple(Document(doc_id(d), doc_id(d), doc_text(d, n)) for d, n in enumerate(case.lines))
    questions = tuple(
        QuestionRecord(id=f"q{i}", text=f"question {i}", provenance=Provenance(generator="oracle"),
                       relevant=[RelevantDocument(doc_id=doc_id(d), grade=g, spans=list(s)) for d, g, s in labels])
        for i, labels in enumerate(case.labels))
    manifest = Manifest(corpus_fingerprint=corpus_fingerprint(documents), n_documents=len(documents),
                        n_questions=len(questions))
    return Dataset(".", documents, questions, manifest)


class Oracle:
    """What every number of the report must be, from the whole scripted rankings."""

    def __init__(self, case: Case):
        self.case = case
        self.chunk_ids = [f"{doc_id(d)}#{j}" for d, n in enumerate(case.lines) for j in range(n)]
        self.parent_of_chunk = {c: doc_id(d) for c, d in zip(self.chunk_ids, case.parents)}
        self.n_chunks = len(self.chunk_ids)

    def hit(self, position: int) -> Hit:
        if position < self.n_chunks:
            return Hit(doc_id(self.case.parents[position]), self.chunk_ids[position])
        return self.case.foreign[position - self.n_chunks]

    def document(self, position: int) -> str:
        hit = self.hit(position)
        return hit.parent_id or self.parent_of_chunk.get(hit.chunk_id) or f"(no parent id: {hit.chunk_id})"

    def documents(self, i: int) -> list[str]:
        """Walk the whole ranking, keep each document at its best rank."""
        return first_appearances(self.document(p) for p in self.case.rows[i])

    def doc_labels(self, i: int) -> dict[str, int]:
        return {doc_id(d): g for d, g, _ in self.case.labels[i]}

    def chunk_labels(self, i: int) -> dict[str, int]:
        """Grade 1 for every chunk of a relevant document, 2 where it shares a character with a relevant span."""
        labels = {}
        for d, grade, spans in self.case.labels[i]:
            if grade <= 0:
                continue
            for j in range(self.case.lines[d]):
                chunk = (LINE * j, LINE * j + LINE - 1)  # the line without its newline (chunks are trimmed)
                overlaps = any(intervals_share_a_character(chunk, span) for span in spans)
                labels[f"{doc_id(d)}#{j}"] = 2 if overlaps else 1
        return labels


def expected_notes(case: Case, oracle: Oracle, rows) -> tuple[list[str], bool]:
    """The report's notes, in order, and whether chunk level is scored, from the hits the search looked at."""
    k, n_questions = max(case.ks), len(case.rows)
    docs = [first_appearances(map(oracle.document, row))[:k] for row in rows]
    short = sum(len(d) < k for d in docs)
    notes = [ROLL_UP_NOTE if not short else
             f"{ROLL_UP_NOTE}, or the retriever had no more ({short} questions have fewer than k documents)"]
    unknown_docs = sum(d not in oracle.parent_of_chunk.values() for row in docs for d in row)
    if unknown_docs:
        notes.append(f"{unknown_docs} of {sum(map(len, docs))} retrieved documents are not in the corpus; "
                     "scored as non-relevant")
    top = [oracle.hit(p) for row in rows for p in row[:k]]
    unnamed = sum(h.chunk_id is None for h in top)
    not_ours = sum(h.chunk_id not in oracle.parent_of_chunk for h in top)
    policy = f"markdown:size={LINE}:overlap=0"
    if top and unnamed == len(top):
        notes.append("chunk level not scored: the retriever named documents, not chunks")
    elif top and not_ours == len(top):
        notes.append(f"chunk level not scored: no retrieved chunk id is a chunk of this chunking ({policy}); "
                     "give the retriever's chunk_size and chunk_overlap to score chunks")
    elif not_ours:
        notes.append(f"{not_ours} of {len(top)} retrieved chunks are not chunks of this chunking ({policy}); "
                     "scored as non-relevant")
    chunk_scored = bool(top) and unnamed < len(top) and not_ours < len(top)
    empty = sum(not row for row in rows)
    if empty:
        notes.append(f"{empty} of {n_questions} questions got an empty ranking (scored 0)")
    top_grade = max(g for labels in case.labels for _, g, _ in labels)
    if case.rel_level > top_grade:
        notes.append(f"rel_level {case.rel_level} is above every grade in the labels (highest {top_grade}): no "
                     "label counts as relevant, so every binary metric is 0; nDCG uses the raw grades and is not")
    return notes, chunk_scored


# The two shapes of the roll-up bug an earlier version had: the k-th document only appears after the first 4k hits (one document's
# chunks ranked together), and a retriever with foreign hits whose ranking is longer than our chunking.
LATE_SECOND_DOCUMENT = Case(lines=(9, 1), ks=(1, 2), rel_level=1, foreign=(),
                            rows=(tuple(range(10)),), scores=((1.0,) * 10,), labels=(((1, 1, ()),),))
LONGER_THAN_OUR_CHUNKING = Case(lines=(1,), ks=(2,), rel_level=1, foreign=(Hit(UNKNOWN_DOC, "other#0"),
                                                                              Hit(doc_id(0), "other#1")),
                                rows=((1, 2, 0),), scores=((2.0, 1.0, 1.0),), labels=(((0, 1, ((0, 3),)),),))

# Two hits without a chunk id are two unjudged items at chunk level, not one: the relevant chunk after them is third.
TWO_UNNAMED_HITS = Case(lines=(2,), ks=(3,), rel_level=1, foreign=(Hit(doc_id(0)), Hit(UNKNOWN_DOC)),
                        rows=((2, 3, 0),), scores=((1.0, 1.0, 1.0),), labels=(((0, 2, ((0, 2),)),),))


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
@settings(max_examples=150, deadline=None)
@given(case=cases())
@example(case=LATE_SECOND_DOCUMENT)
@example(case=LONGER_THAN_OUR_CHUNKING)
@example(case=TWO_UNNAMED_HITS)
def test_every_reported_number_matches_a_walk_to_the_end_of_each_ranking(case):
    retriever = ScriptedRetriever(case)
    config = EvalConfig(retriever="bm25", chunk_size=LINE, chunk_overlap=0, ks=list(case.ks), rel_level=case.rel_level)
    oracle = Oracle(case)
    if not any(case.rows):
        with pytest.raises(EvaluationError, match="returned nothing for any of the"):
            evaluate(dataset_of(case), config, retriever=retriever, progress=False)
        return
    report = evaluate(dataset_of(case), config, retriever=retriever, progress=False)
    k = max(case.ks)
    # Metrics come from the whole ranking. The lists and notes come from the hits the search looked at, which are
    # all of them except where every hit so far was one of our chunks and the depth reached our chunk count (then
    # all our chunks have been seen: later hits could only be documents outside the corpus, which change no metric;
    # test_the_search_asks_no_deeper_than_it_must checks where the search stops).
    seen = [row[: retriever.depths[-1]] for row in case.rows]
    notes, chunk_scored = expected_notes(case, oracle, seen)
    assert report.notes == notes
    assert set(report.means) == ({"doc", "chunk"} if chunk_scored else {"doc"})
    for i, result in enumerate(report.questions):
        documents = oracle.documents(i)
        assert result.retrieved_documents == first_appearances(map(oracle.document, seen[i]))[:k]
        hits = [(p, oracle.hit(p)) for p in seen[i][:k]]
        assert [(c.chunk_id, c.parent_id, c.score) for c in result.retrieved_chunks] == [
            (h.chunk_id, h.parent_id or oracle.parent_of_chunk.get(h.chunk_id, ""),
             0.0 if np.isnan(case.scores[i][rank]) else case.scores[i][rank])
            for rank, (_, h) in enumerate(hits) if h.chunk_id is not None]
        expected = {}
        for cutoff in case.ks:
            expected.update(metrics_at(documents, oracle.doc_labels(i), cutoff, case.rel_level))
        assert result.metrics["doc"] == pytest.approx(expected, abs=1e-12)
        if chunk_scored:
            ranked = first_appearances(oracle.hit(p).chunk_id or ("unnamed", p) for p in seen[i][:k])
            expected = {}
            for cutoff in case.ks:
                expected.update(metrics_at(ranked, oracle.chunk_labels(i), cutoff, case.rel_level))
            assert result.metrics["chunk"] == pytest.approx(expected, abs=1e-12)
    for granularity, means in report.means.items():
        for name, mean in means.items():
            values = [q.metrics[granularity][name] for q in report.questions]
            assert mean == pytest.approx(sum(values) / len(values), abs=1e-12)


@pytest.mark.slow  # seconds of CPU (processes, JIT, whole pipelines, brute-force oracles): not in make test-fast
@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_the_search_asks_no_deeper_than_it_must(case):
    """Depth starts at 4k (at most the chunk count) and doubles only while some question lacks k documents and its
    row was full; it stops at the chunk count unless a hit is foreign (the retriever's index may be larger)."""
    if not any(case.rows):
        return
    retriever = ScriptedRetriever(case)
    config = EvalConfig(retriever="bm25", chunk_size=LINE, chunk_overlap=0, ks=list(case.ks), rel_level=case.rel_level)
    evaluate(dataset_of(case), config, retriever=retriever, progress=False)
    k, n_chunks, oracle = max(case.ks), len(case.parents), Oracle(case)
    assert retriever.depths[0] == min(n_chunks, 4 * k)
    for before, after in zip(retriever.depths, retriever.depths[1:]):
        seen = [row[:before] for row in case.rows]
        foreign = any(p >= n_chunks for row in seen for p in row)
        assert after == (2 * before if foreign else min(n_chunks, 2 * before))
        lacking = [row for row in seen if len(row) == before and len(first_appearances(map(oracle.document, row))) < k]
        assert lacking, f"searched again at depth {after} though every question had k documents at depth {before}"
    last = [row[: retriever.depths[-1]] for row in case.rows]
    assert all(len(first_appearances(map(oracle.document, row))) >= k or len(row) < retriever.depths[-1]
               or (retriever.depths[-1] == n_chunks and not any(p >= n_chunks for r in last for p in r))
               for row in last), "stopped while a question lacked k documents and the retriever had more"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 5), min_size=4, max_size=4), min_size=1, max_size=4))
def test_distinct_per_row_counts_each_document_once_and_never_a_pad(rows):
    assert distinct_per_row(np.array(rows)).tolist() == [len({c for c in row if c >= 0}) for row in rows]


def test_a_retriever_that_never_runs_out_is_asked_at_most_the_foreign_depth_limit():
    """Every row full of one foreign document, however deep: the search doubles up to the limit, then stops."""
    from ragretrieval.retrieval.rollup import FOREIGN_DEPTH_LIMIT, HitTable, search_for_documents

    class Endless:
        def __init__(self):
            self.depths = []

        def search(self, questions, depth):
            self.depths.append(depth)
            return Ranking(np.full((len(questions), depth), 1), np.zeros((len(questions), depth)),
                           (Hit(UNKNOWN_DOC),))

    chunks = chunk_corpus([Document("d0.md", "d0", doc_text(0, 1))], ChunkPolicy(LINE, 0))
    retriever = Endless()
    ranking = search_for_documents(retriever, ["q"], 3, HitTable(chunks, ["d0.md"]))
    assert retriever.depths[0] == 1 and retriever.depths[-1] == FOREIGN_DEPTH_LIMIT == 1 << 16
    assert retriever.depths == [1 << i for i in range(17)] and ranking.depth == FOREIGN_DEPTH_LIMIT


def test_a_chunking_without_chunks_starts_at_4k_and_rolls_up_no_question():
    """A corpus of blank documents has no chunk: the search starts at 4k (there is no chunk count to stop at), and a
    roll-up of no question reports no empty ranking."""
    from ragretrieval.retrieval.rollup import HitTable, roll_up, search_for_documents

    class DocumentsOnly:
        def __init__(self):
            self.depths = []

        def search(self, questions, depth):
            self.depths.append(depth)
            row = [0, 1][:depth]
            return Ranking(np.array([row + [-1] * (depth - len(row))]), np.zeros((1, depth)),
                           (Hit("d0.md"), Hit(UNKNOWN_DOC)))

    retriever, table = DocumentsOnly(), HitTable([], ["d0.md"])
    ranking = search_for_documents(retriever, ["q"], 3, table)
    assert retriever.depths == [12]
    found = roll_up(ranking, ["q"], table, 3, "markdown:size=8:overlap=0")
    assert found.doc_run.doc_ids.tolist()[:2] == ["d0.md", UNKNOWN_DOC] and found.short_rankings == 1
    nothing = roll_up(Ranking(np.zeros((0, 3), np.int64), np.zeros((0, 3))), [], table, 3, "p")
    assert (nothing.empty_rankings, nothing.short_rankings, nothing.retrieved) == (0, 0, [])


def test_an_empty_slot_inside_a_row_is_skipped_not_the_end_of_the_row():
    from ragretrieval.retrieval.rollup import HitTable, roll_up

    chunks = chunk_corpus([Document("d0.md", "d0", doc_text(0, 2))], ChunkPolicy(LINE, 0))
    found = roll_up(Ranking(np.array([[0, -1, 1]]), np.array([[3.0, np.nan, 1.0]])), ["q"],
                    HitTable(chunks, ["d0.md"]), 3, "p")
    assert found.retrieved == [[("d0.md#0", "d0.md", 3.0), ("d0.md#1", "d0.md", 1.0)]]
