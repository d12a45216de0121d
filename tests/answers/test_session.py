"""`AnswerSession` as the web app uses it: `answer_one` alone and from threads, the scorer seam for judges, and
given contexts shuffled with a recorded seed (citation positions follow the order shown)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragretrieval.answers.batch import build_report, run_answers, run_key
from ragretrieval.answers.generators import GeneratorOptions
from ragretrieval.answers.session import AnswerSession, AnswerSettings, AnswerSettingsError
from ragretrieval.data.corpus import corpus_fingerprint
from ragretrieval.data.dataset import Manifest, Provenance, QuestionRecord, load_dataset, write_dataset
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.testing.chat_server import ChatServer, Reply
from ragretrieval.testing.demo import DOCUMENTS
from ragretrieval.work.options import SettingsError

KEY_SENTENCE = {"tomatoes": "Boil them", "fried rice": "cold rice", "pudding": "Simmer rice"}  # question word ->


@pytest.fixture
def dataset(tmp_path):
    ids = [d.id for d in DOCUMENTS]
    questions = [
        QuestionRecord(id="q-soup", text="How long do the tomatoes boil?", context=ids,
                       expect={"cite": ["soup/tomato.md"]}, provenance=Provenance(generator="hand")),
        QuestionRecord(id="q-rice", text="Which rice for fried rice?", context=ids,
                       expect={"cite": ["staple/rice.md"]}, provenance=Provenance(generator="hand")),
        QuestionRecord(id="q-pudding", text="How is rice pudding made?", context=ids,
                       expect={"cite": ["dessert/pudding.md"]}, provenance=Provenance(generator="hand")),
    ]
    write_dataset(tmp_path / "ds", DOCUMENTS, questions, Manifest(corpus_fingerprint=corpus_fingerprint(DOCUMENTS),
                                                                  n_documents=3, n_questions=3))
    return load_dataset(tmp_path / "ds")


def cite_the_key_document(request: dict) -> Reply:
    """Cite the position at which the prompt shows the document holding the question's key sentence."""
    prompt = request["messages"][-1]["content"]
    question = prompt.rsplit("Question: ", 1)[1]
    key = next(v for k, v in KEY_SENTENCE.items() if k in question.lower())
    position = next(m.group(1) for m in re.finditer(r"^\[(\d+)\] ([^\n]*(?:\n(?!\[\d+\] )[^\n]*)*)", prompt, re.M)
                    if key in m.group(2))
    return Reply(f"See [{position}].")


def test_shuffled_contexts_keep_citations_right(dataset, llm_env):
    with ChatServer(cite_the_key_document) as server:
        def session(seed, shuffle=True):
            settings = AnswerSettings(generator="openai:m", contexts="given", shuffle_context=shuffle, seed=seed,
                                      generator_options=GeneratorOptions(base_url=server.url, max_retries=0))
            return AnswerSession(dataset, settings)

        orders = {}
        for seed in (0, 1, 2, 3):
            report = run_answers(session(seed), threads=2)
            assert report.means["answer"]["cite_f1"] == 1.0  # the generator cites the shown position
            assert report.config.shuffle_context and report.config.seed == seed
            orders[seed] = [[c.doc_id for c in q.contexts] for q in report.questions]
        assert run_answers(session(0), threads=1).questions[0].contexts == \
            run_answers(session(0), threads=3).questions[0].contexts
        assert len({str(order) for order in orders.values()}) > 1  # seeds give other orders
        assert any(order != [d.id for d in DOCUMENTS] for per_seed in orders.values() for order in per_seed)
        plain = run_answers(session(0, shuffle=False))
        assert [c.doc_id for c in plain.questions[0].contexts] == [d.id for d in DOCUMENTS]
        assert plain.config.seed is None and run_key(session(0)) != run_key(session(1))


def test_answer_one_alone_and_from_threads_as_the_web_app_calls_it(demo_dataset):
    dataset = load_dataset(demo_dataset)
    session = AnswerSession(dataset, AnswerSettings(generator="extractive", retrieval=EvalConfig(retriever="bm25")))
    one = session.answer_one(dataset.questions[3])
    assert one.id == dataset.questions[3].id and one.contexts and "doc" in one.metrics and one.score is not None
    with ThreadPoolExecutor(6) as pool:
        answered = list(pool.map(session.answer_one, dataset.questions))
    batch = run_answers(session, threads=1)
    assert [a.model_dump(exclude={"latency"}) for a in answered] == \
        [q.model_dump(exclude={"latency"}) for q in batch.questions]
    report = build_report(session, answered, {"answering": 1.0})
    assert report.means["answer"] == batch.means["answer"] and report.means["doc"] == batch.means["doc"]


class AnswerLength:
    """A scorer of the kind an LLM judge is: it adds a value and a verdict with its reasoning."""

    name = "length"

    def settings(self) -> dict:
        return {"max_chars": 40}

    def score(self, question, answered) -> None:
        short = float(len(answered.answer) <= 40)
        answered.metrics.setdefault("answer", {})["short"] = short
        answered.judges["length"] = {"value": short, "reasoning": f"{len(answered.answer)} characters"}


def test_scorers_after_the_checks_are_the_seam_for_judges(demo_dataset):
    dataset = load_dataset(demo_dataset)
    session = AnswerSession(dataset, AnswerSettings(generator="extractive", retrieval=EvalConfig(retriever="bm25")))
    before = run_key(session)
    session.scorers.append(AnswerLength())
    report = run_answers(session, threads=2)
    assert report.config.scorers == {"checks": {"cite_relevant": True}, "length": {"max_chars": 40}}
    assert run_key(session) != before  # a scorer is part of the run's identity
    assert 0 <= report.means["answer"]["short"] <= 1 and "short" in report.intervals["answer"]
    assert report.questions[0].judges["length"]["reasoning"].endswith("characters")


def test_given_contexts_are_checked_before_anything_is_asked(dataset):
    bad = dataset.questions[0].model_copy(update={"expect": {"cite": ["nowhere.md"]}})
    broken = type(dataset)(dataset.path, dataset.documents, (bad,), dataset.manifest)
    with pytest.raises(AnswerSettingsError, match="'expect.cite' names 'nowhere.md', which is not in its context"):
        AnswerSession(broken, AnswerSettings(generator="extractive", contexts="given"))
    with pytest.raises(SettingsError, match="contexts: Input should be 'retrieved' or 'given'"):
        AnswerSession(dataset, AnswerSettings(generator="extractive", contexts="all"))
