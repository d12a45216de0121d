"""The legal benchmark end to end on our own fixture in its real layout (tests/answers/legal_fixture: a short OCR'd
transcript with pages, LaTeX and HTML markup and curly quotes; three benchmark files with every field type): import,
located evidence, then each formula through ``answer --contexts given --generator file:`` with hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset

from .shared_data import import_dataset

FIXTURE = Path(__file__).parent / "legal_fixture"
# question id -> (answer, the values the formulas give, by hand)
ANSWERS = {
    # 4.2万 = 42000; the cited transcript holds the critical "42000元" (as $ \underline{\text{42000}} $ 元)
    "fact_001": ("一共给了4.2万元 [0]。", {"fact_exact": 1.0, "exact_match": 1.0, "citation_correctness": 1.0}),
    # both breakdown amounts (30,000 and 一万二千) and the date range: 3 of 3 fields
    "fact_002": ("第一次30,000元，第二次一万二千元，从2020年8月1日到2020年8月15日 [0]。",
                 {"fact_exact": 1.0, "exact_match": 1.0, "citation_correctness": 1.0}),
    # the wrong date, the right yes: 0.7 x 1/2 + 0.3 x 1
    "fact_003": ("是的，他是2020年9月1日说的 [0]。", {"fact_exact": 0.65, "exact_match": 0.5,
                                                   "citation_correctness": 1.0}),
    # entity, text and count (三 = 3); no citation needed
    "fact_004": ("他叫张华，想办学位，见过三次面。", {"fact_exact": 1.0, "exact_match": 1.0, "citation_correctness": 1.0}),
    # both critical strings are in the cited context: recall 1, precision 1/1, cites
    "evidence_001": ("他说办不成就全部退回，后来承诺把钱退回来 [0]。",
                     {"evidence_set": 1.0, "evidence_recall": 1.0, "evidence_precision": 1.0, "cites": 1.0}),
    # nothing cited: only one critical string is in the answer itself (recall 1/2), precision 0, no citation
    "evidence_002": ("他承诺把钱退回来。", {"evidence_set": 0.0, "evidence_recall": 0.5, "evidence_precision": 0.0,
                                        "cites": 0.0}),
    # abstains (没有提及), invents nothing ([0] is a marker, not a number), quotes the parts in order
    "conflict_gap_001": ("笔录中没有提及具体用途，他只说具体请了谁吃饭，都忘记了 [0]。",
                         {"conflict_gap": 1.0, "abstention": 1.0, "no_invention": 1.0, "quote": 0.0 + 1.0}),
    # answers (right not to abstain) but invents 7 and a date, and quotes nothing: 0.4
    "conflict_gap_002": ("见过7次，最后一次是2021年1月2日 [0]。",
                         {"conflict_gap": 0.4, "abstention": 1.0, "no_invention": 0.0, "quote": 0.0}),
}


@pytest.fixture
def legal_dataset(tmp_path):
    result = CliRunner().invoke(main, ["dataset", "import", "--format", "legal-rag", str(FIXTURE / "benchmark"),
                                       "--source", str(FIXTURE / "transcript.md"), "--out", str(tmp_path / "legal")])
    assert result.exit_code == 0, result.output
    assert ("question conflict_gap_002: '这句话不在笔录里' not found in transcript.md" in result.stderr
            and "8 questions, 0 bad records skipped, 1 warnings" in result.stderr)
    return tmp_path / "legal"


def test_import_locates_evidence_through_ocr_markup(legal_dataset):
    dataset = load_dataset(legal_dataset)
    text = dataset.documents[0].text
    questions = {q.id: q for q in dataset.questions}
    assert [d.id for d in dataset.documents] == ["transcript.md"]
    assert {q.question_type for q in dataset.questions} == {"fact_exact", "evidence_set", "conflict_gap"}
    assert questions["conflict_gap_001"].question_type == "conflict_gap"  # from benchmark_type: the item has none

    def located(qid):
        (rel,) = questions[qid].relevant
        return [text[s:e] for s, e in rel.spans]

    [latex] = located("fact_001")
    assert latex == "42000}} $ 元"  # from the first to the last character matched, markup between
    assert any("2020 年 8 月 15 日" in s or "第二次 12000 元" in s for s in located("fact_002"))
    assert any("“全部退回来" in s for s in located("evidence_001"))  # straight quotes in the label, curly in text
    assert any("<br>" in s for s in located("evidence_001"))  # across the OCR line break
    assert located("conflict_gap_001")  # the quote with an ellipsis, piece by piece
    assert questions["conflict_gap_002"].metadata["unlocated"] == ["这句话不在笔录里"]
    assert dataset.manifest.builder["unlocated"] == [{"question": "conflict_gap_002", "text": "这句话不在笔录里"}]
    assert questions["evidence_001"].ground_truth == "办不成就全部退回; 说办不了并承诺退钱"
    assert questions["fact_001"].expect["fact_exact"]["scoring"]["citation_required"] is True
    assert questions["fact_001"].context == ["transcript.md"]


def test_each_formula_on_hand_computed_answers(legal_dataset, tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"question_id": qid, "answer": a}, ensure_ascii=False) + "\n"
                               for qid, (a, _) in ANSWERS.items()), encoding="utf-8")
    result = CliRunner().invoke(main, ["answer", "--dataset", str(legal_dataset), "--contexts", "given",
                                       "--generator", f"file:{answers}", "--out", str(tmp_path / "r.json"),
                                       "--no-save", "--no-progress"])
    assert result.exit_code == 0, result.output
    report = AnswerReport.load(tmp_path / "r.json")
    for question in report.questions:
        expected = ANSWERS[question.id][1]
        values = question.metrics["answer"]
        assert {k: values[k] for k in expected} == pytest.approx(expected), question.id
        assert values["pass_rate"] == (values[question.question_type] >= 0.7)
        assert "cite_f1" not in values  # legal questions judge citations their own way
    means = report.means["answer"]
    assert means["fact_exact"] == pytest.approx((1 + 1 + 0.65 + 1) / 4)
    assert means["evidence_set"] == pytest.approx(0.5) and means["conflict_gap"] == pytest.approx(0.7)
    assert means["pass_rate"] == pytest.approx(5 / 8) and means["pass_rate_fact_exact"] == pytest.approx(3 / 4)
    assert report.by_type["evidence_set"]["evidence_set"] == pytest.approx(0.5)
    assert "fact_exact" in result.output and "pass_rate" in result.output


def test_the_located_spans_label_chunks_for_eval(legal_dataset):
    result = CliRunner().invoke(main, ["eval", "--dataset", str(legal_dataset), "--retriever", "bm25",
                                       "--chunk-size", "80", "--chunk-overlap", "10", "--no-save", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "chunk level (8 questions, 1 documents" in result.output


def test_bad_items_are_named_and_strict_stops(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "b.json").write_text(json.dumps({"benchmark_type": "fact_exact", "document": "transcript.md",
                                              "questions": [{"id": "f1", "question": "多少钱？",
                                                             "expected": {"amount_total": 1}},
                                                            {"id": "f2", "expected": {"amount_total": 1}},
                                                            {"id": "f3", "question": "x", "type": "essay"},
                                                            {"id": "f4", "question": "y", "expected": []}]},
                                             ensure_ascii=False), encoding="utf-8")
    args = ["--format", "legal-rag", bench, "--source", FIXTURE / "transcript.md", "--out", tmp_path / "out"]
    _, skipped = import_dataset(*args)
    assert skipped == [
        f"skipped: {bench / 'b.json'}: question f2: question: missing",
        f"skipped: {bench / 'b.json'}: question f3: type: 'essay' is not one of fact_exact, evidence_set, "
        "conflict_gap",
        f"skipped: {bench / 'b.json'}: question f4: expected: must be an object, got []"]
    strict = CliRunner().invoke(main, ["dataset", "import", *map(str, args), "--force", "--strict"])
    assert strict.exit_code == 1 and "question f2: question: missing (--strict" in strict.output
