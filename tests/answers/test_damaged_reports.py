"""A report file that is not JSON (cut off mid-copy, empty, something else) says so, and names the kind of report
the command expected; it used to say "not an eval report (--out of ragretrieval eval)" whatever was asked for."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.evaluation.report import EvalReport, ReportError

ANSWER = "an answer report (--out of `ragretrieval answer`)"
EITHER = "an eval or answer report (--out of `ragretrieval eval` or `ragretrieval answer`)"


@pytest.fixture(scope="module")
def answer_report(demo_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "answers.json"
    result = CliRunner().invoke(main, ["answer", "--dataset", str(demo_dataset), "--retriever", "bm25", "--generator",
                                       "extractive", "--no-save", "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


@pytest.fixture
def truncated(answer_report, tmp_path):
    path = tmp_path / "trunc.json"
    path.write_text(answer_report[: len(answer_report) // 2], encoding="utf-8")
    return path


def test_judge_answers_on_a_truncated_report_says_truncated_and_expects_an_answer_report(truncated, llm_env):
    result = CliRunner().invoke(main, ["judge", "answers", str(truncated), "--judge", "score5", "--out",
                                       str(truncated.parent / "judged.json")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"Error: {truncated}: truncated: its JSON stops before it is complete (line ")
    assert line.endswith(f"the file was cut off); expected {ANSWER}")
    assert "not an eval report" not in result.output


def test_load_run_on_a_truncated_report(truncated):
    with pytest.raises(ReportError, match="truncated: its JSON stops") as error:
        rr.load_run(truncated)
    assert str(error.value).endswith(f"; expected {EITHER}")


@pytest.mark.parametrize("text, said", [
    ("", "empty (no JSON in it)"), ("  \n", "empty (no JSON in it)"),
    ('{"kind": "answer", "questions": [{"id": "q1", "text": "wh', "truncated: its JSON stops"),
    ('{"kind": "answer"', "truncated: its JSON stops"),
    ("question_id,answer\nq1,42\n", "not JSON (line 1, column 1: Expecting value)"),
    ('{"kind": "answer"} {}', "not JSON (line 1, column 20: Extra data)"),
])
def test_each_loader_says_what_is_wrong_and_what_it_expected(tmp_path, text, said):
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReportError) as either:
        rr.load_run(path)
    assert str(either.value).startswith(f"{path}: {said}") and str(either.value).endswith(f"; expected {EITHER}")
    with pytest.raises(Exception) as answer:
        AnswerReport.load(path)
    assert str(answer.value).startswith(f"{path}: {said}") and str(answer.value).endswith(f"; expected {ANSWER}")
    with pytest.raises(ReportError) as retrieval:
        EvalReport.load(path)
    assert str(retrieval.value).endswith("; expected an eval report (--out of `ragretrieval eval`)")
