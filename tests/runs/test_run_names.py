"""A run name means one run (runs/names.py): a repeated name moves to the new run, the run that had it keeps its id
under a dated name, one note says so; nothing is refused and nothing is overwritten. On both history back ends, and
through every surface that stores runs: the command line's eval, answer, judge answers and sweep, Python's
`rr.evaluate(save=True)`, and the web's stored runs (a save inside the caller's transaction)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.runs import RunHistory
from ragretrieval.runs.names import RunNameMoved, dated_name


def test_a_repeated_name_moves_to_the_new_run(history, bm25_reports):
    notes = []
    first = history.save(bm25_reports[0], name="bm25", tags=["a"], on_note=notes.append)
    assert notes == []
    second = history.save(bm25_reports[1], name="bm25", on_note=notes.append)
    created = history.get(first).created_at
    dated = f"bm25@{created:%Y-%m-%dT%H:%M}"
    assert notes == [f"the name 'bm25' now names run {second}; the earlier run {first} keeps its id and is now named "
                     f"'{dated}'"]
    assert history.get("bm25").id == second and history.get(dated).id == first
    earlier = history.get(first)
    assert (earlier.name, earlier.tags, earlier.report) == (dated, ["a"], bm25_reports[0])  # nothing overwritten
    assert history.get(second).report == bm25_reports[1]


def test_a_taken_dated_name_gets_seconds_then_a_counter(history, bm25_reports):
    saved = [history.save(bm25_reports[0], name="bm25", on_note=lambda note: None) for _ in range(4)]
    names = {run.id: run.name for run in history.list()}
    assert names[saved[-1]] == "bm25" and len(set(names.values())) == 4
    assert all(names[run_id].startswith("bm25@") for run_id in saved[:-1])
    when = datetime(2026, 11, 28, 1, 2, 7, tzinfo=timezone.utc)
    taken = {"bm25@2026-11-28T01:02", "bm25@2026-11-28T01:02:07", "bm25@2026-11-28T01:02:07-2"}
    assert dated_name("bm25", when, lambda name: False) == "bm25@2026-11-28T01:02"
    assert dated_name("bm25", when, lambda name: name in taken) == "bm25@2026-11-28T01:02:07-3"


def test_python_callers_are_warned(history, bm25_reports):
    history.save(bm25_reports[0], name="x")
    with pytest.warns(RunNameMoved, match="the name 'x' now names run"):
        history.save(bm25_reports[0], name="x")


def test_a_save_in_the_callers_transaction_moves_the_name_too(history, bm25_reports):
    """The web stores an evaluation's run inside the transaction that completes it (server/jobs/stored_run.py)."""
    first = history.save(bm25_reports[0], name="web run")
    with history.engine.connect() as conn, conn.begin():
        second = history.save(bm25_reports[1], name="web run", conn=conn, on_note=lambda note: None)
    assert history.get("web run").id == second and history.get(first).name.startswith("web run@")


def test_rename_into_a_taken_name_moves_it(history, bm25_reports):
    kept = history.save(bm25_reports[0], name="best")
    other = history.save(bm25_reports[1])
    notes = []
    history.rename(other, "best", on_note=notes.append)
    assert history.get("best").id == other and history.get(kept).name.startswith("best@") and len(notes) == 1
    history.rename(other, "best", on_note=notes.append)  # its own name: nothing moves
    assert len(notes) == 1


def test_python_evaluate_twice_with_a_name(dataset_dir, tmp_path):
    runs = tmp_path / "runs.sqlite"
    rr.evaluate(dataset_dir, retriever="bm25", save=True, runs_db=str(runs), name="bm25")
    with pytest.warns(RunNameMoved, match="the name 'bm25' now names run"):
        rr.evaluate(dataset_dir, retriever="bm25", save=True, runs_db=str(runs), name="bm25")
    with RunHistory(runs) as history:
        assert [run.name.partition("@")[0] for run in history.list()] == ["bm25", "bm25"]
        assert history.get("bm25").id == history.list()[-1].id


def cli(*arguments):
    result = CliRunner().invoke(main, [str(a) for a in arguments])
    assert result.exit_code == 0, result.output
    return result


def test_eval_twice_with_the_same_names_then_show_and_compare(dataset_dir, tmp_path):
    runs = tmp_path / "runs.sqlite"
    for _ in range(2):
        bm25 = cli("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--name", "bm25", "--runs-db", runs)
        other = cli("eval", "--dataset", dataset_dir, "--retriever", "bm25", "--chunk-size", 500, "--name", "big",
                    "--runs-db", runs)
    notes = [line for line in bm25.stderr.splitlines() + other.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 2 and "the name 'bm25' now names run" in notes[0] and "'big' now names run" in notes[1]
    assert "bm25" in cli("runs", "show", "bm25", "--runs-db", runs).output
    assert "recall@5" in cli("runs", "compare", "bm25", "big", "-m", "recall@5", "--runs-db", runs).output
    assert "note: the name 'big'" in cli("runs", "rename", "bm25", "big", "--runs-db", runs).stderr


def test_a_sweep_cell_stored_again_under_its_name(dataset_dir, tmp_path):
    """`--sweep-id` with other metrics cutoffs: the cells are new runs with the same names."""
    runs = tmp_path / "runs.sqlite"
    cli("sweep", "--dataset", dataset_dir, "--retriever", "bm25", "--sweep-id", "s", "--runs-db", runs, "--no-progress")
    again = cli("sweep", "--dataset", dataset_dir, "--retriever", "bm25", "--sweep-id", "s", "--k", 3, "--primary", "recall@3", "--runs-db", runs,
                "--no-progress")
    assert "note: the name 's bm25 300/50' now names run" in again.stderr
    with RunHistory(runs) as history:
        assert sorted(run.name.partition("@")[0] for run in history.list()) == ["s bm25 300/50"] * 2
