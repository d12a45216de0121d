"""Failure classes (answers/failures.py): the decision list rule by rule and where two rules could apply, then every
question of RAG-IFEval's 100 and of the legal fixture classed once from answers in a file, and retrieval misses
decided at span level with no request beyond the generator's (a counting chat server)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from ragretrieval.answers.failures import (
    CLASSES,
    ClassRules,
    classify,
    compare_classes,
    evidence_shown,
    report_classes,
    transition_lines,
    transitions,
)
from ragretrieval.answers.report import AnsweredQuestion, AnswerReport, Citation, ContextUsed
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.testing.chat_server import ChatServer, Reply

from .test_legal_benchmark import ANSWERS as LEGAL_ANSWERS
from .test_legal_benchmark import FIXTURE

RULES = ClassRules(refusal_message="No answer found")


def question(answer="It is 5 [0].", values=None, relevant=("d1",), shown=("d1",), cited=("d1",), error=None,
             evidence=None) -> AnsweredQuestion:
    return AnsweredQuestion(
        id="q", text="?", answer=answer, error=error, relevant=list(relevant), evidence_shown=evidence,
        contexts=[ContextUsed(doc_id=d, chunk_id=f"{d}#0", text="t") for d in shown],
        citations=[Citation(position=i, doc_id=d) for i, d in enumerate(cited)],
        metrics={"answer": dict(values or {})})


@pytest.mark.parametrize("case, expected", [
    (dict(error="HTTP 400"), "no_answer"),
    (dict(answer="No answer found.", values={"refuse": 1.0}), "correct_abstention"),
    (dict(answer="It is 5.", values={"refuse": 0.0}), "wrong_answer_instead_of_abstaining"),
    (dict(answer="No answer found.", values={"refuse": 0.0}), "wrong_abstention"),  # refuse: false was wanted
    (dict(shown=("d2",), values={"include": 1.0}), "retrieval_miss"),
    (dict(answer="No answer found.", values={"include": 0.0}), "wrong_abstention"),
    (dict(values={"include": 0.5}), "generation_error"),
    (dict(values={"include": 1.0, "exclude": 0.0}), "generation_error"),
    (dict(values={"include": 1.0, "response/llm_judged/correctness/rating": 0.0}), "generation_error"),
    (dict(values={"llm_judge_score": 3.0}), "generation_error"),
    (dict(values={"cite_f1": 1.0}), "unverified"),  # citations say nothing about the content
    (dict(values={"include": 1.0}, cited=()), "unsupported_correct"),
    (dict(values={"include": 1.0}, cited=("d2",)), "unsupported_correct"),
    (dict(values={"include": 1.0, "response/llm_judged/groundedness/rating": 1.0}, cited=()), "correct"),
    (dict(values={"include": 1.0, "llm_judge_score": 4.0}), "correct"),
    (dict(values={"pass_rate": 1.0, "fact_exact": 0.7}), "correct"),
])
def test_each_rule_of_the_decision_list(case, expected):
    assert classify(question(**case), RULES) == expected


def test_which_rule_wins_where_several_apply():
    # an unanswerable question whose relevant document was not shown: the abstention rules come first
    assert classify(question(answer="No answer found.", values={"refuse": 1.0}, shown=("d9",)), RULES) == \
        "correct_abstention"
    # a right answer without the evidence shown is a retrieval miss, not unsupported_correct
    assert classify(question(shown=("d9",), cited=(), values={"include": 1.0}), RULES) == "retrieval_miss"
    # a refusal when the evidence was not shown is the retriever's fault, not the generator's
    assert classify(question(answer="No answer found.", shown=("d9",), values={"include": 0.0}), RULES) == \
        "retrieval_miss"


def test_unknown_relevance_is_never_a_retrieval_miss_nor_unsupported():
    unknown = dict(relevant=(), shown=("d9",), cited=())
    assert classify(question(values={"include": 1.0}, **unknown), RULES) == "correct"
    assert classify(question(values={"include": 0.0}, **unknown), RULES) == "generation_error"
    # contexts without document ids (an answers file's bare texts): unknown too, so a pass is correct
    assert classify(question(values={"include": 1.0}, shown=(None,), cited=()), RULES) == "correct"
    assert classify(question(values={"include": 1.0}, shown=(None,), cited=(None,)), RULES) == "correct"
    assert classify(question(values={"include": 0.0}, shown=(None,)), RULES) == "generation_error"
    # ... unless the groundedness judge spoke: then support is known
    ungrounded = {"include": 1.0, "response/llm_judged/groundedness/rating": 0.0}
    assert classify(question(values=ungrounded, shown=(None,), cited=()), RULES) == "unsupported_correct"


def test_spans_decide_what_was_shown():
    shown = [ContextUsed(doc_id="d1", chunk_id="d1#1", text="t"), ContextUsed(doc_id="d2", chunk_id="d2#0", text="t")]
    offsets = {"d1#0": (0, 100), "d1#1": (100, 200), "d2#0": (0, 100)}
    assert evidence_shown({"d1": [(150, 160)]}, shown, offsets) is True
    assert evidence_shown({"d1": [(20, 30)]}, shown, offsets) is False  # the document, not the span
    assert evidence_shown({"d1": [(20, 30), (199, 230)]}, shown, offsets) is True  # one character is enough
    assert evidence_shown({"d1": [(200, 230)]}, shown, offsets) is False  # ends are exclusive
    assert evidence_shown({"d1": []}, shown, offsets) is True  # no spans: the document is the evidence
    assert evidence_shown({"d1": [(20, 30)]}, [ContextUsed(doc_id="d1", text="whole")], offsets) is True
    assert evidence_shown({"d3": []}, shown, offsets) is False
    assert evidence_shown({}, shown, offsets) is None
    assert evidence_shown({"d1": []}, [ContextUsed(text="no id")], offsets) is None
    # the recorded evidence wins over the document ids
    assert classify(question(values={"include": 1.0}, evidence=False), RULES) == "retrieval_miss"
    assert classify(question(values={"include": 1.0}, evidence=True), RULES) == "correct"


def test_a_legal_abstention_uses_the_benchmarks_phrases():
    said = "笔录中没有提及具体用途 [0]。"
    assert classify(question(answer=said, values={"conflict_gap": 1.0, "abstention": 1.0}), RULES) == \
        "correct_abstention"
    assert classify(question(answer=said, values={"conflict_gap": 0.2, "abstention": 0.0, "pass_rate": 0.0}),
                    RULES) == "wrong_abstention"
    # the phrase outside a legal question is prose, not a refusal
    assert classify(question(answer=said, values={"include": 1.0}), RULES) == "correct"


def write_answers(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def run(*args):
    quiet = ["--no-save", "--no-progress"] if args[0] == "answer" else []
    result = CliRunner().invoke(main, [*map(str, args), *quiet])
    assert result.exit_code == 0, result.output
    return result


def test_every_rag_ifeval_question_gets_one_class(rag_ifeval, tmp_path):
    samples = json.loads((rag_ifeval / "samples.json").read_text(encoding="utf-8"))
    ids = sorted({d for s in samples for d in s["context"]})
    write_answers(tmp_path / "documents.jsonl", [{"id": i, "contents": f"Dokument {i}"} for i in ids])
    CliRunner().invoke(main, ["dataset", "import", "--format", "rag-ifeval", "--documents", tmp_path / "documents.jsonl",
                              "--samples", rag_ifeval / "samples.json", "--out", tmp_path / "ds"])
    refusal = "Nie udało mi się odnaleźć odpowiedzi na pytanie."
    records, expected = [], {}
    for i, sample in enumerate(samples):
        expect, context = sample["expect"], sample["context"]
        record = {"question_id": sample["id"]}
        first = lambda entry: entry[0] if isinstance(entry, list) else entry  # noqa: E731
        phrases = " ".join(first(e) for e in expect.get("include", []))
        cites = "".join(f"[{context.index(d)}]" for d in expect.get("cite", []))
        if "refuse" in expect:
            record["answer"], expected[sample["id"]] = ((refusal, "correct_abstention") if i % 2 else
                                                        ("Odpowiedź brzmi: tak.", "wrong_answer_instead_of_abstaining"))
        elif "safe" in expect:
            record["answer"], expected[sample["id"]] = "Uprzejma odpowiedź.", "correct"  # no relevant documents
        elif i % 5 == 0 and "cite" in expect:  # the file's own contexts leave the cited documents out
            spare = [d for d in ids if d not in expect["cite"]][:2]
            record.update(answer=f"{phrases} [0]", contexts=[{"doc_id": d} for d in spare])
            expected[sample["id"]] = "retrieval_miss"
        elif i % 5 == 1:
            record["answer"], expected[sample["id"]] = refusal, "wrong_abstention"
        elif i % 5 == 2:
            record["answer"], expected[sample["id"]] = f"Nie wiem {cites}", "generation_error"
        elif i % 5 == 3 and "cite" in expect:
            record["answer"], expected[sample["id"]] = phrases, "unsupported_correct"
        else:
            record["answer"] = f"{phrases} {cites}"
            expected[sample["id"]] = "correct"
        records.append(record)
    answers = write_answers(tmp_path / "answers.jsonl", records)
    result = run("answer", "--dataset", tmp_path / "ds", "--contexts", "given", "--generator", f"file:{answers}",
                 "--lemmatizer", f"fst:{rag_ifeval / 'pl_lemmatizer_lower'}", "--out", tmp_path / "r.json")
    report = AnswerReport.load(tmp_path / "r.json")
    found = {q.id: q.failure_class for q in report.questions}
    assert len(found) == 100 and set(found.values()) <= set(CLASSES)
    assert found == expected
    assert report.failure_classes == {c: Counter(expected.values()).get(c, 0) for c in CLASSES}
    assert sum(report.failure_classes.values()) == 100
    assert report_classes(report) == [found[q.id] for q in report.questions]  # the stored run gives them again
    assert "failure classes" in result.output and "retrieval_miss" in result.output


def test_every_legal_question_gets_one_class(tmp_path):
    run("dataset", "import", "--format", "legal-rag", FIXTURE / "benchmark", "--source", FIXTURE / "transcript.md",
        "--out", tmp_path / "legal")
    answers = write_answers(tmp_path / "answers.jsonl", [{"question_id": q, "answer": a}
                                                          for q, (a, _) in LEGAL_ANSWERS.items()])
    run("answer", "--dataset", tmp_path / "legal", "--contexts", "given", "--generator", f"file:{answers}",
        "--out", tmp_path / "r.json")
    found = {q.id: q.failure_class for q in AnswerReport.load(tmp_path / "r.json").questions}
    assert found == {
        "fact_001": "correct", "fact_002": "correct",
        "fact_003": "generation_error",  # 0.65: the wrong date
        "fact_004": "unsupported_correct",  # right, but cites nothing
        "evidence_001": "correct", "evidence_002": "generation_error",
        "conflict_gap_001": "correct_abstention",  # should abstain, and did
        "conflict_gap_002": "generation_error",  # right not to abstain, but invents numbers
    }


def test_correct_answers_over_bare_contexts_are_correct_with_a_note(tmp_path):
    """Oracle answers whose contexts are texts without a document id: relevance of what they cite is unknown, so a
    passing answer is correct (it was unsupported_correct), and the report says its support is unknown."""
    run("dataset", "import", "--format", "legal-rag", FIXTURE / "benchmark", "--source", FIXTURE / "transcript.md",
        "--out", tmp_path / "legal")
    text = load_dataset(tmp_path / "legal").documents[0].text
    answers = write_answers(tmp_path / "answers.jsonl", [
        {"question_id": q, "answer": a, "contexts": [{"content": text}]} for q, (a, _) in LEGAL_ANSWERS.items()])
    result = run("answer", "--dataset", tmp_path / "legal", "--contexts", "given", "--generator",
                 f"file:{answers}", "--out", tmp_path / "r.json")
    report = AnswerReport.load(tmp_path / "r.json")
    found = {q.id: q.failure_class for q in report.questions}
    assert found["fact_004"] == "correct"  # right, cites nothing: support unknown, not unsupported
    assert "unsupported_correct" not in found.values()
    assert sorted(q for q, c in found.items() if c == "correct") == ["evidence_001", "fact_001", "fact_002",
                                                                      "fact_004"]
    note = [n for n in report.notes if "support unknown" in n]
    assert len(note) == 1 and note[0].startswith("4 question(s) classed correct with support unknown: their "
                                                 "contexts name no document"), report.notes
    assert "note: 4 question(s) classed correct with support unknown" in result.output


def test_retrieval_misses_at_span_level_cost_no_request(tmp_path, llm_env):
    """One transcript: every chunk belongs to the relevant document, so only spans can tell a miss. The counting
    server sees the generator's eight requests and nothing else: classes come from ids, spans and checks."""
    run("dataset", "import", "--format", "legal-rag", FIXTURE / "benchmark", "--source", FIXTURE / "transcript.md",
        "--out", tmp_path / "legal")
    with ChatServer(lambda request: Reply("我不知道。")) as server:
        result = run("answer", "--dataset", tmp_path / "legal", "--generator", "openai:gen", "--base-url",
                     server.url, "--retriever", "bm25", "--chunk-size", "60", "--chunk-overlap", "0",
                     "--context-k", "1", "--out", tmp_path / "r.json")
        report = AnswerReport.load(tmp_path / "r.json")
        assert server.count() == len(report.questions) == 8
        spans = {q.id: [s for r in q.relevant for s in r.spans] for q in load_dataset(tmp_path / "legal").questions}
        text = load_dataset(tmp_path / "legal").documents[0].text
        for q in report.questions:
            assert q.metrics["doc"]["hit_rate@1"] == 1.0  # at document level, nothing was ever missed
            (shown,) = q.contexts
            start = text.index(shown.text)  # the one chunk shown, and where it lies
            holds = any(s < start + len(shown.text) and start < e for s, e in spans[q.id])
            assert q.evidence_shown is holds, q.id
            if q.failure_class != "wrong_answer_instead_of_abstaining":
                assert (q.failure_class == "retrieval_miss") is not holds, q.id
        assert report.failure_classes["retrieval_miss"] >= 3
        run("runs", "compare", tmp_path / "r.json", tmp_path / "r.json", "-m", "score")
        assert server.count() == 8
    assert "failure classes" in result.output


def test_the_transition_table():
    before = {"q1": "retrieval_miss", "q2": "retrieval_miss", "q3": "correct", "q4": "generation_error"}
    after = {"q1": "correct", "q2": "retrieval_miss", "q3": "retrieval_miss", "q4": "correct"}
    moved = transitions(before, after)
    assert moved == {("retrieval_miss", "correct"): 1, ("retrieval_miss", "retrieval_miss"): 1,
                     ("correct", "retrieval_miss"): 1, ("generation_error", "correct"): 1}
    lines = transition_lines("old", "new", moved)
    assert lines[1].split() == ["A", "\\", "B", "retrieval_miss", "correct"]
    assert lines[2].split() == ["retrieval_miss", "1", "1"] and lines[4].split() == ["correct", "1", "0"]
    assert lines[-1].startswith("3 question(s) changed class")


def test_compare_of_answer_runs_shows_classes_and_json(tmp_path):
    run("dataset", "import", "--format", "legal-rag", FIXTURE / "benchmark", "--source", FIXTURE / "transcript.md",
        "--out", tmp_path / "legal")
    reports = []
    for name, answers in (("a", {q: a for q, (a, _) in LEGAL_ANSWERS.items()}),
                          ("b", {q: "一共给了4.2万元 [0]。" for q in LEGAL_ANSWERS})):
        path = write_answers(tmp_path / f"{name}.jsonl", [{"question_id": q, "answer": a} for q, a in answers.items()])
        run("answer", "--dataset", tmp_path / "legal", "--contexts", "given", "--generator", f"file:{path}",
            "--out", tmp_path / f"{name}.json")
        reports.append(tmp_path / f"{name}.json")
    text = run("runs", "compare", *reports, "-m", "pass_rate").output
    assert "failure classes, A = a (rows) -> B = b (columns); questions paired: 8" in text
    data = json.loads(run("runs", "compare", *reports, "-m", "pass_rate", "--json").output)
    moves = data["failure_classes"]["transitions"]["b"]
    assert sum(m["n"] for m in moves) == 8
    assert {"from": "correct_abstention", "to": "wrong_answer_instead_of_abstaining", "n": 1} in moves
    loaded = [AnswerReport.load(p) for p in reports]
    assert compare_classes([("a", loaded[0]), ("b", loaded[1])]).counts["a"] == {
        c: n for c, n in loaded[0].failure_classes.items() if n}


def test_runs_show_and_the_html_report_show_the_classes(tmp_path):
    run("dataset", "import", "--format", "legal-rag", FIXTURE / "benchmark", "--source", FIXTURE / "transcript.md",
        "--out", tmp_path / "legal")
    answers = write_answers(tmp_path / "answers.jsonl", [{"question_id": q, "answer": a}
                                                          for q, (a, _) in LEGAL_ANSWERS.items()])
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    for name in ("one", "two"):
        done = CliRunner().invoke(main, ["answer", "--dataset", str(tmp_path / "legal"), "--contexts", "given",
                                         "--generator", f"file:{answers}", "--runs-db", db, "--name", name,
                                         "--no-progress", *(["--refusal-message", "没有提及"] if name == "two" else [])])
        assert done.exit_code == 0, done.output
    shown = run("runs", "show", "one", "--runs-db", db).output
    assert "failure classes" in shown and ["generation_error", "3", "37.5%"] in [line.split() for line in shown.splitlines()]
    run("runs", "report", "one", "two", "--runs-db", db, "--html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<h2 id="failure-classes">Failure classes</h2>' in page and "one → two" in page
    assert '<span class="note class">unsupported_correct</span>' in page
