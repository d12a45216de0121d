"""The parts of the LLM builder on their own: reading answers, locating evidence, filters, journal, prompts, client."""

from __future__ import annotations

import json

import pytest

from ragretrieval.data.corpus import Document
from ragretrieval.data.evidence import Locator
from ragretrieval.llm.client import ChatClient, LLMError, LLMSettings
from ragretrieval.llm.journal import Journal, JournalError
from ragretrieval.llm.prompts import PromptError, guess_language, load_prompt
from ragretrieval.llm.questions.filters import names_document_only
from ragretrieval.llm.questions.generate import DocumentResult
from ragretrieval.llm.replies import MalformedAnswer, parse_judgement, parse_questions
from ragretrieval.testing.chat_server import ChatServer, Reply

from .conftest import API_KEY

ITEM = {"question_type": "factual", "question_text": "盐放多少？", "ground_truth": "5 克", "evidence": "盐 5 克"}


@pytest.mark.parametrize("text", [
    json.dumps([ITEM], ensure_ascii=False),
    json.dumps({"questions": [ITEM]}, ensure_ascii=False),
    "当然！\n```json\n" + json.dumps([ITEM], ensure_ascii=False) + "\n```\n希望有帮助。",
    "Here you go: " + json.dumps([ITEM], ensure_ascii=False) + " -- done",
])
def test_question_answers_in_every_accepted_shape(text):
    (question,) = parse_questions(text)
    assert (question.question_type, question.question_text, question.evidence) == ("FACTUAL", "盐放多少？", ["盐 5 克"])


@pytest.mark.parametrize("text, reason", [
    ('[{"question_type": "FACTUAL", "question_text": "x"', "Expecting"),
    ('{"items": []}', 'expected a JSON list of questions, or an object with a "questions" list'),
    ('[{"question_type": "FACTUAL"}]', "question 1, field 'question_text': Field required"),
    ("no json at all", "Expecting value"),
])
def test_malformed_question_answers_say_why(text, reason):
    with pytest.raises(MalformedAnswer, match=reason):
        parse_questions(text)


def test_judgements_are_read_and_checked():
    assert parse_judgement('```\n{"score": "2", "reasoning": "partly"}\n```').score == 2
    with pytest.raises(MalformedAnswer, match="less than or equal to 3"):
        parse_judgement('{"score": 7, "reasoning": "?"}')


TEXT = "# 红烧肉的做法\n\n- 五花肉 500 克，切成 2 厘米见方的块\n- 冰糖　15g\n\n小火炖煮 40 分钟，然后大火收汁。\n"


@pytest.mark.parametrize("quote, expected", [
    ("五花肉 500 克", "五花肉 500 克"),                                   # exact
    ("五花肉500克,切成2厘米见方的块", "五花肉 500 克，切成 2 厘米见方的块"),  # spaces and full-width punctuation
    ("冰糖 １５G", "冰糖　15g"),                                            # full-width digits, case, ideographic space
])
def test_quotes_map_back_to_original_offsets(quote, expected):
    (span,) = Locator(TEXT).find(quote)
    assert TEXT[span[0] : span[1]] == expected


def test_a_quote_with_an_ellipsis_becomes_spans_in_order():
    spans = Locator(TEXT).find("小火炖煮……大火收汁")
    assert [TEXT[s:e] for s, e in spans] == ["小火炖煮", "大火收汁"]
    assert Locator(TEXT).find("大火收汁……小火炖煮") is None


def test_an_invented_quote_discredits_the_question():
    locator = Locator(TEXT)
    assert locator.find("五花肉 800 克") is None
    assert locator.find_all(["五花肉 500 克", "加入啤酒"]) is None
    assert locator.find_all(["冰糖", "冰糖　15g"]) == [(TEXT.index("冰糖"), TEXT.index("冰糖") + len("冰糖　15g"))]


def test_questions_that_only_name_their_document():
    doc = Document("meat_dish/红烧肉.md", "红烧肉的做法", TEXT)
    assert names_document_only("红烧肉怎么做？", doc)
    assert names_document_only("如何制作红烧肉的做法", doc)
    assert not names_document_only("红烧肉要炖多久才能收汁？", doc)
    assert not names_document_only("炖肉要多久？", doc)
    english = Document("mains/mapo-tofu.md", "Mapo Tofu", "...")
    assert names_document_only("How do I make Mapo Tofu?", english)
    assert not names_document_only("How long does Mapo Tofu simmer?", english)


def test_the_journal_drops_a_torn_last_line_and_refuses_corruption(tmp_path):
    journal = Journal(tmp_path / "j.jsonl", DocumentResult)
    journal.append(DocumentResult(plan="p", doc_id="a.md", doc_sha256="x"))
    with journal.path.open("a", encoding="utf-8") as f:
        f.write('{"plan": "p", "doc_id": "b.m')  # killed mid-write
    assert [r.doc_id for r in journal.load()] == ["a.md"]
    journal.append(DocumentResult(plan="p", doc_id="c.md", doc_sha256="x"))
    assert [r.doc_id for r in journal.load()] == ["a.md", "c.md"]
    journal.path.write_text("garbage\n" + journal.path.read_text(), encoding="utf-8")
    with pytest.raises(JournalError, match=r"j.jsonl:1: not a journal entry"):
        journal.load()


def test_prompts_default_per_language_and_user_files_are_checked(tmp_path):
    assert "$document" in load_prompt("questions", "zh").text and load_prompt("judge", "en").hash.startswith("sha256:")
    assert guess_language(["红烧肉的做法很简单"]) == "zh" and guess_language(["Braise the pork"]) == "en"
    mine = tmp_path / "prompt.md"
    mine.write_text("Ask $n about $doc", encoding="utf-8")
    with pytest.raises(PromptError, match=r"prompt.md: unknown placeholder \$doc; known: \$n, \$types"):
        load_prompt("questions", "en", mine)
    mine.write_text("Ask $n questions", encoding="utf-8")
    with pytest.raises(PromptError, match=r"must contain \$document"):
        load_prompt("questions", "en", mine)


def test_the_client_needs_a_key(monkeypatch, tmp_path):
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(LLMError, match="set the environment variable MY_KEY"):
        ChatClient(LLMSettings(api_key_env="MY_KEY"))


def test_client_errors_are_bounded_clear_and_without_the_key(llm_env):
    replies = iter([Reply(status=401), Reply(status=503), Reply(status=503), Reply(status=503)])
    with ChatServer(lambda request: next(replies)) as server:
        settings = LLMSettings(model="m", base_url=server.url.replace("//", f"//user:{API_KEY}@"),
                               max_retries=2, backoff=0.01)
        client = ChatClient(settings)
        with pytest.raises(LLMError, match="HTTP 401.*not retried") as unauthorized:
            client.complete([{"role": "user", "content": "hi"}])
        with pytest.raises(LLMError, match="gave up after 3 attempts; last error: HTTP 503") as down:
            client.complete([{"role": "user", "content": "hi"}])
    assert len(server.requests) == 4
    assert API_KEY not in str(unauthorized.value) + str(down.value)
    assert API_KEY not in json.dumps(settings.public()) and settings.public()["base_url"] == server.url


def test_the_same_question_twice_is_kept_once_in_corpus_order():
    from ragretrieval.llm.prompts import load_prompt
    from ragretrieval.llm.questions.generate import SAME_TEXT, GenerationPlan, KeptQuestion, exact_key, to_records

    plan = GenerationPlan(load_prompt("questions", "zh"), "zh", "m", per_doc=2)
    docs = [Document(f"{name}.md", name, "盐 5 克，糖 10 克") for name in ("a", "b")]
    asked = KeptQuestion(question_type="FACTUAL", question_text="盐放多少？", ground_truth="5 克", evidence=["盐 5 克"],
                         spans=[(0, 5)])
    other = asked.model_copy(update={"question_text": "如何做a？"})
    results = {d.id: DocumentResult(plan=plan.key, doc_id=d.id, doc_sha256="x", questions=[asked, other], generated=2)
               for d in docs}
    output = to_records(docs, results, plan, taken={exact_key("如何做 a?")})
    # b's copy of a's question, and both copies of the file-name question already taken, are dropped
    assert [(q.text, q.relevant[0].doc_id) for q in output.questions] == [("盐放多少？", "a.md")]
    assert output.counts[SAME_TEXT] == 3 and output.counts["kept"] == 1
    assert output.questions[0].provenance.prompt_hash == plan.prompt.hash


@pytest.mark.parametrize("texts, languages, expected", [
    (["红烧肉的做法很简单"], ("zh", "pl", "en"), "zh"),
    (["Zażółć gęślą jaźń, proszę"], ("zh", "pl", "en"), "pl"),
    (["Zażółć gęślą jaźń, proszę"], ("zh", "en"), "en"),  # no Polish prompts: English
    (["Braise the pork"], ("zh", "pl", "en"), "en"),
    (["", "1234 !!"], ("zh", "pl", "en"), "en"),  # no letters at all
    ([], ("zh", "en"), "en"),
    (["红烧肉 braise the pork slowly over a low fire for an hour or more"], ("zh", "en"), "en"),  # under a fifth
])
def test_one_language_detector_for_answer_prompts_and_llm_prompts(texts, languages, expected):
    from ragretrieval.answers.prompt import pick_language
    from ragretrieval.text import detect_language

    assert detect_language(texts, languages) == expected
    if languages == ("zh", "pl", "en"):
        assert pick_language(texts) == expected
    if languages == ("zh", "en"):
        assert guess_language(texts) == expected
