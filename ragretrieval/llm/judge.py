"""LLM relevance judgements by pooling (the TREC method): the top `depth` chunks of each run, per question, graded
0-3 by a model that answers ``{"score": 0-3, "reasoning": "..."}``.

A judgement's request is built only from the prompt, the question and the chunk text, and the answer cache is keyed
by the hash of the full request with the model, so each judgement is cached by (model, prompt, question, chunk text):
judging a new run asks only about pairs never judged, and a killed run resumes for free.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tqdm import tqdm

from ..chunking import ChunkPolicy, chunk_corpus, chunks_fingerprint
from ..dataset import Dataset
from ..report import EvalReport, ReportError
from .answers import ask, parse_judgement
from .client import ChatClient, LLMError, LLMSettings
from .judgements import ChunkLabel, FailedJudgement, Judgements
from .prompts import Prompt


class JudgeError(ValueError):
    """Runs that cannot be pooled together or do not belong to the dataset."""


def load_reports(paths) -> list[EvalReport]:
    try:
        return [EvalReport.load(path) for path in paths]
    except ReportError as error:
        raise JudgeError(str(error)) from None


def pool(dataset: Dataset, reports: list[EvalReport], paths, depth: int) -> tuple[list[tuple[str, str, str]], dict]:
    """(question id, question text, chunk id) for the union of each run's top `depth` chunks, in first-seen order,
    and the chunk settings every run shares."""
    if depth <= 0:
        raise JudgeError(f"depth must be a positive integer, got {depth}")
    first = reports[0]
    for report, path in zip(reports, paths):
        if report.dataset.corpus_fingerprint != dataset.fingerprint:
            raise JudgeError(f"{path}: this run was made on another corpus than {dataset.path}")
        same = (report.config.chunk_size, report.config.chunk_overlap, report.dataset.chunks_fingerprint)
        if same != (first.config.chunk_size, first.config.chunk_overlap, first.dataset.chunks_fingerprint):
            raise JudgeError(f"{path}: chunked differently from {paths[0]}; pool only runs with the same chunks")
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
          concurrency: int = 4, progress: bool = True) -> Judgements:
    reports = load_reports(run_paths)
    pairs, chunking = pool(dataset, reports, [str(p) for p in run_paths], depth)
    chunks = chunk_corpus(dataset.documents, ChunkPolicy(chunking["chunk_size"], chunking["chunk_overlap"]))
    if chunks_fingerprint(chunks) != chunking["chunks_fingerprint"]:
        raise JudgeError("the runs' chunks differ from this version's chunking of the corpus; re-run eval first")
    text = {chunk.chunk_id: chunk.text for chunk in chunks}
    unknown = next((chunk_id for _, _, chunk_id in pairs if chunk_id not in text), None)
    if unknown is not None:
        raise JudgeError(f"chunk {unknown!r} of a run is not a chunk of this corpus; only runs retrieving "
                         "ragretrieval's own chunks can be judged")
    client = ChatClient(settings)

    def grade(pair):
        question_id, question, chunk_id = pair
        message = prompt.fill(question=question, passage=text[chunk_id])
        return ask(client, [{"role": "user", "content": message}], parse_judgement, language)

    labels, failed = [], []
    executor = ThreadPoolExecutor(max_workers=max(1, concurrency))
    # on an error or Ctrl-C, queued pairs are cancelled; those in flight finish into the cache
    try:
        with tqdm(total=len(pairs), desc="judgements", unit="pair", disable=not progress) as bar:
            futures = [executor.submit(grade, pair) for pair in pairs]
            for (question_id, _, chunk_id), future in zip(pairs, futures):
                try:
                    judgement, error = future.result()
                except LLMError as failure:
                    raise LLMError(f"{failure}\nevery judgement answered so far is cached; run the same command again "
                                   "to continue") from None
                if judgement is None:
                    failed.append(FailedJudgement(question_id=question_id, chunk_id=chunk_id, reason=error))
                else:
                    labels.append(ChunkLabel(question_id=question_id, chunk_id=chunk_id, grade=judgement.score,
                                             reasoning=judgement.reasoning))
                bar.update(1)
                usage = client.usage
                bar.set_postfix_str(f"tokens {usage.tokens}" + (f", ${usage.cost:.4f}" if usage.cost else ""))
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    return Judgements(
        corpus_fingerprint=dataset.fingerprint,
        **chunking,
        judge={**settings.public(), "prompt": prompt.source, "prompt_hash": prompt.hash, "depth": depth,
               "runs": [str(p) for p in run_paths]},
        usage=client.usage.as_dict(),
        labels=labels,
        failed=failed,
    )
