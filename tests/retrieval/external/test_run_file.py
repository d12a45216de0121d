"""`--retriever run-file` (TREC and agent JSONL) and import/export of question sets in the agent format."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.chunking import ChunkPolicy, chunk_corpus
from ragretrieval.data.dataset import DatasetError, QuestionRecord, read_jsonl
from ragretrieval.data.importers.agent_jsonl import import_questions
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig
from ragretrieval.retrieval.external import ExternalRetrieverError


@pytest.fixture(scope="module")
def bm25_report(demo):
    return evaluate(demo, EvalConfig(retriever="bm25", model=None), progress=False)


def run_config(path, **options):
    return EvalConfig(retriever="run-file", model=None, retriever_options={"run": str(path), **options})


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_trec_run_of_our_chunks_scores_like_the_retriever_that_made_it(demo, bm25_report, tmp_path):
    lines = [f"{q.id} Q0 {c.chunk_id} {rank} {c.score} bm25"
             for q in bm25_report.questions for rank, c in enumerate(q.retrieved_chunks, 1)]
    report = evaluate(demo, run_config(write_lines(tmp_path / "bm25.run", reversed(lines))), progress=False)
    assert report.means["chunk"] == pytest.approx(bm25_report.means["chunk"], abs=1e-12)
    # only the top 10 chunks are in the file, so documents beyond them are missing: recall@10 can only drop
    assert report.means["doc"]["mrr@1"] == pytest.approx(bm25_report.means["doc"]["mrr@1"], abs=1e-12)
    assert f"run file bm25.run (TREC): {len(demo.questions)} questions matched by id" in report.notes


def test_trec_run_of_documents_and_of_other_chunkings(demo, tmp_path):
    first, second = demo.questions[0], demo.questions[1]
    relevant = first.relevant[0].doc_id
    path = write_lines(tmp_path / "docs.run", [
        f"{first.id} Q0 elsewhere/unknown.md 1 9.0 mine",
        f"{first.id} Q0 {relevant} 2 8.0 mine",
        f"{second.id} Q0 {second.relevant[0].doc_id}#17 1 1.0 mine",
    ])
    report = evaluate(demo, run_config(path, format="trec"), progress=False)
    assert set(report.means) == {"doc"}
    rows = {q.id: q for q in report.questions}
    assert rows[first.id].retrieved_documents == ["elsewhere/unknown.md", relevant]
    assert rows[first.id].metrics["doc"]["mrr@10"] == 0.5
    assert rows[second.id].metrics["doc"]["mrr@1"] == 1.0
    assert "1 of 3 retrieved documents are not in the corpus; scored as non-relevant" in report.notes
    assert f"run file docs.run: {len(demo.questions) - 2} of {len(demo.questions)} questions have no results in it; " \
           "scored as retrieving nothing" in report.notes


def test_trec_line_for_an_unknown_question_is_named(demo, tmp_path):
    path = write_lines(tmp_path / "bad.run", [f"{demo.questions[0].id} Q0 a.md 1 1 x", "q-nope Q0 a.md 1 1 x"])
    with pytest.raises(ExternalRetrieverError, match=r"bad.run:2: query 'q-nope' is not a question id"):
        evaluate(demo, run_config(path), progress=False)


def agent_results(report, chunks, by):
    """The report's rankings as agent JSONL: document URLs ending in the doc id, chunk texts as content."""
    text_of = {c.chunk_id: c.text for c in chunks}
    for q in report.questions:
        key = {"request_id": q.id} if by == "id" else {}
        context = [{"doc_uri": f"https://git.example.org/cookbook/blob/main/dishes/{c.parent_id}",
                    "content": text_of[c.chunk_id]} for c in q.retrieved_chunks]
        yield json.dumps({**key, "request": {"messages": [{"role": "user", "content": q.text}]},
                          "retrieved_context": context}, ensure_ascii=False)


def test_agent_jsonl_results_match_by_text_or_id_and_name_chunks_by_content(demo, bm25_report, tmp_path):
    chunks = chunk_corpus(demo.documents, ChunkPolicy())
    n = len(demo.questions)
    for by, matched in (("text", f"0 questions matched by request_id, {n} by text"),
                        ("id", f"{n} questions matched by request_id, 0 by text")):
        path = write_lines(tmp_path / f"results-{by}.jsonl", agent_results(bm25_report, chunks, by))
        report = evaluate(demo, run_config(path), progress=False)
        assert report.means["chunk"] == pytest.approx(bm25_report.means["chunk"], abs=1e-12)
        assert f"run file results-{by}.jsonl (agent JSONL): {matched}" in report.notes


def test_agent_jsonl_errors_name_file_line_and_field(demo, tmp_path):
    q = demo.questions[0]
    path = write_lines(tmp_path / "r.jsonl", [json.dumps({"request": q.text, "retrieved_context": []}),
                                               json.dumps({"request": "nobody asked this"})])
    with pytest.raises(ExternalRetrieverError, match=r"r.jsonl:2: field 'retrieved_context': missing"):
        evaluate(demo, run_config(path), progress=False)
    write_lines(path, [json.dumps({"request": "nobody asked this", "retrieved_context": []})])
    with pytest.raises(ExternalRetrieverError, match=r"r.jsonl:1: request 'nobody asked this' \(request_id None\) "
                                                     r"matches no question of the dataset by request_id or text"):
        evaluate(demo, run_config(path), progress=False)
    write_lines(path, ["", json.dumps({"request": {"messages": [{"role": "user"}]}, "retrieved_context": []})])
    with pytest.raises(ExternalRetrieverError, match=r"r.jsonl:2: field 'request.messages.messages.0.content'"):
        evaluate(demo, run_config(path), progress=False)
    write_lines(path, [json.dumps({"request": 42})])
    with pytest.raises(ExternalRetrieverError, match=r"r.jsonl:1: field 'request': expected a string, "):
        evaluate(demo, run_config(path), progress=False)


def test_export_then_import_gives_identical_questions(demo, demo_dataset, tmp_path):
    runner = CliRunner()
    exported = tmp_path / "agent.jsonl"
    result = runner.invoke(main, ["questions", "export", "--dataset", str(demo_dataset), "--format", "agent-jsonl",
                                  "--out", str(exported)])
    assert result.exit_code == 0, result.output
    first = json.loads(exported.read_text(encoding="utf-8").splitlines()[0])
    assert first["request_id"] == demo.questions[0].id and first["request"] == demo.questions[0].text
    assert first["expected_retrieved_context"] == [{"doc_uri": r.doc_id} for r in demo.questions[0].relevant]
    imported = tmp_path / "questions.jsonl"
    result = runner.invoke(main, ["questions", "import", str(exported), "--dataset", str(demo_dataset),
                                  "--out", str(imported)])
    assert result.exit_code == 0, result.output
    assert read_jsonl(imported, QuestionRecord) == list(demo.questions)
    result = runner.invoke(main, ["questions", "import", str(exported), "--dataset", str(demo_dataset),
                                  "--out", str(imported)])
    assert result.exit_code != 0 and "already exists; pass --force" in result.output


def test_spans_grades_and_history_round_trip(demo, tmp_path):
    from ragretrieval.data.dataset import Provenance, RelevantDocument
    from ragretrieval.data.importers.agent_jsonl import export_record

    doc = demo.documents[3]
    question = QuestionRecord(id="q-span", text="what goes in first?", provenance=Provenance(generator="llm"),
                              relevant=[RelevantDocument(doc_id=doc.id, grade=2, spans=[(5, 40), (60, 90)])],
                              metadata={"history": [{"role": "user", "content": "hi"}], "lang": "en"})
    record = export_record(question, {d.id: d for d in demo.documents})
    assert [c.content for c in record.expected_retrieved_context] == [doc.text[5:40], doc.text[60:90]]
    assert record.request.query == "what goes in first?"
    path = write_lines(tmp_path / "one.jsonl", [record.model_dump_json(exclude_none=True)])
    assert import_questions(path, demo.documents) == [question]


def test_import_of_a_plain_agent_file(demo, tmp_path):
    doc = demo.documents[0]
    path = write_lines(tmp_path / "eval_set.jsonl", [json.dumps({
        "request": {"query": "and the sauce?", "history": [{"role": "user", "content": "first question"}]},
        "expected_retrieved_context": [{"doc_uri": f"file:///data/dishes/{doc.id}"}],
        "expected_response": "soy sauce"}, ensure_ascii=False)])
    [question] = import_questions(path, demo.documents)
    assert question.text == "and the sauce?" and question.relevant[0].doc_id == doc.id
    assert question.provenance.generator == "agent-jsonl" and question.provenance.source == "eval_set.jsonl"
    assert question.metadata == {"history": [{"role": "user", "content": "first question"}]}
    assert question.ground_truth == "soy sauce"  # the reference answer of `ragretrieval answer`


def test_import_names_the_unmatched_doc_uri(demo, tmp_path):
    path = write_lines(tmp_path / "set.jsonl", [
        json.dumps({"request": "a", "expected_retrieved_context": [{"doc_uri": demo.documents[0].id}]}),
        json.dumps({"request": "b", "expected_retrieved_context": [{"doc_uri": demo.documents[0].id},
                                                                   {"doc_uri": "s3://bucket/nowhere.md"}]})])
    with pytest.raises(DatasetError, match=r"set.jsonl:2: field 'expected_retrieved_context.1.doc_uri': "
                                           r"'s3://bucket/nowhere.md' is not a document of the corpus"):
        import_questions(path, demo.documents)


def test_cli_run_file_and_its_errors(demo, demo_dataset, tmp_path):
    q = demo.questions[0]
    run = write_lines(tmp_path / "docs.run", [f"{q.id} Q0 {q.relevant[0].doc_id} 1 1.0 mine"])
    runner = CliRunner()
    result = runner.invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "run-file", "--run", str(run),
                                  "--no-progress", "--no-save"])
    assert result.exit_code == 0, result.output
    assert "note: chunk level not scored: the retriever named documents, not chunks" in result.output
    result = runner.invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "run-file", "--run", str(run),
                                  "--granularity", "chunk", "--no-progress", "--no-save"])
    assert result.exit_code != 0 and "chunk level not scored" in result.output
    result = runner.invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "run-file", "--no-save"])
    assert result.exit_code != 0 and "--run, the results file, is missing: retriever run-file scores it" in result.output
    result = runner.invoke(main, ["eval", "--dataset", str(demo_dataset), "--retriever", "run-file", "--run",
                                  str(run), "--retriever-option", "matching=id", "--no-save"])
    assert result.exit_code == 2 and ("retriever run-file: --retriever-option matching: unknown option (known: run, "
                                      "format, match)") in result.output
