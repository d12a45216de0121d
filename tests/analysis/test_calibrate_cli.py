"""``calibrate``, ``compare --calibrate-labels`` and ``report --calibrate-labels`` on real answer runs judged by a chat
server on 127.0.0.1 (the ``correctness`` judge), with a person's labels on half of the answers; and every bad labels
file refused by file and line."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from ragretrieval.analysis.calibration import calibrated_mean
from ragretrieval.answers.report import AnswerReport
from ragretrieval.cli import main
from ragretrieval.data.corpus import Document, corpus_fingerprint
from ragretrieval.data.dataset import Manifest, Provenance, QuestionRecord, write_dataset
from ragretrieval.testing.chat_server import TEST_API_KEY, ChatServer, Reply

METRIC = "response/llm_judged/correctness/rating"
ITEMS = 40
NUMBER = re.compile(r"item (\d+)")


def judge_says_yes(request: dict) -> Reply:
    """A lenient judge: yes except for items divisible by 5 (a person says no to every third item)."""
    number = int(NUMBER.search(request["messages"][0]["content"]).group(1))
    return Reply(json.dumps({"rating": "no" if number % 5 == 0 else "yes", "rationale": "r"}))


def person(number: int) -> float:
    return 0.0 if number % 3 == 0 else 1.0


def invoke(*arguments, code=0):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == code, result.output
    return result


def labels_file(path, values: dict[str, float]):
    path.write_text("".join(json.dumps({"question_id": q, "value": v}) + "\n" for q, v in values.items()),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two judged answer runs (A, B: one sentence per answer) stored in a history; yields (history, folder)."""
    folder = tmp_path_factory.mktemp("calibrate")
    documents = tuple(Document(f"doc-{i}", f"Item {i}", f"Item {i} costs {i} coins. It is sold on day {i % 7}.")
                      for i in range(ITEMS))
    questions = [QuestionRecord(id=f"q{i}", text=f"How much does item {i} cost?", ground_truth=f"{i} coins.",
                                context=[f"doc-{i}"], provenance=Provenance(generator="hand"))
                 for i in range(ITEMS)]
    write_dataset(folder / "dataset", documents, questions, Manifest(
        corpus_fingerprint=corpus_fingerprint(documents), n_documents=ITEMS, n_questions=ITEMS))
    history = folder / "runs.sqlite"
    with pytest.MonkeyPatch.context() as patch, ChatServer(judge_says_yes) as server:
        patch.setenv("RAGRETRIEVAL_CACHE_DIR", str(folder / "cache"))
        patch.setenv("OPENAI_API_KEY", TEST_API_KEY)
        for name, extra in (("A", []), ("B", ["--generator-option", "sentences=1"])):
            invoke("answer", "--dataset", folder / "dataset", "--generator", "extractive", "--contexts", "given",
                   "--judge", "correctness", "--judge-model", "judge-model", "--judge-base-url", server.url,
                   "--judge-language", "en", "--no-progress", "--runs-db", history, "--name", name,
                   "--out", folder / f"{name}.json", *extra)
    return history, folder


def test_calibrate_prints_three_rows_equal_to_the_library(runs, tmp_path):
    history, folder = runs
    labels = labels_file(tmp_path / "labels.jsonl", {f"q{i}": person(i) for i in range(0, ITEMS, 2)})
    shown = invoke("judge", "calibrate", "A", "--labels", labels, "--metric", METRIC, "--runs-db", history).output
    assert "20 labelled of 40 judged; PPI++ (power-tuned)" in shown
    for row in ("judge alone", "labels alone", "calibrated"):
        assert row in shown
    data = json.loads(invoke("judge", "calibrate", folder / "A.json", "--labels", labels, "--metric", METRIC, "--json").output)
    report = AnswerReport.load(folder / "A.json")
    judge = {q.id: q.metrics["answer"][METRIC] for q in report.questions}
    expected = calibrated_mean(judge, {f"q{i}": person(i) for i in range(0, ITEMS, 2)}, metric=METRIC)
    assert data["calibrated"] == expected.calibrated.to_json() and data["lam"] == expected.lam
    assert data["judge_alone"]["mean"] == pytest.approx(1 - 8 / 40)  # the lenient judge's own mean
    assert data["labels_alone"]["mean"] == pytest.approx(13 / 20)
    assert data["source"] == "A" and data["labelled"] == 20 and data["unlabelled"] == 20
    classic = json.loads(invoke("judge", "calibrate", "A", "--labels", labels, "--metric", METRIC, "--runs-db", history,
                                "--json", "--lam", "1", "--confidence", "0.9").output)
    assert classic["lam"] == 1.0 and classic["confidence"] == 0.9 and classic["method"].startswith("PPI (classic")


def test_calibrate_reads_predictions_instead_of_a_run(tmp_path):
    predictions = labels_file(tmp_path / "predictions.jsonl", {f"q{i}": float(i % 5 != 0) for i in range(30)})
    labels = labels_file(tmp_path / "labels.jsonl", {f"q{i}": person(i) for i in range(10)})
    data = json.loads(invoke("judge", "calibrate", "--predictions", predictions, "--labels", labels, "--json").output)
    assert data["labelled"] == 10 and data["unlabelled"] == 20 and data["source"] == str(predictions)
    assert any("optimistic" in note for note in data["notes"])


def test_compare_and_report_show_calibrated_means(runs, tmp_path):
    history, _ = runs
    a = labels_file(tmp_path / "a.jsonl", {f"q{i}": person(i) for i in range(0, ITEMS, 2)})
    b = labels_file(tmp_path / "b.jsonl", {f"q{i}": 1.0 for i in range(0, ITEMS, 2)})
    shown = invoke("runs", "compare", "A", "B", "-m", METRIC, "--calibrate-labels", a, "--calibrate-labels", b,
                   "--runs-db", history).output
    assert "calibrated B - A: +" in shown and "A: response/llm_judged/correctness/rating, 20 labelled" in shown
    data = json.loads(invoke("runs", "compare", "A", "B", "-m", METRIC, "--calibrate-labels", a, "--calibrate-labels", b,
                             "--runs-db", history, "--json").output)
    calibrated = data["calibrated"]
    assert set(calibrated["runs"]) == {"A", "B"} and calibrated["metric"] == METRIC
    difference = calibrated["differences"]["B"]
    assert difference["mean"] == pytest.approx(calibrated["runs"]["B"]["calibrated"]["mean"] -
                                               calibrated["runs"]["A"]["calibrated"]["mean"], abs=0.2)
    assert difference["ci"][0] < difference["mean"] < difference["ci"][1] and difference["n"] == ITEMS
    only_a = json.loads(invoke("runs", "compare", "A", "B", "-m", METRIC, "--calibrate-labels", a, "--runs-db", history,
                               "--json").output)["calibrated"]
    assert set(only_a["runs"]) == {"A"} and only_a["differences"] == {}
    html = tmp_path / "report.html"
    invoke("runs", "report", "A", "B", "-m", METRIC, "--calibrate-labels", a, "--calibrate-labels", b, "--html", html,
           "--runs-db", history)
    page = html.read_text(encoding="utf-8")
    assert "Calibrated means of response/llm_judged/correctness/rating" in page and "calibrated B − A" in page
    assert page.count("<th>labels alone</th>") == 2
    plain = tmp_path / "plain.html"
    invoke("runs", "report", "A", "-m", METRIC, "--html", plain, "--runs-db", history)
    assert "Calibrated means" not in plain.read_text(encoding="utf-8")


@pytest.mark.parametrize("content, message", [
    ('{"question_id": "q1", "value": "yes"}\n', "labels.jsonl:1: field 'value': value must be a finite number; got 'yes'"),
    ('{"question_id": "q1", "value": true}\n', "labels.jsonl:1: field 'value'"),
    ('{"question_id": "q1", "value": NaN}\n', "labels.jsonl:1:"),
    ('{"question_id": "q1"}\n', "labels.jsonl:1: field 'value': Field required"),
    ('{"question_id": "q1", "value": 1, "annotator": "x"}\n', "field 'annotator': Extra inputs are not permitted"),
    ('{"question_id": "q1", "value": 1, "values_version": 3}\n', "values_version 3 is not supported"),
    ('{"question_id": "q1", "value": 1}\n{"question_id": "q1", "value": 0}\n',
     r"labels.jsonl:2: question 'q1' is listed twice \(first on line 1\)"),
    ("\n\n", "labels.jsonl: no values"),
    ("not json\n", "labels.jsonl:1: invalid JSON"),
    ('{"question_id": "q1", "value": 1}\n{"question_id": "elsewhere", "value": 0}\n',
     "1 labelled question\\(s\\) are not in run A: 'elsewhere'"),
    # off the metric's scale (a yes/no judge's 0-1): refused naming the line, not turned into an interval past it
    ('{"question_id": "q1", "value": 1}\n{"question_id": "q2", "value": 2}\n',
     r"labels.jsonl:2: field 'value': 2 is off the scale of response/llm_judged/correctness/rating \(0 to 1\)"),
    ('{"question_id": "q1", "value": -0.5}\n', "labels.jsonl:1: field 'value': -0.5 is off the scale"),
    ('{"question_id": "q1", "value": 1e308}\n', r"labels.jsonl:1: field 'value': value must be from -1e\+12 to "
                                                 r"1e\+12; got 1e\+308"),
])
def test_a_bad_labels_file_is_refused_by_file_and_line(content, message, runs, tmp_path):
    history, _ = runs
    path = tmp_path / "labels.jsonl"
    path.write_text(content, encoding="utf-8")
    refused = invoke("judge", "calibrate", "A", "--labels", path, "--metric", METRIC, "--runs-db", history, code=2)
    assert re.search(message, refused.output), refused.output


@pytest.mark.parametrize("values, message", [
    ({"q1": 9.0}, "labels.jsonl:1: field 'value': 9 is off the scale of average_score (1 to 5)"),
    ({"q1": 3.0, "q2": -3.0}, "labels.jsonl:2: field 'value': -3 is off the scale of average_score (1 to 5)"),
    ({"q1": 0.0}, "labels.jsonl:1: field 'value': 0 is off the scale of average_score (1 to 5)"),
])
def test_labels_off_a_one_to_five_judges_scale_are_refused_naming_the_line(tmp_path, values, message):
    """score5's 1-5: labels 9 and -3 used to give a calibrated interval of [-5.3, 11.3]."""
    predictions = labels_file(tmp_path / "predictions.jsonl", {f"q{i}": float(1 + i % 5) for i in range(30)})
    labels = labels_file(tmp_path / "labels.jsonl", {**values, **{f"q{i}": 4.0 for i in range(3, 10)}})
    refused = invoke("judge", "calibrate", "--predictions", predictions, "--labels", labels, "--metric",
                     "average_score", code=2)
    assert message in refused.output and "Traceback" not in refused.output
    wrong = labels_file(tmp_path / "wrong.jsonl", {f"q{i}": 6.0 if i == 4 else 4.0 for i in range(10)})
    assert "wrong.jsonl:5: field 'value': 6 is off the scale" in invoke(
        "judge", "calibrate", "--predictions", wrong, "--labels", labels_file(tmp_path / "ok.jsonl", {"q1": 5.0}),
        "--metric", "llm_judge_score", code=2).output  # the judge's own values too, by either name
    fine = labels_file(tmp_path / "fine.jsonl", {f"q{i}": float(1 + i % 5) for i in range(10)})
    shown = json.loads(invoke("judge", "calibrate", "--predictions", predictions, "--labels", fine, "--metric",
                              "average_score", "--json").output)
    assert 1 <= shown["calibrated"]["mean"] <= 5


def test_bad_arguments_are_refused(runs, tmp_path):
    history, _ = runs
    labels = labels_file(tmp_path / "labels.jsonl", {"q1": 1.0, "q2": 0.0})
    cases = [
        (["judge", "calibrate", "--labels", labels], 2, "give RUN or --predictions FILE"),
        (["judge", "calibrate", "A", "--predictions", labels, "--labels", labels], 2, "give RUN or --predictions FILE"),
        (["judge", "calibrate", "A", "--labels", labels, "--runs-db", history], 2, "--metric NAME says which"),
        (["judge", "calibrate", "A", "--labels", labels, "--metric", "nope", "--runs-db", history], 2,
         "no question has answer-level metric nope"),
        (["judge", "calibrate", "A", "--labels", tmp_path / "missing.jsonl", "--metric", METRIC, "--runs-db", history], 2,
         "missing.jsonl: file not found"),
        (["judge", "calibrate", "A", "--labels", tmp_path, "--metric", METRIC, "--runs-db", history], 2, "is a directory"),
        (["judge", "calibrate", "A", "--labels", labels, "--metric", METRIC, "--lam", "2", "--runs-db", history], 2,
         "0<=x<=1"),
        (["judge", "calibrate", "A", "--labels", labels, "--metric", METRIC, "--confidence", "1", "--runs-db", history], 2,
         "0<x<1"),
        (["runs", "compare", "A", "B", "-m", METRIC, "--calibrate-labels", labels, "--calibrate-labels", labels,
          "--calibrate-labels", labels, "--runs-db", history], 2, "3 labels files for 2 runs"),
        (["runs", "compare", "A", "B", "-m", METRIC, "--calibrate-metric", METRIC, "--runs-db", history], 2,
         "need --calibrate-labels"),
    ]
    for arguments, code, message in cases:
        assert message in invoke(*arguments, code=code).output, arguments
