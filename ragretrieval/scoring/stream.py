"""Score TREC files without holding the run: `score_files` reads the run in batches of whole queries and ranks each
batch as it comes, against qrels held in memory (docs/metrics.md, "Runs larger than memory").

Why the numbers are the same bits as ``score(read_qrels(q), read_run(r), ...)``: every metric is computed from the
rank of each judged doc (`ranking.judged_ranks`), and a query's ranks depend on its own lines only. Each batch becomes
a `Run` of its queries (its doc codes line by line, `line_codes.py`: no vocabulary) and a `Qrels` of their
judgements, ranked by the same `judged_ranks`; the ranks land in one array over the whole qrels, and `score.scored`
computes the metrics once from it, as `score()` does.

A run whose queries' lines are not together (interleaved) would put one query in two batches: the second batch finds
the query already ranked, and the run is then grouped on disk (`grouping.py`) and read again, or refused.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass

import numpy as np

from ..work.progress import Progress, as_progress
from .grouping import grouped_batches
from .line_codes import LineIds, code_lines
from .ranking import judged_ranks
from .scan import is_gzip
from .score import ScoreResult, checked_options, scored
from .trec import RUN_LAYOUT, encoded, parse_blocks, read_qrels, run_from_columns
from .types import THREADS, Qrels, ScoringError
from .vocabulary import IdColumn, KnownIds

BATCH_BYTES = 1 << 25  # run text per batch (about 800,000 lines): smaller batches stay in the caches better (16-32 MB
# ran 20-30 % faster than 64-128 MB on 10 million lines), larger ones pay less per batch
INTERLEAVED = ("group", "refuse")


class InterleavedRunError(ScoringError):
    """A run whose queries' lines are not together, with ``interleaved="refuse"``."""


class _SeenAgain(Exception):
    """A qrels query met in a second batch (internal: the run is then grouped or refused)."""

    def __init__(self, query: str, line: int):
        super().__init__(query)
        self.query, self.line = query, line


@dataclass(frozen=True)
class RankedFile:
    """What reading a run file against qrels gives: the rank of every judgement (0: not retrieved, or not located),
    which qrels queries the run ranks, the length of each ranking (when asked for) and the run tag of the file's
    last line."""

    ranks: np.ndarray
    in_run: np.ndarray
    lengths: np.ndarray | None
    tag: str | None


def score_files(qrels, run, metrics, *, rel_level: int = 1, ties: str = "score", duplicates: str = "first",
                queries: str = "all", depth: int | None = None, interleaved: str = "group",
                progress: Progress | None = None) -> ScoreResult:
    """Score the TREC run file `run` against `qrels` (a qrels file or a `Qrels`), reading the run in batches of whole
    queries: memory holds the qrels and one batch, never the whole run. Gzip files are read as they are. The options
    are `score()`'s, with the same results, bit for bit; `interleaved` says what to do with a run whose queries' lines
    are not together: "group" them on disk (temporary files, removed afterwards), or "refuse" the run."""
    metrics = checked_options(metrics, rel_level=rel_level, ties=ties, duplicates=duplicates, queries=queries,
                              depth=depth)
    judged = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    ranked = rank_file(judged, run, ties=ties, duplicates=duplicates, depth=depth, interleaved=interleaved,
                       progress=progress)
    return scored(judged, ranked.ranks, ranked.in_run, metrics, rel_level, queries)


def rank_file(qrels: Qrels, path, *, ties: str = "score", duplicates: str = "first", depth: int | None = None,
              min_label: int | None = 1, lengths: bool = False, interleaved: str = "group",
              progress: Progress | None = None) -> RankedFile:
    """The ranks of the judgements of `qrels` with a label >= `min_label` (None: all) in the run file `path`, read in
    batches of whole queries (see `score_files`); with `lengths`, also the length of every ranking."""
    check_interleaved(interleaved)
    progress = as_progress(progress)
    ranker = _Ranker(qrels, ties, duplicates, depth, min_label, lengths, path)
    total = None if is_gzip(path) else os.path.getsize(path)  # in bytes of text
    with ThreadPoolExecutor(THREADS) as pool:
        progress.stage(f"scoring {os.path.basename(path)}", total=total, unit="B")
        try:
            with closing(_batches(path, pool)) as batches:
                for batch in batches:
                    ranker.add(batch, pool)
                    progress.advance(sum(parsed.size for parsed in batch))
        except _SeenAgain as again:
            if interleaved == "refuse":
                raise InterleavedRunError(_interleaved_message(path, again)) from None
            progress.note(f"{path}: the lines of query {again.query!r} are not together (seen again at or after "
                          f"line {again.line}); grouping the run by query in temporary files")
            ranker.restart()
            progress.stage(f"scoring {os.path.basename(path)}, grouped by query", total=total, unit="B")
            for batch, tag in grouped_batches(path, pool, _preparers(), BATCH_BYTES):
                ranker.add(batch, pool, tag)
                progress.advance(sum(parsed.size for parsed in batch))
    return ranker.result()


def check_interleaved(interleaved) -> None:
    """A `ScoringError` unless `interleaved` is one of `INTERLEAVED`."""
    if interleaved not in INTERLEAVED:
        raise ScoringError(f"interleaved must be one of {', '.join(INTERLEAVED)}; got {interleaved!r}")


def _interleaved_message(path, again: _SeenAgain) -> str:
    command = f"zcat {path} | LC_ALL=C sort -k1,1 -s" if is_gzip(path) else f"LC_ALL=C sort -k1,1 -s {path}"
    return (f"{path}: the lines of query {again.query!r} are not together (seen again at or after line {again.line}), "
            f"so the run cannot be read one query at a time; group each query's lines first, e.g. {command} > "
            f"grouped.txt (or let ragretrieval group it on disk: interleaved='group', --interleaved group)")


def _preparers() -> list:
    """What the block parsers call `prepare` on: the query column, the doc column (each batch gathers them)."""
    return [IdColumn(ordered=True), LineIds()]


def _batches(path, pool):
    """Lists of `Parsed` blocks of about `BATCH_BYTES` each; blocks end where a query's lines do."""
    batch, size = [], 0
    for parsed in parse_blocks(path, RUN_LAYOUT, _preparers(), pool, whole_queries=True):
        batch.append(parsed)
        size += parsed.size
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The integers of each range [start, start + count), concatenated."""
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))


class _Ranker:
    """Ranks batches of a run file into arrays over the whole qrels."""

    def __init__(self, qrels: Qrels, ties, duplicates, depth, min_label, lengths: bool, path):
        self.qrels, self.path = qrels, path
        self.options = {"ties": ties, "duplicates": duplicates, "depth": depth}
        self.known = KnownIds(qrels.doc_ids, 1)  # hashed once; each batch takes the docs its queries judge
        self.position = {query: i for i, query in enumerate(qrels.query_ids.tolist())}
        self.located = np.ones(len(qrels.labels), bool) if min_label is None else qrels.labels >= min_label
        self.count = lengths
        self.restart()

    def restart(self) -> None:
        self.ranks = np.zeros(len(self.qrels.labels), np.int64)
        self.in_run = np.zeros(self.qrels.n_queries, bool)
        self.lengths = np.zeros(self.qrels.n_queries, np.int64) if self.count else None
        self.tag: bytes | None = None

    def result(self) -> RankedFile:
        tag = None if self.tag is None else self.tag.decode("utf-8", "replace")
        return RankedFile(self.ranks, self.in_run, self.lengths, tag)

    def add(self, batch: list, pool, tag: bytes | None = None) -> None:
        """Rank one batch: whole queries, none of them ranked before (else `_SeenAgain`)."""
        qrels = self.qrels
        queries = IdColumn(ordered=True)
        for parsed in batch:
            queries.add(parsed.ids[0])
            self.tag = parsed.tag if parsed.tag is not None else self.tag
        if tag is not None:
            self.tag = tag
        (heads, lengths), query_ids = encoded(self.path, lambda: queries.encode(runs=True))
        index = np.fromiter(map(self.position.get, query_ids.tolist(), [-1] * len(query_ids)), np.int64,
                            len(query_ids))
        present = np.flatnonzero(index >= 0)  # run rows of qrels queries
        rows = index[present]
        again = np.flatnonzero(self.in_run[rows])
        if len(again):
            raise _SeenAgain(str(query_ids[present[again[0]]]), batch[0].first_line)
        self.in_run[rows] = True
        counts = qrels.indptr[rows + 1] - qrels.indptr[rows]
        judgements = _ranges(qrels.indptr[rows], counts)
        subset, local = np.unique(qrels.doc_codes[judgements], return_inverse=True)
        known = self.known.subset(subset)
        query_of_line = np.repeat(heads, lengths)
        doc_columns = encoded(self.path, lambda: code_lines([parsed.ids[1] for parsed in batch], query_of_line,
                                                            known))  # every batch: a bad id is refused anywhere
        if len(rows) == 0:
            return
        scores = np.concatenate([parsed.values for parsed in batch])
        run = run_from_columns(((heads, lengths), query_ids), doc_columns, scores)
        local = local.ravel()
        indptr = np.concatenate(([0], np.cumsum(counts)))
        judged = Qrels.from_arrays(qrels.query_ids[rows], qrels.doc_ids[subset], indptr, local,
                                   qrels.labels[judgements], check_ids=False)
        targets = np.where(self.located[judgements], local, -1)
        ranking_lengths = np.zeros(len(rows), np.int64) if self.count else None
        self.ranks[judgements] = judged_ranks(judged, run, present, targets, lengths=ranking_lengths, **self.options)
        if self.lengths is not None and ranking_lengths is not None:  # counting
            self.lengths[rows] = ranking_lengths
