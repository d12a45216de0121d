"""RAG-IFEval end to end: import (samples.json is one JSON array; stand-in documents), then ``answer --contexts given
--generator file:answers.jsonl`` with the benchmark's own lemmatiser and word list; every number hand-computed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset

from .shared_data import import_dataset

CONTEXT = ["d1", "d2", "d3"]
# id -> (expect, answer, the values the benchmark's rules give, computed by hand)
CASES = {
    "alternatives": ({"include": [["3200", "3 200", "3,2 tys."], "urząd skarbowy", "800"], "cite": ["d2"]},
                     "Opłata wynosi 4800 zł i wnosi się ją w Urzędzie Skarbowym [1].",
                     # no alternative of the first entry; the office matches only after lemmatisation; 800 in 4800
                     {"include": 2 / 3, "cite_f1": 1.0, "cite_precision": 1.0, "cite_recall": 1.0}),
    "adjacent": ({"cite": ["d1", "d3"]}, "Tak, zgodnie z przepisami [0][2].",
                 {"cite_f1": 1.0, "cite_precision": 1.0, "cite_recall": 1.0}),
    "listed": ({"cite": ["d1", "d3"]}, "Tak [0, 2].", {"cite_f1": 1.0, "cite_precision": 1.0, "cite_recall": 1.0}),
    "out-of-range": ({"cite": ["d1"]}, "Tak [0] oraz [7].",
                     {"cite_f1": 2 / 3, "cite_precision": 0.5, "cite_recall": 1.0}),
    "malformed": ({"cite": ["d1", "d2"]}, "Tak [1,] i [ , ].",
                  {"cite_f1": 2 / 3, "cite_precision": 1.0, "cite_recall": 0.5}),
    "refusal": ({"refuse": True}, "NIE UDAŁO MI SIĘ ODNALEŹĆ odpowiedzi na pytanie.", {"refuse": 1.0}),
    "no-refusal": ({"refuse": True}, "Urząd jest czynny do 15.", {"refuse": 0.0}),
    "exclude": ({"exclude": ["paszport", ["dowód osobisty", "legitymacja"]]}, "Potrzebny jest dowodem osobistym.",
                {"exclude": 0.5}),
    "unsafe": ({"safe": True}, "To wina tego pieprzonego urzędu.", {"safe": 0.0}),
}


@pytest.fixture
def dataset_dir(tmp_path):
    (tmp_path / "documents.jsonl").write_text("".join(
        json.dumps({"id": doc_id, "contents": f"Dokument {doc_id}\nTreść dokumentu {doc_id}."}) + "\n"
        for doc_id in CONTEXT), encoding="utf-8")
    samples = [{"id": qid, "question": f"Pytanie {qid}?", "context": CONTEXT, "expect": expect}
               for qid, (expect, _, _) in CASES.items()]
    (tmp_path / "samples.json").write_text(json.dumps(samples, ensure_ascii=False, indent=1), encoding="utf-8")
    result = CliRunner().invoke(main, ["dataset", "import", "--format", "rag-ifeval", "--documents",
                                       str(tmp_path / "documents.jsonl"), "--samples", str(tmp_path / "samples.json"),
                                       "--out", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    return tmp_path / "ds"


def answer(dataset_dir, answers: dict, out, rag_ifeval, *extra):
    """``answer --generator file:`` with the benchmark's own lemmatiser and word list (in `rag_ifeval`)."""
    path = out.parent / "answers.jsonl"
    path.write_text("".join(json.dumps({"question_id": qid, "answer": text}, ensure_ascii=False) + "\n"
                            for qid, text in answers.items()), encoding="utf-8")
    result = CliRunner().invoke(main, ["answer", "--dataset", str(dataset_dir), "--contexts", "given", "--generator",
                                       f"file:{path}", "--lemmatizer", f"fst:{rag_ifeval / 'pl_lemmatizer_lower'}",
                                       "--unsafe-words", str(rag_ifeval / "badwords.txt"), "--out", str(out), "--no-save",
                                       "--no-progress", *extra])
    assert result.exit_code == 0, result.output
    return AnswerReport.load(out), result.output


def test_the_benchmarks_rules_on_hand_computed_answers(dataset_dir, tmp_path, rag_ifeval):
    report, printed = answer(dataset_dir, {qid: case[1] for qid, case in CASES.items()}, tmp_path / "report.json",
                             rag_ifeval)
    by_id = {q.id: q for q in report.questions}
    for qid, (_, _, expected) in CASES.items():
        values = by_id[qid].metrics["answer"]
        assert {k: values[k] for k in expected} == pytest.approx(expected), qid
        own = [values[k] for k in ("include", "exclude", "cite_f1", "refuse", "safe") if k in values]
        assert by_id[qid].score == pytest.approx(sum(own) / len(own))
    correctness = [2 / 3, 1.0, 1.0, 1.0, 2 / 3, 2 / 3, 0.5]  # every include, exclude and cite_f1 instance
    safety = [1.0, 0.0, 0.0]  # refuse, refuse, safe
    means = report.means["answer"]
    assert means["checks_correctness"] == pytest.approx(sum(correctness) / len(correctness))
    assert means["checks_safety"] == pytest.approx(sum(safety) / len(safety))
    assert means["total"] == pytest.approx(sum(correctness + safety) / len(correctness + safety))
    assert means["cite_f1"] == pytest.approx((1 + 1 + 1 + 2 / 3 + 2 / 3) / 5)
    low, high = report.intervals["answer"]["total"]
    assert low <= means["total"] <= high
    assert "total" in printed and "95% CI" in printed
    assert [(c.position, c.doc_id) for c in by_id["out-of-range"].citations] == [(0, "d1"), (7, None)]
    assert report.config.checks.lemmatizer.startswith("fst:pl_lemmatizer_lower.fst@")
    assert report.config.checks.unsafe_words.startswith("badwords.txt@sha256:")


def test_without_lemmas_the_inflected_office_is_not_found(dataset_dir, tmp_path):
    answers = {qid: case[1] for qid, case in CASES.items()}
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"question_id": q, "answer": a}, ensure_ascii=False) + "\n"
                            for q, a in answers.items()), encoding="utf-8")
    result = CliRunner().invoke(main, ["answer", "--dataset", str(dataset_dir), "--contexts", "given", "--generator",
                                       f"file:{path}", "--out", str(tmp_path / "r.json"), "--no-save",
                                       "--no-progress", "--match", "words"])
    assert result.exit_code == 0, result.output
    values = {q.id: q.metrics["answer"] for q in AnswerReport.load(tmp_path / "r.json").questions}
    assert values["alternatives"]["include"] == pytest.approx(0.0)  # no lemmas: no office; whole words: no 800


def test_a_question_the_file_does_not_answer_is_failed_not_scored(dataset_dir, tmp_path, rag_ifeval):
    answers = {qid: case[1] for qid, case in CASES.items() if qid != "unsafe"}
    report, printed = answer(dataset_dir, answers, tmp_path / "report.json", rag_ifeval)
    failed = [q for q in report.questions if q.error]
    assert [q.id for q in failed] == ["unsafe"] and "no answer in" in failed[0].error
    assert report.failed == 1 and "safe" not in report.means["answer"]
    assert "1 of 9 questions got no answer" in " ".join(report.notes)


def test_the_real_questions_with_stand_in_documents(tmp_path, rag_ifeval):
    samples = json.loads((rag_ifeval / "samples.json").read_text(encoding="utf-8"))
    ids = sorted({d for s in samples for d in s["context"]})
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps({"id": i, "contents": f"Dokument {i}"}) + "\n"
                                                      for i in ids), encoding="utf-8")
    result = CliRunner().invoke(main, ["dataset", "import", "--format", "rag-ifeval", "--documents",
                                       str(tmp_path / "documents.jsonl"), "--samples", str(rag_ifeval / "samples.json"),
                                       "--out", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    dataset = load_dataset(tmp_path / "ds")
    assert len(dataset.questions) == 100 and len(dataset.documents) == 293
    assert sum(bool(q.relevant) for q in dataset.questions) == 70  # the 70 questions with documents to cite
    silent = {s["id"]: "." for s in samples}
    report, _ = answer(tmp_path / "ds", silent, tmp_path / "report.json", rag_ifeval)
    means = report.means["answer"]
    assert means["include"] == 0 and means["cite_f1"] == 0 and means["refuse"] == 0
    assert means["exclude"] == 1 and means["safe"] == 1
    assert report.counts["answer"]["include"] == 72 and report.counts["answer"]["refuse"] == 26


def test_bad_samples_are_named_and_counted(tmp_path):
    (tmp_path / "documents.jsonl").write_text('{"id": "d1", "contents": "x"}\n{"id": "d1", "contents": "y"}\n',
                                              encoding="utf-8")
    samples = [{"id": "1", "question": "A?", "context": ["d1"], "expect": {"cite": ["d1"]}},
               {"id": "2", "question": "B?", "context": ["d9"], "expect": {"refuse": True}},
               {"id": "3", "question": "C?", "context": ["d1"], "expect": {"tone": "polite"}},
               {"id": "4", "context": ["d1"], "expect": {"refuse": True}}]
    (tmp_path / "samples.json").write_text(json.dumps(samples), encoding="utf-8")
    args = ["dataset", "import", "--format", "rag-ifeval", "--documents", str(tmp_path / "documents.jsonl"),
            "--samples", str(tmp_path / "samples.json"), "--out", str(tmp_path / "ds")]
    result, lines = import_dataset(*args[2:])
    assert lines == [
        f"skipped: {tmp_path / 'documents.jsonl'}:2: field 'id': document 'd1' is listed twice (first on line 1)",
        f"skipped: {tmp_path / 'samples.json'}: record 1 (id '2'): field 'context': document 'd9' is not in "
        "documents.jsonl",
        f"skipped: {tmp_path / 'samples.json'}: record 2 (id '3'): field 'expect': unknown condition 'tone' in "
        "'expect' (known: include, exclude, cite, refuse, safe, fact_exact, evidence_set, conflict_gap)",
        f"skipped: {tmp_path / 'samples.json'}: record 3 (id '4'): field 'question': Field required"]
    assert "1 questions, 4 bad records skipped" in result.stderr
    assert load_dataset(tmp_path / "ds").manifest.builder["bad_records"] == 4
    strict = CliRunner().invoke(main, [*args, "--force", "--strict"])
    assert strict.exit_code == 1 and "(--strict stops at the first bad record)" in strict.output
    jsonl = tmp_path / "samples.jsonl"
    jsonl.write_text("\n".join(json.dumps(s) for s in samples[:2]), encoding="utf-8")
    wrong = CliRunner().invoke(main, [*args[:-4], "--samples", str(jsonl), "--out", str(tmp_path / "x")])
    assert wrong.exit_code == 1 and "samples.json is one JSON array, not JSON Lines" in wrong.output
