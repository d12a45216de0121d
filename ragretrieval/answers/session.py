"""One answer run's working state, built once: the dataset, the contexts (a retriever indexed, or the questions' own
documents), the generator, the checks and any further scorers. `AnswerSession.answer_one(question)` is the whole
per-question path, contexts -> generate -> citations -> scorers (checks, then judges) -> cost and latency ->
retrieval metrics, and is safe to call from several threads at once; the batch runner (batch.py) and the web app both
call it.

Contexts (`AnswerSettings.contexts`):

- ``retrieved``: the first ``context_k`` chunks the configured retriever finds; the run also holds that ranking's
  retrieval metrics. A generator that brings its own contexts (``file:``, ``http:``) is not given any, so nothing is
  retrieved for it and the run's contexts mode is recorded as ``generator``.
- ``given``: the documents the question lists in ``context``, in that order, or shuffled per question with a
  recorded seed (``shuffle_context``); citation positions follow the order shown.

Contexts a generator returns (a file's, a service's sources) replace the others; when they name documents and the
question has relevant ones, ``document_recall`` (relevant documents among them, over the relevant ones) is recorded
at document level.
"""

from __future__ import annotations

import hashlib
import random
import time
from pathlib import Path

from .. import __version__
from ..data.dataset import Dataset, QuestionRecord, answer_labels_fingerprint, labels_fingerprint
from ..evaluation.report import DatasetInfo
from ..io.redact import redact_urls
from ..llm.budget import Budget
from ..retrieval.registry import BuildContext
from ..work.options import build_settings
from .checks import CheckError, CheckSettings, check_expect, load_unsafe_words
from .checks.rules import DEFAULT_REFUSAL
from .citations import cited_positions
from .failures import ClassRules, classify, evidence_shown
from .generators import GenerationFailed, GenerationRequest, Generator, GeneratorOptions, build_generator
from .normalize import Normalizer, get_lemmatizer
from .prompt import REFUSALS, pick_language
from .report import ANSWER_LEVEL, AnswerConfig, AnsweredQuestion, CheckConfig, Citation, ContextUsed
from .retrieved import RetrievedContexts
from .scorers import CheckScorer, QuestionScorer, expectations
from .settings import AnswerSettings
from .usage import add_agent_metrics


class AnswerSettingsError(CheckError):
    """Questions that do not fit the settings (a question without the context documents `contexts given` shows)."""


def resolve_checks(settings: AnswerSettings, language: str, refusal: str) -> tuple[CheckSettings, CheckConfig]:
    """The checks' working settings (lemmatiser loaded, unsafe words read) and what the run records of them."""
    normalizer = Normalizer(get_lemmatizer(settings.lemmatizer, language))
    unsafe, unsafe_id = frozenset(), None
    if settings.unsafe_words is not None:
        path = Path(settings.unsafe_words)
        unsafe = load_unsafe_words(path, normalizer)
        unsafe_id = f"{path.name}@sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    checks = CheckSettings(normalizer=normalizer, refusal_message=refusal, unsafe_words=unsafe, match=settings.match,
                           citation_pattern=settings.citation_pattern)
    config = CheckConfig(lemmatizer=normalizer.lemmatizer.identity, match=settings.match, refusal_message=refusal,
                         unsafe_words=unsafe_id, citation_pattern=settings.citation_pattern)
    return checks, config


class AnswerSession:
    """`settings` is an `AnswerSettings` (or its fields as a dict); judges it names are built as scorers after
    the checks (`judge_context` shares one judges' client between sessions). With ``max_cost`` (or a `budget`
    given: one limit shared with other work) the generator's and the judges' requests stop before passing it."""

    def __init__(self, dataset: Dataset, settings: AnswerSettings | dict, generator: Generator | None = None,
                 progress=None, stop=None, context: BuildContext | None = None, retriever=None, budget=None):
        settings = settings if isinstance(settings, AnswerSettings) else build_settings(AnswerSettings, settings)
        if not dataset.questions:
            raise AnswerSettingsError(f"{dataset.questions_path or dataset.path}: no question to answer (the question "
                                      "set is empty); nothing is run or stored")
        self.dataset, self.settings, self.stop = dataset, settings, stop
        self.documents = {d.id: d for d in dataset.documents}
        self.language = (pick_language([q.text for q in dataset.questions] + [d.text for d in dataset.documents[:20]])
                         if settings.language == "auto" else settings.language)
        self.refusal = settings.refusal_message or REFUSALS.get(self.language, DEFAULT_REFUSAL)
        self.check_settings, check_config = resolve_checks(settings, self.language, self.refusal)
        self._check_questions()
        self.budget = budget or (Budget(settings.max_cost) if settings.max_cost is not None else None)
        options = GeneratorOptions.from_settings(settings, language=self.language, refusal_message=self.refusal,
                                                 documents=self.documents, questions=dataset.questions, stop=stop,
                                                 budget=self.budget)
        self.generator = generator or build_generator(settings.generator, options)
        self.mode = settings.contexts
        if self.mode == "retrieved" and not type(self.generator).needs_contexts:
            self.mode = "generator"
        self.retrieval, self.timings = None, {}
        if self.mode == "retrieved":
            started = time.perf_counter()
            context = context or BuildContext(progress=progress, stop=stop)
            self.retrieval = RetrievedContexts(dataset, settings.retrieval, settings.context_k, context, retriever)
            self.timings["indexing"] = time.perf_counter() - started  # chunking, embedding, indexing
        self.scorers: list[QuestionScorer] = [CheckScorer(self.check_settings, settings.cite_relevant)]
        if settings.judges:
            from .judges import JudgeOptions, build_judges

            judging = JudgeOptions.from_settings(settings, self.language, stop, settings.nuggets_file(dataset.path),
                                                 budget=self.budget)
            self.scorers += build_judges(settings.judges, judging)
        self._check_config = check_config
        self.class_rules = ClassRules(self.refusal)
        self.offsets = ({c.chunk_id: (c.start, c.end) for c in self.retrieval.chunks} if self.retrieval else {})

    def _check_questions(self) -> None:
        for question in self.dataset.questions:
            where = f"question {question.id!r}"
            check_expect(question.expect, where)
            if self.settings.contexts != "given":
                continue
            if not question.context:
                raise AnswerSettingsError(f"{where} lists no 'context' documents, which contexts given shows; "
                                          "use contexts retrieved or add them")
            missing = [d for d in question.expect.get("cite", []) if d not in question.context]
            if missing:
                raise AnswerSettingsError(f"{where}: 'expect.cite' names {missing[0]!r}, which is not in its context")

    # ---------------------------------------------------------------------------------------------- identity
    @property
    def config(self) -> AnswerConfig:
        s = self.settings
        retrieved = self.mode == "retrieved"
        return AnswerConfig(
            generator=redact_urls(self.generator.spec), generator_settings=self.generator.info(), contexts=self.mode,
            context_k=s.context_k if retrieved else None, shuffle_context=s.shuffle_context and self.mode == "given",
            seed=s.seed if s.shuffle_context and self.mode == "given" else None,
            retrieval=s.retrieval if retrieved else None, checks=self._check_config,
            scorers={scorer.name: scorer.settings() for scorer in self.scorers})

    def dataset_info(self) -> DatasetInfo:
        ds = self.dataset
        chunks = self.retrieval.chunks if self.retrieval else []
        return DatasetInfo(path=ds.folder, corpus_fingerprint=ds.fingerprint,
                           chunks_fingerprint=self.retrieval.chunks_fingerprint if self.retrieval else "",
                           n_documents=len(ds.documents), n_questions=len(ds.questions), n_chunks=len(chunks),
                           label_sources=sorted({q.provenance.generator for q in ds.questions}),
                           labels_fingerprint=labels_fingerprint(ds.questions), questions=ds.other_questions)

    @property
    def answer_labels_fingerprint(self) -> str:
        return answer_labels_fingerprint(self.dataset.questions)

    # ---------------------------------------------------------------------------------------------- answering
    def given_contexts(self, question: QuestionRecord) -> list[ContextUsed]:
        ids = list(question.context)
        if self.settings.shuffle_context:
            random.Random(f"{self.settings.seed}:{question.id}").shuffle(ids)
        return [ContextUsed(doc_id=d, title=self.documents[d].title, text=self.documents[d].text) for d in ids]

    def retrieve_many(self, questions) -> list:
        """Retrieval for a batch of questions at once, to hand to `answer_one` (None each without retrieval)."""
        return self.retrieval.find_many(questions) if self.retrieval is not None else [None] * len(questions)

    def answer_one(self, question: QuestionRecord, retrieved=None) -> AnsweredQuestion:
        """Contexts, answer, citations, every scorer and the retrieval metrics for one question; `retrieved` is this
        question's item of `retrieve_many` when the caller retrieved for a batch."""
        if retrieved is None and self.retrieval is not None:
            retrieved = self.retrieval.find(question)
        contexts = (retrieved.contexts if retrieved else
                    self.given_contexts(question) if self.mode == "given" else [])
        answered = AnsweredQuestion(id=question.id, text=question.text, question_type=question.question_type,
                                    ground_truth=question.ground_truth,
                                    relevant=[r.doc_id for r in question.relevant],
                                    relevant_grades={r.doc_id: r.grade for r in question.relevant})
        started = time.perf_counter()
        try:
            generated = self.generator.generate(GenerationRequest(question, contexts, self.refusal, self.language))
        except GenerationFailed as error:
            answered.error = redact_urls(str(error))  # a message may quote a URL the user gave with its token
            answered.latency = time.perf_counter() - started
        else:
            contexts = generated.contexts if generated.contexts is not None else contexts
            answered.answer, answered.cached, answered.cost = generated.answer, generated.cached, generated.cost
            answered.input_tokens, answered.output_tokens = generated.input_tokens, generated.output_tokens
            answered.total_tokens = generated.input_tokens + generated.output_tokens
            answered.latency = generated.latency or time.perf_counter() - started
        answered.contexts = list(contexts)
        ids = [c.doc_id for c in contexts]
        answered.citations = [Citation(position=p, doc_id=ids[p] if p < len(ids) else None)
                              for p in sorted(cited_positions(answered.answer, [i or "" for i in ids],
                                                              self.settings.citation_pattern))]
        for scorer in self.scorers:
            scorer.score(question, answered)
        add_agent_metrics(answered)
        if retrieved is not None:
            answered.metrics.update(retrieved.metrics)
            answered.retrieved_chunks, answered.retrieved_documents = retrieved.chunks, retrieved.documents
        elif self.mode != "given" and question.relevant and any(ids) and answered.error is None:
            relevant = {r.doc_id for r in question.relevant if r.grade > 0}
            if relevant:
                answered.metrics["doc"] = {"document_recall": len(relevant & set(ids)) / len(relevant)}
        answered.evidence_shown = evidence_shown({r.doc_id: r.spans for r in question.relevant if r.grade > 0},
                                                 answered.contexts, self.offsets)
        answered.failure_class = classify(answered, self.class_rules)
        return answered

    def notes(self) -> list[str]:
        notes = list(getattr(self.generator, "notes", lambda: [])())
        if self.settings.cite_relevant and any(
                "cite" in expectations(q, True) and "cite" not in q.expect for q in self.dataset.questions):
            notes.append("questions without expect.cite are expected to cite their relevant documents "
                         "(cite_relevant false turns this off)")
        return notes

    def meta(self) -> dict:
        """What the report records besides the configuration: versions, the retriever's identity."""
        info = self.retrieval.info() if self.retrieval else None
        return {"ragretrieval_version": __version__,
                "embedder_identity": info.embedders.get("dense") if info else None,
                "embedded_texts": info.embedded_texts if info else 0,
                "retriever": ({"spec": self.retrieval.spec.model_dump(mode="json"), "embedders": info.embedders,
                               "details": info.details} if info else {}),
                "notes": (info.notes if info else []) + self.notes()}


__all__ = ["ANSWER_LEVEL", "AnswerSession", "AnswerSettings", "AnswerSettingsError"]
