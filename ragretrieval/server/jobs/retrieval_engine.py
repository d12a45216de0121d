"""Retrieval evaluations (``kind: "retrieval"``): the document- and chunk-level grid of ``ragretrieval eval`` for a
question set, stored as a retrieval run.

The settings are `EvalConfig`'s (``retriever`` and the retrieval ``options``: ``model``, ``ks``, ``chunk_size``,
``chunk_overlap``, ``store``, ``store_options``, ``retriever_options``, ``embed``, ``rel_level``), built by the same
`build_settings` as ``eval``'s options, ``rr.evaluate``'s keyword arguments and a settings file. A worker prepares the
evaluation by running the pipeline's `evaluate` once over all its questions (the function ``eval`` and
``rr.evaluate`` run), so a web evaluation of a dataset's questions with the same settings is the same run as the
command line's: same configuration key, same numbers. Each question's result is then read from that report: its
document ranking (to the largest cutoff) as ``rag_answer_sources``, each document with the text of its best chunk,
and its metrics as ``doc/recall@5``, ``chunk/ndcg@10``, ... The stored run is the report itself.

A question without relevant documents cannot be scored (``eval`` leaves it out, with a note): its result has no
metrics and no sources. A set where no question has relevant documents is refused when the evaluation is created.
"""

from __future__ import annotations

from dataclasses import replace

from ...data.chunking import ChunkPolicy, chunk_corpus
from ...data.dataset import load_dataset
from ...evaluation.pipeline import evaluate
from ...evaluation.report import EvalReport
from .contract import EngineError, EvaluationSettings, ItemResult, QuestionItem
from .options import retrieval_config
from .records import question_records

SNIPPET = 600  # characters of a document's best chunk shown beside it


def prepare_retrieval(evaluation: EvaluationSettings, stop) -> "RetrievalRunner":
    """Run `evaluate` over every question of the evaluation, once per worker."""
    if evaluation.dataset_path is None:
        raise EngineError(f"corpus {evaluation.dataset!r} is not under this worker's --datasets folder")
    dataset = load_dataset(evaluation.dataset_path)
    items = list(evaluation.questions())
    records, notes = question_records(items, dataset.documents)
    config = retrieval_config(evaluation.retriever, evaluation.options)
    report = evaluate(replace(dataset, questions=tuple(records.values())), config, progress=False, stop=stop)
    report.notes.extend(notes)
    chunks = chunk_corpus(dataset.documents, ChunkPolicy(config.chunk_size, config.chunk_overlap))
    texts = {chunk.chunk_id: chunk.text for chunk in chunks}
    titles = {document.id: document.title for document in dataset.documents}
    return RetrievalRunner(report, {key: record.id for key, record in records.items()}, texts, titles)


class RetrievalRunner:
    def __init__(self, report: EvalReport, record_ids: dict[str, str], texts: dict[str, str],
                 titles: dict[str, str]):
        self.evaluated = report
        self.record_ids = record_ids  # the evaluation's question id -> the id the report knows it by
        self.by_id = {question.id: question for question in report.questions}
        self.texts, self.titles = texts, titles

    def run(self, question: QuestionItem) -> ItemResult:
        record_id = self.record_ids.get(question.question_id)
        if record_id is None:
            raise EngineError(f"question {question.question_id!r} is not one of the evaluation's questions")
        scored = self.by_id.get(record_id)
        if scored is None:  # no relevant documents: left out of scoring, as `eval` leaves it out
            return ItemResult(answer_record={"id": record_id, "scored": False})
        best = {}
        for chunk in scored.retrieved_chunks:
            best.setdefault(chunk.parent_id, chunk)
        sources = []
        for position, doc_id in enumerate(scored.retrieved_documents):
            source = {"position": position, "doc_id": doc_id, "title": self.titles.get(doc_id) or None}
            if doc_id in best:
                source.update(chunk_id=best[doc_id].chunk_id, score=best[doc_id].score,
                              content=self.texts.get(best[doc_id].chunk_id, "")[:SNIPPET])
            sources.append({key: value for key, value in source.items() if value is not None})
        metrics = {f"{level}/{name}": value for level, values in sorted(scored.metrics.items())
                   for name, value in values.items()}
        return ItemResult(rag_answer_sources=sources, metrics=metrics, answer_record=scored.model_dump(mode="json"))

    def report(self, records: list[dict], timings: dict[str, float]) -> EvalReport:
        """The stored run: the report `evaluate` made (every question's record is its own), timed."""
        scored = [record["id"] for record in records if record.get("scored", True)]
        if scored != [question.id for question in self.evaluated.questions]:
            raise EngineError("the stored results are not the questions this worker evaluated")
        return self.evaluated.model_copy(update={"timings": {**self.evaluated.timings, **timings}})

    def close(self) -> None:
        """Nothing to release: the report and the chunks' texts are memory only."""
