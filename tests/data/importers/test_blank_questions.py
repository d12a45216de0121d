"""A blank question (empty, or only whitespace) is a bad record wherever it comes from: one rule (data/dataset.py
`not_blank`) for agent-evaluation records in their three request shapes, dataset question files, ApeRAG files,
`ragretrieval.answer`'s DataFrames and the web API's question sets (tests/server/test_api_question_sets.py)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.data.dataset import DatasetError, QuestionRecord

BLANK = " \t\n\u3000"  # an ideographic space is whitespace too


def labelled(dataset, request) -> dict:
    return {"request": request, "expected_retrieved_context": [{"doc_uri": dataset.questions[0].relevant[0].doc_id}]}


@pytest.mark.parametrize("request_, field", [
    ("   ", "request.text"),
    ({"query": BLANK, "history": []}, "request.query.query"),
    ({"messages": [{"role": "user", "content": "earlier"}, {"role": "user", "content": "\t"}]}, "request.messages"),
])
def test_an_agent_evaluation_line_with_a_blank_request_is_a_bad_record(demo_dataset, tmp_path, request_, field):
    dataset = rr.load_dataset(demo_dataset)
    source = tmp_path / "eval.jsonl"
    good = labelled(dataset, dataset.questions[0].text)
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in (good, labelled(dataset, request_))),
                      encoding="utf-8")
    result = CliRunner().invoke(main, ["questions", "import", str(source), "--dataset", str(demo_dataset), "--out",
                                       str(tmp_path / "questions.jsonl")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"eval.jsonl:2: field '{field}': a question must not be blank" in result.output
    assert not (tmp_path / "questions.jsonl").exists()


def test_answer_refuses_a_blank_question_naming_the_row(demo_dataset):
    dataset = rr.load_dataset(demo_dataset)
    frame = pd.DataFrame([labelled(dataset, dataset.questions[0].text), labelled(dataset, "   ")])
    with pytest.raises(DatasetError, match="row 1: field 'request.text': a question must not be blank"):
        rr.answer(dataset, questions=frame, retriever="bm25")


def test_a_question_file_with_a_blank_text_is_refused_naming_the_line(demo_dataset, tmp_path):
    record = json.loads((demo_dataset / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({**record, "text": BLANK}, ensure_ascii=False) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["answer", "--dataset", str(demo_dataset), "--questions", str(questions),
                                       "--retriever", "bm25", "--no-save"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "questions.jsonl:1: field 'text': a question must not be blank" in result.output
    with pytest.raises(ValueError, match="a question must not be blank"):
        QuestionRecord.model_validate({**record, "text": "  "})
