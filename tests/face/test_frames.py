"""Evaluation sets as pandas DataFrames in seed 004's shape: the three request shapes, labels from
``expected_retrieved_context``, answers and contexts given in ``response`` / ``retrieved_context`` scored as they are
with no request sent, and bad frames refused naming the row and the field."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import ragretrieval as rr
from ragretrieval.testing.chat_server import ChatServer, Reply


def frame(dataset, **columns) -> pd.DataFrame:
    """Three questions of the dataset, one per request shape of the agent-evaluation schema."""
    a, b, c = dataset.questions[:3]
    return pd.DataFrame({
        "request_id": [None, "second", None],
        "request": [a.text, {"messages": [{"role": "user", "content": b.text}]},
                    {"query": c.text, "history": [{"role": "user", "content": "before"},
                                                  {"role": "assistant", "content": "yes"}]}],
        "expected_retrieved_context": [[{"doc_uri": q.relevant[0].doc_id, "content": "x"}] for q in (a, b, c)],
        "expected_response": [f"reference {i}" for i in range(3)],
        **columns,
    })


def test_given_responses_are_scored_with_no_request_sent(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-used")
    dataset = rr.load_dataset(demo_dataset)
    a, b, _ = dataset.questions[:3]
    given = frame(dataset, response=["first [0]", "second", "third"],
                  retrieved_context=[[{"doc_uri": a.relevant[0].doc_id, "content": "found"}],
                                     [{"doc_uri": a.relevant[0].doc_id, "content": "wrong"}],
                                     [{"doc_uri": "https://example.org/not/in/the/corpus.md"}]])
    with ChatServer(lambda request: Reply("never asked")) as server:
        report = rr.answer(dataset, questions=given, base_url=server.url, threads=2)
        assert server.count() == 0
    assert [q.answer for q in report.questions] == ["first [0]", "second", "third"]
    assert [q.id for q in report.questions][1] == "second"  # request_id names the question
    assert report.means["doc"]["document_recall"] == pytest.approx(1 / 3)
    assert report.config.generator.startswith("file:questions@sha256:") and report.failed == 0
    assert report.questions[0].citations[0].doc_id == a.relevant[0].doc_id
    assert report.questions[2].text == dataset.questions[2].text  # the query of a query + history request
    again = rr.answer(dataset, questions=given.assign(response=["first [0]", "second", "changed"]))
    assert again.config.generator != report.config.generator  # other answers, another configuration


def test_given_retrieved_context_is_the_ranking_scored(demo_dataset, tmp_path):
    dataset = rr.load_dataset(demo_dataset)
    a, b, c = dataset.questions[:3]
    given = frame(dataset, retrieved_context=[[{"doc_uri": a.relevant[0].doc_id}],
                                              [{"doc_uri": a.relevant[0].doc_id}, {"doc_uri": b.relevant[0].doc_id}],
                                              [{"doc_uri": "elsewhere.md"}]])
    report = rr.evaluate(dataset, questions=given, ks=[1, 2])
    per_question = {q.id: q.metrics["doc"]["recall@2"] for q in report.questions}
    assert list(per_question.values()) == [1.0, 1.0, 0.0]
    assert report.means["doc"]["recall@1"] == pytest.approx(1 / 3)
    lines = tmp_path / "results.jsonl"  # the same records as a file: `eval --retriever run-file` scores them alike
    lines.write_text("\n".join(json.dumps({k: v for k, v in row.items() if isinstance(v, (str, list, dict))},
                                          ensure_ascii=False) for row in given.to_dict("records")), encoding="utf-8")
    from_file = rr.evaluate(dataset, questions=given.drop(columns="retrieved_context"), ks=[1, 2],
                            retriever="run-file", retriever_options={"run": str(lines)})
    assert from_file.means == report.means
    with pytest.raises(rr.SettingsError, match="retriever is given while the questions bring their own"):
        rr.evaluate(dataset, questions=given, retriever="bm25")


def test_a_list_of_dicts_is_a_frame_too(demo_dataset):
    dataset = rr.load_dataset(demo_dataset)
    rows = frame(dataset).to_dict("records")
    report = rr.evaluate(dataset, questions=[{k: v for k, v in r.items() if isinstance(v, (str, list, dict))}
                                             for r in rows],
                         retriever="bm25", ks=[1])
    assert len(report.questions) == 3 and report.dataset.questions is None


@pytest.mark.parametrize("change, message", [
    (lambda df: df.assign(retrieved_context=[[{"doc_uri": "x.md"}], None, []]),
     "retrieved_context is given for 2 of 3 rows"),
    (lambda df: df.assign(request=[None, "b", "c"]), "questions row 0: field 'request': Field required"),
    (lambda df: df.assign(request=[42, "b", "c"]), "questions row 0: field 'request'"),
    (lambda df: df.assign(expected_retrieved_context=[[{"content": "no uri"}], [], []]),
     "questions row 0: field 'expected_retrieved_context.0.doc_uri': Field required"),
    (lambda df: df.assign(expected_retrieved_context=[[{"doc_uri": "/etc/passwd"}], [], []]),
     "questions row 0: field 'expected_retrieved_context.0.doc_uri': '/etc/passwd' is not a document"),
    (lambda df: df.iloc[0:0], "questions: no rows"),
])
def test_bad_frames_name_the_row_and_the_field(demo_dataset, change, message):
    dataset = rr.load_dataset(demo_dataset)
    with pytest.raises(rr.RagretrievalError) as caught:
        rr.evaluate(dataset, questions=change(frame(dataset)), retriever="bm25")
    assert message in str(caught.value), str(caught.value)


def test_questions_that_are_neither_a_frame_nor_rows_are_refused(demo_dataset):
    with pytest.raises(rr.RagretrievalError, match="expected a pandas DataFrame or a list of dicts, got int"):
        rr.load_dataset(demo_dataset, questions=42)
