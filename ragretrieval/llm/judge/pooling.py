"""LLM relevance judgements by pooling (the TREC method): the top `depth` chunks of each run, per question, graded
0-3 by a model that answers ``{"score": 0-3, "reasoning": "..."}``.

A judgement's request is built only from the prompt, the question and the chunk text, and the answer cache is keyed
by the hash of the full request with the model, so each judgement is cached by (model, prompt, question, chunk text):
judging a new run asks only about pairs never judged, and a killed run resumes for free.
"""

from __future__ import annotations

from ...data.chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ...data.dataset import Dataset
from ...errors import RagretrievalError
from ...evaluation.report import EvalReport, ReportError
from ...work.pool import parallel_map
from ...work.progress import as_progress
from ...work.stop import StopToken
from ..client import LLM_CALLS, ChatClient, LLMError, LLMSettings
from ..prompts import Prompt
from ..replies import ask, parse_judgement
from .judgements import ChunkLabel, FailedJudgement, Judgements


class PoolingError(RagretrievalError, ValueError):
    """Runs that cannot be pooled together or do not belong to the dataset."""


JudgeError = PoolingError  # its name before 0.3 (answers.judges.JudgeError is the answer judges' error)


def load_reports(paths) -> list[EvalReport]:
    try:
        return [EvalReport.load(path) for path in paths]
    except ReportError as error:
        raise PoolingError(str(error)) from None


def pool(dataset: Dataset, reports: list[EvalReport], paths, depth: int) -> tuple[list[tuple[str, str, str]], dict]:
    """(question id, question text, chunk id) for the union of each run's top `depth` chunks, in first-seen order,
    and the chunk settings every run shares."""
    if depth <= 0:
        raise PoolingError(f"depth must be a positive integer, got {depth}")
    first = reports[0]
    for report, path in zip(reports, paths):
        if report.dataset.corpus_fingerprint != dataset.fingerprint:
            raise PoolingError(f"{path}: this run was made on another corpus than {dataset.path}")
        same = (report.config.chunk_size, report.config.chunk_overlap, report.dataset.chunks_fingerprint)
        if same != (first.config.chunk_size, first.config.chunk_overlap, first.dataset.chunks_fingerprint):
            raise PoolingError(f"{path}: chunked differently from {paths[0]}; pool only runs with the same chunks")
    pairs, seen = [], set()
    for report in reports:
        for result in report.questions:
            for hit in result.retrieved_chunks[:depth]:
                if (result.id, hit.chunk_id) not in seen:
                    seen.add((result.id, hit.chunk_id))
                    pairs.append((result.id, result.text, hit.chunk_id))
    chunking = {"chunk_size": first.config.chunk_size, "chunk_overlap": first.config.chunk_overlap,
                "chunks_fingerprint": first.dataset.chunks_fingerprint}
    return pairs, chunking


def judge(dataset: Dataset, run_paths, settings: LLMSettings, prompt: Prompt, language: str, depth: int = 10,
          concurrency: int = LLM_CALLS.concurrency, progress=None, stop: StopToken | None = None) -> Judgements:
    """Grade the pooled pairs. Every answer is cached as it arrives (a malformed one is not kept as good), so a
    killed or stopped run resumes for free and a re-run asks only what failed."""
    progress = as_progress(progress)
    reports = load_reports(run_paths)
    pairs, chunking = pool(dataset, reports, [str(p) for p in run_paths], depth)
    chunks = chunk_corpus(dataset.documents, ChunkPolicy(chunking["chunk_size"], chunking["chunk_overlap"]))
    if chunks_fingerprint(chunks) != chunking["chunks_fingerprint"]:
        raise PoolingError("the runs' chunks differ from this version's chunking of the corpus; re-run eval first")
    text = {chunk.chunk_id: chunk.text for chunk in chunks}
    unknown = next((chunk_id for _, _, chunk_id in pairs if chunk_id not in text), None)
    if unknown is not None:
        raise PoolingError(f"chunk {unknown!r} of a run is not a chunk of this corpus; only runs retrieving "
                         "ragretrieval's own chunks can be judged")
    client = ChatClient(settings, stop=stop)

    def grade(pair):
        question_id, question, chunk_id = pair
        message = prompt.fill(question=question, passage=text[chunk_id])
        return ask(client, [{"role": "user", "content": message}], parse_judgement, language)

    outcomes: list = [None] * len(pairs)
    progress.stage("judgements", total=len(pairs), unit="pair")
    try:
        for index, outcome in parallel_map(grade, pairs, concurrency, stop=stop, name="ragretrieval-judge"):
            outcomes[index] = outcome
            progress.advance(1, client.usage.status())
    except LLMError as failure:
        raise LLMError(f"{failure}\nevery judgement answered so far is cached; run the same command again to "
                       "continue") from None
    labels, failed = [], []
    for (question_id, _, chunk_id), (judgement, error) in zip(pairs, outcomes):
        if judgement is None:
            failed.append(FailedJudgement(question_id=question_id, chunk_id=chunk_id, reason=error))
        else:
            labels.append(ChunkLabel(question_id=question_id, chunk_id=chunk_id, grade=judgement.score,
                                     reasoning=judgement.reasoning))
    return Judgements(
        corpus_fingerprint=dataset.fingerprint,
        **chunking,
        judge={**settings.public(), "prompt": prompt.source, "prompt_hash": prompt.hash, "depth": depth,
               "runs": [str(p) for p in run_paths]},
        usage=client.usage.as_dict(),
        labels=labels,
        failed=failed,
    )
