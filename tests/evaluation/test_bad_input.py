"""Ordinary mistakes get one ``Error:`` line naming what is wrong and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset
from ragretrieval.evaluation.pipeline import evaluate
from ragretrieval.evaluation.report import EvalConfig


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def one_error_line(result, code: int = 1) -> str:
    """The error line (the last line of standard error, the only one saying Error)."""
    assert result.exit_code == code, result.output
    last = result.stderr.splitlines()[-1] + "\n"
    assert last.startswith("Error: ") and result.stderr.count("Error") == 1, result.stderr
    return last


@pytest.fixture
def dataset_copy(tmp_path, demo_dataset):
    copy = tmp_path / "dataset"
    shutil.copytree(demo_dataset, copy)
    return copy


def test_an_out_folder_that_cannot_be_made_is_an_error_line(tmp_path, demo_corpus):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    message = one_error_line(run("dataset", "build", demo_corpus, "--out", blocker / "dataset"), code=2)  # fix --out
    assert str(blocker) in message and "Not a directory" in message


@pytest.mark.parametrize("option, value", [("--rel-level", "0"), ("--k", ""), ("--k", "0,5"), ("--top-k", "0")])
def test_bad_numbers_are_refused_before_any_work(demo_dataset, option, value):
    result = run("eval", "--dataset", demo_dataset, "--retriever", "bm25", option, value, "--no-save")
    assert result.exit_code == 2 and option in result.stderr


def test_an_empty_question_set_is_refused_before_any_work(tmp_path, demo_dataset, embedding_cache_dir):
    empty = tmp_path / "questions.jsonl"
    empty.write_text("\n")
    for retriever in ("bm25", "dense"):
        message = one_error_line(run("eval", "--dataset", demo_dataset, "--questions", empty, "--retriever",
                                     retriever, "--no-save", "--no-progress"))
        assert message == f"Error: no questions in {empty}: nothing to evaluate\n"


def test_a_negative_grade_is_refused_with_its_line_and_field(tmp_path, dataset_copy):
    lines = (dataset_copy / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["relevant"][0]["grade"] = -1
    lines[2] = json.dumps(record, ensure_ascii=False)
    (dataset_copy / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    message = one_error_line(run("eval", "--dataset", dataset_copy, "--retriever", "bm25", "--no-save"))
    assert message.startswith(f"Error: {dataset_copy / 'questions.jsonl'}:3: field 'relevant.0.grade': ")
    assert "greater than or equal to 0" in message


def test_a_duplicate_document_id_is_named_with_both_lines(dataset_copy):
    corpus = dataset_copy / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    lines.insert(4, lines[1])
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc_id = json.loads(lines[1])["id"]
    message = one_error_line(run("eval", "--dataset", dataset_copy, "--retriever", "bm25", "--no-save"))
    assert message == f"Error: {corpus}:5: document id {doc_id!r} is used twice (first on line 2)\n"


@pytest.mark.parametrize("name", ["红烧\t肉.md", "红烧 肉.md"])
def test_ids_a_trec_file_cannot_hold_are_warned_about_then_refused_saying_how_to_fix(tmp_path, name):
    """A tab, or a space (0.2.0 built ids with spaces silently, and the TREC export refused them
    later). trec_eval splits fields on whitespace, so such an id is not rewritten on export (it would no longer match
    the qrels or the corpus): the build warns, and the export names the id and the two ways out."""
    corpus = tmp_path / "dishes"
    corpus.mkdir()
    (corpus / name).write_text("# 红烧肉的做法\n\n五花肉切块，焯水后小火慢炖一小时。\n", encoding="utf-8")
    (corpus / "清蒸鱼.md").write_text("# 清蒸鱼的做法\n\n鱼身划刀，放姜丝，大火蒸八分钟。\n", encoding="utf-8")
    built = run("dataset", "build", corpus, "--out", tmp_path / "dataset", "--no-progress")
    assert built.exit_code == 0, built.output
    assert "warning: 1 document ids hold spaces or control characters" in built.stderr
    assert "trec_eval splits fields on them" in built.stderr and repr(name) in built.stderr
    store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert run("eval", "--dataset", tmp_path / "dataset", "--retriever", "bm25", "--k", "2", "--runs-db", store,
               "--name", "awkward", "--no-progress").exit_code == 0
    out = tmp_path / "run.trec"
    message = one_error_line(run("runs", "export", "awkward", "--format", "trec", "--runs-db", store, "--out", out))
    assert f"{name!r} cannot be written to a TREC file" in message
    assert message.endswith("rename the file it comes from and build the dataset again, or export the run with "
                            "--format json, which holds any id\n")
    assert not out.exists()
    assert run("runs", "export", "awkward", "--format", "json", "--runs-db", store, "--out", tmp_path / "r.json") \
        .exit_code == 0
    exported = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert name in {d for q in exported["report"]["questions"] for d in q["retrieved_documents"]}


def test_a_relevance_level_above_every_grade_is_warned_about(demo_dataset):
    report = evaluate(load_dataset(demo_dataset), EvalConfig(retriever="bm25", model=None, ks=[5], rel_level=2),
                      progress=False)
    assert report.means["doc"]["recall@5"] == 0 and report.means["doc"]["ndcg@5"] > 0
    assert any(note.startswith("rel_level 2 is above every grade in the labels (highest 1)")
               for note in report.notes), report.notes


def test_an_unknown_model_fails_at_once_naming_it(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    message = one_error_line(run("eval", "--dataset", demo_dataset, "--model", "no-such-org/no-such-model",
                                 "--no-save", "--no-progress"), code=2)
    assert "'no-such-org/no-such-model'" in message and "local Hugging Face cache" in message


def test_a_bad_store_option_fails_before_the_model_loads(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGRETRIEVAL_CACHE_DIR", str(tmp_path / "cache"))
    message = one_error_line(run("eval", "--dataset", demo_dataset, "--store", "faiss", "--store-option",
                                 "no_such_option=1", "--no-save", "--no-progress"), code=2)
    assert "--store-option no_such_option: unknown option (known: kind, m, ef_construction" in message
    cache = tmp_path / "cache" / "embeddings.sqlite"
    if cache.exists():  # nothing was embedded
        with sqlite3.connect(cache) as conn:
            assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone() == (0,)


def test_run_names_with_a_slash_are_names_not_paths(tmp_path, demo_dataset):
    store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    for name, size in (("team/a", "300"), ("team/b", "500")):
        assert run("eval", "--dataset", demo_dataset, "--retriever", "bm25", "--chunk-size", size, "--runs-db", store,
                   "--name", name, "--no-progress").exit_code == 0
    compared = run("runs", "compare", "team/a", "team/b", "--runs-db", store)
    assert compared.exit_code == 0, compared.output
    assert "team/a" in compared.output and "team/b" in compared.output
