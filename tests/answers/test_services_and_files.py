"""``http:`` (a real RAG service on 127.0.0.1) and ``file:`` (agent-evaluation JSONL and ours) generators: request
shapes, field mappings, secrets in headers, document recall, and bad files named by line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.testing.generator_conformance import conformance_dataset


@pytest.fixture
def small_dataset(tmp_path):
    return conformance_dataset(tmp_path / "ds").path


def answer(dataset, generator, tmp_path, *extra, code=0):
    result = CliRunner().invoke(main, ["answer", "--dataset", str(dataset), "--generator", generator, "--no-save",
                                       "--no-progress", "--out", str(tmp_path / "r.json"), *map(str, extra)])
    assert result.exit_code == code, result.output
    return (AnswerReport.load(tmp_path / "r.json") if code == 0 else None), result


@pytest.mark.parametrize("path, options, sent", [
    ("/answer", [], {"query": "How long do the tomatoes boil for the egg soup?", "history": []}),
    ("/messages", ["request=messages"],
     {"messages": [{"role": "user", "content": "How long do the tomatoes boil for the egg soup?"}]}),
    ("/text", ["request=text"], "How long do the tomatoes boil for the egg soup?"),
    ("/wrapped", ["wrap=request"], {"request": {"query": "How long do the tomatoes boil for the egg soup?",
                                                "history": []}}),
])
def test_http_request_shapes(small_dataset, rag_service, tmp_path, path, options, sent):
    extra = [x for option in options for x in ("--generator-option", option)]
    before = len(rag_service.seen)
    report, _ = answer(small_dataset, f"http:{rag_service.url}{path}", tmp_path, *extra)
    assert sent in [body for where, body, _ in rag_service.seen[before:] if where == path]
    soup = report.questions[0]
    assert soup.answer == "Tomato egg soup [0]" and soup.metrics["answer"]["cite_f1"] == 1
    assert soup.contexts and soup.contexts[0].doc_id == "soup/tomato.md"  # the service's sources, resolved
    assert report.config.contexts == "generator" and report.config.retrieval is None


def test_http_mapping_headers_and_failures(small_dataset, rag_service, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "tok-SECRET-42")
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("answer: data.text\nsource_id: data.sources[].id\nsource_text: data.sources[].body\n"
                       "header.Authorization: Bearer ${RAG_TOKEN}\n", encoding="utf-8")
    report, _ = answer(small_dataset, f"http:{rag_service.url}/nested", tmp_path, "--generator-option",
                       f"mapping={mapping}")
    assert [c.doc_id for c in report.questions[0].contexts][0] == "soup/tomato.md"
    assert rag_service.seen[-1][2] == "Bearer tok-SECRET-42"  # expanded into the request only
    assert "tok-SECRET-42" not in (tmp_path / "r.json").read_text(encoding="utf-8")
    assert report.config.generator_settings["url"].endswith("/nested")
    _, broken = answer(small_dataset, f"http:{rag_service.url}/broken", tmp_path, code=1)
    assert "3 of 3 questions got no usable answer" in broken.output and "no answer in the reply" in broken.output
    _, down = answer(small_dataset, f"http:{rag_service.url}/down", tmp_path, "--generator-option", "retries=0", code=1)
    assert "HTTP 500" in down.output
    _, bad = answer(small_dataset, f"http:{rag_service.url}/answer", tmp_path, "--generator-option", "request=xml",
                    code=2)
    assert "--generator-option request: Input should be 'query', 'messages' or 'text'" in bad.output


def test_agent_evaluation_answers_with_document_recall(demo_dataset, tmp_path):
    from ragretrieval.data.dataset import load_dataset

    demo = load_dataset(demo_dataset)
    first, second = demo.questions[0], demo.questions[1]
    records = [
        {"request_id": "a1", "request": {"query": first.text, "history": []},
         "expected_retrieved_context": [{"doc_uri": f"https://example.org/dishes/{first.relevant[0].doc_id}"}],
         "expected_response": "先熬虾油再焖",
         "response": "先用虾头熬油 [0]，再加番茄酱焖 [1]。",
         "retrieved_context": [{"doc_uri": first.relevant[0].doc_id, "content": "虾头熬出红色的虾油"},
                               {"doc_uri": "some/other.md", "content": "番茄酱"}]},
        {"request": second.text, "expected_retrieved_context": [{"doc_uri": second.relevant[0].doc_id}],
         "response": "不知道", "retrieved_context": [{"doc_uri": demo.documents[-1].id}]},
    ]
    agent = tmp_path / "agent.jsonl"
    agent.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    imported = CliRunner().invoke(main, ["questions", "import", str(agent), "--dataset", str(demo_dataset), "--out",
                                         str(tmp_path / "q.jsonl")])
    assert imported.exit_code == 0, imported.output
    result = CliRunner().invoke(main, ["answer", "--dataset", str(demo_dataset), "--questions",
                                       str(tmp_path / "q.jsonl"), "--generator", f"file:{agent}", "--no-save",
                                       "--no-progress", "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = AnswerReport.load(tmp_path / "r.json")
    one, two = report.questions
    assert one.ground_truth == "先熬虾油再焖" and two.ground_truth is None
    assert one.metrics["doc"] == {"document_recall": 1.0} and two.metrics["doc"] == {"document_recall": 0.0}
    assert [c.doc_id for c in one.contexts] == [first.relevant[0].doc_id, "some/other.md"]
    assert one.metrics["answer"]["cite_precision"] == 0.5 and one.metrics["answer"]["cite_recall"] == 1.0
    assert report.means["doc"]["document_recall"] == 0.5 and "document_recall" in result.output


def test_bad_answer_files_are_named_by_line(small_dataset, tmp_path):
    path = tmp_path / "answers.jsonl"
    cases = {
        '{"question_id": "q-soup", "answer": "x"}\n{"question_id": "q-soup", "answer": "y"}\n':
            "answers.jsonl:2: a second answer for question 'q-soup' (the first is on line 1)",
        '{"question_id": "q-soup", "answer": 3}\n': "answers.jsonl:1: field 'answer': Input should be a valid string",
        '{"question_id": "q-soup", "answer": "x"}\n{"answer": "x"}\n':
            "answers.jsonl:2: expected an object with question_id and answer",
        '{"question_id": "q-soup", \n': "answers.jsonl:1: invalid JSON",
    }
    for text, message in cases.items():
        path.write_text(text, encoding="utf-8")
        _, result = answer(small_dataset, f"file:{path}", tmp_path, code=1)
        assert message in result.output, result.output
    path.write_text('{"question_id": "q-soup", "answer": "five minutes [0]"}\n'
                    '{"question_id": "q-rice", "answer": "cold rice [1]"}\n'
                    '{"question_id": "q-none", "answer": "No answer found"}\n'
                    '{"question_id": "q-elsewhere", "answer": "?"}\n', encoding="utf-8")
    report, _ = answer(small_dataset, f"file:{path}", tmp_path, "--contexts", "given", "--refusal-message",
                       "no answer found")
    assert report.means["answer"]["total"] == 1.0
    assert "1 record(s) of " in " ".join(report.notes)
