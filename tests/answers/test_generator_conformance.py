"""Every built-in generator passes the conformance suite (ragretrieval.testing.generator_conformance)."""

from __future__ import annotations

import json

import pytest

from ragretrieval.answers.generators.base import GeneratorOptions
from ragretrieval.answers.generators.extractive import ExtractiveGenerator
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.generator_conformance import GeneratorConformance


class TestExtractive(GeneratorConformance):
    @pytest.fixture
    def generator_spec(self):
        return "extractive"


class TestExtractiveOneSentence(GeneratorConformance):
    @pytest.fixture
    def generator_spec(self):
        return "extractive"

    @pytest.fixture
    def options(self):
        return GeneratorOptions(options={"sentences": 1})

    def test_it_took_the_option(self, generator):
        assert isinstance(generator, ExtractiveGenerator) and generator.n_sentences == 1


def echo_first_context(request: dict) -> Reply:
    """An answer quoting the first numbered document of the prompt, cited."""
    prompt = request["messages"][-1]["content"] if "messages" in request else request["prompt"]
    line = next((ln for ln in prompt.splitlines() if ln.startswith("[0] ")), "[0] nothing")
    return Reply(f"{line[4:80]} [0]")


class TestOpenAI(GeneratorConformance):
    @pytest.fixture
    def server(self, llm_env):
        with ChatServer(echo_first_context) as server:
            yield server

    @pytest.fixture
    def generator_spec(self, server):
        return "openai:conformance-model"

    @pytest.fixture
    def options(self, server):
        return GeneratorOptions(base_url=server.url, max_retries=0)


class TestOpenAITextCompletion(TestOpenAI):
    @pytest.fixture
    def options(self, server):
        return GeneratorOptions(base_url=server.url, max_retries=0, text_completion=True)

    def test_it_asked_the_completions_route(self, generator, dataset, server):
        generator.generate(self.request(dataset, dataset.questions[0]))
        assert "prompt" in server.requests[-1] and "messages" not in server.requests[-1]


class TestFile(GeneratorConformance):
    @pytest.fixture
    def generator_spec(self, dataset, tmp_path):
        path = tmp_path / "answers.jsonl"
        lines = [{"question_id": "q-soup", "answer": "Five minutes [0]."},
                 {"request_id": "q-rice", "request": "Which rice is best for egg fried rice?",
                  "response": "Cold rice from the day before [0].",
                  "retrieved_context": [{"doc_uri": "https://git.example.org/blob/main/staple/rice.md"}]},
                 {"question_id": "q-none", "answer": "No answer found"}]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return f"file:{path}"


class TestHttp(GeneratorConformance):
    @pytest.fixture
    def generator_spec(self, rag_service):
        return f"http:{rag_service.url}/answer"
