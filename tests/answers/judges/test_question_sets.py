"""Question sets in the ApeRAG formats: a spreadsheet's CSV comes back byte for byte, other dialects and JSON round
trip, bad files are named by line and field, LLM-built questions export, and questions without a source document
are answered and judged while retrieval scoring skips them with a count."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.dataset import Provenance, QuestionRecord, RelevantDocument, read_jsonl, write_jsonl
from ragretrieval.data.importers.aperag import read_aperag_csv, write_aperag_csv

ROWS = [
    ["question_type", "question_text", "ground_truth", "备注"],
    ["FACTUAL", "清蒸鲈鱼要大火蒸几分钟？", "大火蒸 8 分钟，关火后再焖 2 分钟。", ""],
    ["INFERENTIAL", '为什么说"先焯水"很重要，尤其是排骨、牛腩？', '能去掉血沫和腥味，\n汤更清；"焯水"后用温水洗。', "逗号,在格子里"],
    ["USER_DEFINED", 'He said "boil it", then left, twice', "Line one\r\nLine two, after a CRLF", "x"],
    ["factual", "宫保鸡丁用的是鸡的哪个部位？", "鸡胸肉或鸡腿肉，切丁。", "小写的类型"],
]


def spreadsheet_csv(rows) -> bytes:
    """What a spreadsheet's "CSV UTF-8" writes, built by hand: a BOM, CRLF after every row, quotes only around cells
    holding a comma, a quote or a line break, quotes inside doubled."""
    def cell(text):
        return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\r\n') else text
    return ("\ufeff" + "".join(",".join(cell(c) for c in row) + "\r\n" for row in rows)).encode("utf-8")


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def round_trip(tmp_path, data: bytes, fmt="aperag-csv", suffix="csv") -> tuple[bytes, list[QuestionRecord]]:
    source, questions, back = tmp_path / f"in.{suffix}", tmp_path / "questions.jsonl", tmp_path / f"out.{suffix}"
    source.write_bytes(data)
    invoke("questions", "import", source, "--format", fmt, "--out", questions, "--force")
    invoke("questions", "export", "--questions", questions, "--format", fmt, "--out", back, "--force")
    return back.read_bytes(), read_jsonl(questions, QuestionRecord)


def test_a_spreadsheets_csv_comes_back_byte_for_byte(tmp_path):
    data = spreadsheet_csv(ROWS)
    back, questions = round_trip(tmp_path, data)
    assert back == data
    assert [q.text for q in questions] == [r[1] for r in ROWS[1:]]
    assert questions[1].ground_truth == '能去掉血沫和腥味，\n汤更清；"焯水"后用温水洗。'
    assert questions[2].ground_truth == "Line one\r\nLine two, after a CRLF"
    assert [q.question_type for q in questions] == ["FACTUAL", "INFERENTIAL", "USER_DEFINED", "factual"]
    assert all(not q.relevant for q in questions) and questions[1].metadata["aperag"]["extra"] == {"备注": "逗号,在格子里"}
    stdout = invoke("questions", "export", "--questions", tmp_path / "questions.jsonl", "--format", "aperag-csv")
    assert stdout.stdout_bytes == data


@pytest.mark.parametrize("quoting, newline, bom, final", [(csv.QUOTE_ALL, "\n", False, False),
                                                          (csv.QUOTE_MINIMAL, "\n", False, True),
                                                          (csv.QUOTE_ALL, "\r\n", True, True)])
def test_other_dialects_and_an_id_column_round_trip(tmp_path, quoting, newline, bom, final):
    rows = [["id", "question_text", "question_type", "ground_truth"]] + [
        [f"q_{i}", r[1], r[0], r[2]] for i, r in enumerate(ROWS[1:])]
    buffer = io.StringIO(newline="")
    csv.writer(buffer, quoting=quoting, lineterminator=newline).writerows(rows)
    text = buffer.getvalue() if final else buffer.getvalue()[: -len(newline)]
    data = (("\ufeff" if bom else "") + text).encode("utf-8")
    back, questions = round_trip(tmp_path, data)
    assert back == data and [q.id for q in questions] == ["q_0", "q_1", "q_2", "q_3"]


def test_json_round_trips_and_the_api_shape_is_read(tmp_path):
    items = [{"question_type": r[0], "question_text": r[1], "ground_truth": r[2], "note": r[3]} for r in ROWS[1:]]
    back, questions = round_trip(tmp_path, json.dumps(items, ensure_ascii=False).encode("utf-8"), "aperag-json",
                                 "json")
    assert json.loads(back) == items and len(questions) == 4
    shaped = {"name": "菜谱", "description": "d", "questions": [{"id": "q_7", **items[0]}]}
    back, questions = round_trip(tmp_path, json.dumps(shaped, ensure_ascii=False).encode("utf-8"), "aperag-json",
                                 "json")
    assert questions[0].id == "q_7" and json.loads(back) == [{"id": "q_7", **items[0]}]


@pytest.mark.parametrize("rows, message", [
    ([["question", "ground_truth"], ["q?", "a"]], "in.csv:1: the header has no 'question_text' column"),
    ([["question_text", "question_text"], ["q?", "a"]], "in.csv:1: column 'question_text' appears twice"),
    ([["question_type", "question_text", "ground_truth"], ["FACTUAL", "q?", "a"], ["OPINION", "r?", "b"]],
     "in.csv:3: field 'question_type': 'OPINION' is not one of FACTUAL, INFERENTIAL, USER_DEFINED"),
    ([["question_type", "question_text", "ground_truth"], ["FACTUAL", "a\nb?", "c"], ["FACTUAL", "q?"]],
     "in.csv:4: 2 cells, but the header has 3 columns"),
    ([["question_text", "ground_truth"], ["q?", ""]], "in.csv:2: field 'ground_truth': empty: a question"),
    ([["question_type", "question_text"], ["FACTUAL", "q?"]], "in.csv:2: field 'ground_truth': Field required"),
    ([["question_text", "ground_truth"], ["   ", "a"]], "in.csv:2: field 'question_text': a question must not be blank"),
])
def test_a_bad_file_is_named_by_line_and_field(tmp_path, rows, message):
    (tmp_path / "in.csv").write_bytes(spreadsheet_csv(rows))
    failed = invoke("questions", "import", tmp_path / "in.csv", "--format", "aperag-csv", "--out", tmp_path / "q.jsonl",
                    code=1)
    assert message in failed.output
    assert not (tmp_path / "q.jsonl").exists()


def test_not_utf8_blank_rows_and_files_that_cannot_round_trip(tmp_path):
    (tmp_path / "gbk.csv").write_bytes("question_text,ground_truth\r\n红烧肉怎么做？,先焯水\r\n".encode("gbk"))
    failed = invoke("questions", "import", tmp_path / "gbk.csv", "--format", "aperag-csv", code=1)
    assert "not UTF-8" in failed.output and "CSV UTF-8" in failed.output
    (tmp_path / "blank.csv").write_bytes(b"question_text,ground_truth\r\nq1?,a\r\n,\r\nq2?,b\r\n")
    result = invoke("questions", "import", tmp_path / "blank.csv", "--format", "aperag-csv", "--out",
                    tmp_path / "q.jsonl")
    assert "blank.csv:3: blank row skipped" in result.stderr and "cannot reproduce exactly" in result.stderr
    assert len(read_jsonl(tmp_path / "q.jsonl", QuestionRecord)) == 2


def test_llm_built_questions_export_with_their_types_and_reference_answers(tmp_path):
    old_style = QuestionRecord(id="q-1", text="红烧肉要炖多久？", relevant=[RelevantDocument(doc_id="d.md")],
                               provenance=Provenance(generator="llm"),
                               metadata={"question_type": "INFERENTIAL", "ground_truth": "小火炖 40 分钟。"})
    plain = QuestionRecord(id="q-2", text="如何做红烧肉？", relevant=[RelevantDocument(doc_id="d.md")],
                           provenance=Provenance(generator="filename"))
    assert old_style.ground_truth == "小火炖 40 分钟。" and old_style.question_type == "INFERENTIAL"
    data = write_aperag_csv([old_style, plain])
    assert data == spreadsheet_csv([["question_type", "question_text", "ground_truth"],
                                    ["INFERENTIAL", "红烧肉要炖多久？", "小火炖 40 分钟。"],
                                    ["USER_DEFINED", "如何做红烧肉？", ""]])
    (tmp_path / "set.csv").write_bytes(b"\r\n".join(data.split(b"\r\n")[:2]) + b"\r\n")  # the first question only
    again, warnings = read_aperag_csv(tmp_path / "set.csv")
    assert again[0].ground_truth == "小火炖 40 分钟。" and again[0].question_type == "INFERENTIAL"


def test_questions_without_a_source_are_answered_and_judged_and_skipped_by_retrieval(demo_dataset, llm_env,
                                                                                    judge_server, tmp_path):
    (tmp_path / "set.csv").write_bytes(spreadsheet_csv(ROWS[:2] + ROWS[4:]))
    invoke("questions", "import", tmp_path / "set.csv", "--format", "aperag-csv", "--dataset", demo_dataset, "--out",
           tmp_path / "q.jsonl")
    invoke("answer", "--dataset", demo_dataset, "--questions", tmp_path / "q.jsonl", "--generator", "extractive",
           "--retriever", "bm25", "--judge", "score5", "--judge-model", "judge-model", "--judge-base-url",
           judge_server.url, "--no-progress", "--no-save", "--out", tmp_path / "r.json")
    report = AnswerReport.load(tmp_path / "r.json")
    assert report.judges["score5"].judged == 2 and "average_score" in report.means["answer"]
    assert "2 question(s) without relevant documents have no retrieval metrics" in report.notes
    mixed = read_jsonl(demo_dataset / "questions.jsonl", QuestionRecord)[:3] + read_jsonl(tmp_path / "q.jsonl",
                                                                                          QuestionRecord)
    write_jsonl(tmp_path / "mixed.jsonl", mixed)
    result = invoke("eval", "--dataset", demo_dataset, "--questions", tmp_path / "mixed.jsonl", "--retriever", "bm25",
                    "--no-save", "--no-progress")
    assert "2 question(s) without relevant documents were left out of retrieval scoring" in result.output
