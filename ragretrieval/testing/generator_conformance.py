"""The conformance suite every generator runs: subclass `GeneratorConformance`, give its spec, inherit the tests.

A generator (built in, or a plugin from the entry-point group ``ragretrieval.generators``) proves it behaves as
``ragretrieval answer`` and the web app expect::

    import pytest
    from ragretrieval.testing.generator_conformance import GeneratorConformance

    class TestMyGenerator(GeneratorConformance):
        @pytest.fixture
        def generator_spec(self, dataset):
            return "mine:fast"

Fixtures a subclass gives or overrides:

- ``generator_spec`` (required): the spec the registry builds the generator from. It may use ``dataset`` (a small
  dataset folder written for the test: three recipes, three questions with given contexts and checks).
- ``options``: the `GeneratorOptions` (default: all defaults; the suite fills in the questions and documents).
- ``cites_within_contexts``: whether every citation the answers hold names one of the contexts shown (default True).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from ..answers.batch import run_answers
from ..answers.generators import GenerationRequest, Generator, GeneratorOptions, build_generator
from ..answers.report import AnswerReport, ContextUsed
from ..answers.session import AnswerSession, AnswerSettings
from ..data.dataset import QuestionRecord
from .demo import demo_dataset

SECRET_VARIABLES = ("OPENAI_API_KEY",)


def conformance_dataset(folder):
    """The suites' small dataset: `demo.demo_dataset` (kept under this name for the suites and their users)."""
    return demo_dataset(folder)


class GeneratorConformance:
    @pytest.fixture
    def generator_spec(self) -> str:
        raise NotImplementedError("a conformance test class must give the `generator_spec` fixture")

    @pytest.fixture
    def options(self) -> GeneratorOptions:
        return GeneratorOptions()

    @pytest.fixture
    def cites_within_contexts(self) -> bool:
        return True

    @pytest.fixture
    def dataset(self, tmp_path):
        return conformance_dataset(tmp_path / "conformance-dataset")

    @pytest.fixture
    def generator(self, generator_spec, options, dataset) -> Generator:
        return build_generator(generator_spec, replace(options, language="en", refusal_message="No answer found",
                                                       documents={d.id: d for d in dataset.documents},
                                                       questions=dataset.questions))

    @staticmethod
    def request(dataset, question: QuestionRecord) -> GenerationRequest:
        documents = {d.id: d for d in dataset.documents}
        contexts = [ContextUsed(doc_id=d, title=documents[d].title, text=documents[d].text) for d in question.context]
        return GenerationRequest(question, contexts, "No answer found", "en")

    def test_follows_the_protocol(self, generator, generator_spec):
        assert isinstance(generator, Generator)
        assert generator.spec == generator_spec
        assert isinstance(generator.provides_contexts, bool)

    def test_answers_every_question(self, generator, dataset, cites_within_contexts):
        from ..answers.citations import cited_positions

        for question in dataset.questions:
            request = self.request(dataset, question)
            generated = generator.generate(request)
            assert isinstance(generated.answer, str) and generated.answer.strip()
            assert generated.input_tokens >= 0 and generated.output_tokens >= 0 and generated.latency >= 0
            contexts = request.contexts
            if generated.contexts is not None:
                assert all(isinstance(c, ContextUsed) for c in generated.contexts)
                contexts = generated.contexts
            if cites_within_contexts:
                assert all(p < len(contexts) for p in cited_positions(generated.answer, [c.doc_id or "" for c in
                                                                                         contexts]))

    def test_answers_the_same_request_the_same_way(self, generator, dataset):
        request = self.request(dataset, dataset.questions[0])
        assert generator.generate(request).answer == generator.generate(request).answer

    def test_is_safe_to_call_from_threads(self, generator, dataset):
        from concurrent.futures import ThreadPoolExecutor

        requests = [self.request(dataset, q) for q in dataset.questions] * 4
        alone = [generator.generate(r).answer for r in requests]
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(lambda r: generator.generate(r).answer, requests))
        assert together == alone

    def test_info_is_json_and_holds_no_secret(self, generator):
        text = json.dumps(generator.info(), ensure_ascii=False)
        for name in SECRET_VARIABLES:
            if os.environ.get(name):
                assert os.environ[name] not in text

    def test_a_session_runs_it_end_to_end(self, generator, dataset, tmp_path):
        session = AnswerSession(dataset, AnswerSettings(generator=generator.spec, contexts="given"),
                                generator=generator)
        report = run_answers(session, threads=2, journal_path=tmp_path / "journal.jsonl")
        assert [q.id for q in report.questions] == [q.id for q in dataset.questions]
        assert report.failed == 0 and all(q.error is None for q in report.questions)
        assert AnswerReport.model_validate_json(report.model_dump_json()) == report
