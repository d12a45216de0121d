"""The Python face: the README's block and docs/python.md's examples run as written; `import ragretrieval`
loads nothing else; reports print the CLI's tables; runs are stored only when asked; `rr.score` gives the numbers
of `ragretrieval score` from dicts, TREC files and DataFrames."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import ragretrieval as rr
from ragretrieval.cli import main
from ragretrieval.evaluation.render import summary_table

ROOT = Path(__file__).resolve().parents[2]


def blocks(path: Path, mark: str) -> list[str]:
    return re.findall(re.escape(mark) + r"\n```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder holding datasets/demo/dishes, as the repository does, as the working directory."""
    shutil.copytree(ROOT / "datasets" / "demo" / "dishes", tmp_path / "datasets" / "demo" / "dishes")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGRETRIEVAL_RUNS_URL", raising=False)
    return tmp_path


def seed_004_frame(dataset) -> pd.DataFrame:
    """Two questions of the dataset in the agent-evaluation shape, with the contexts a retriever found."""
    first, second = dataset.questions[:2]
    return pd.DataFrame({
        "request": [first.text, {"messages": [{"role": "user", "content": second.text}]}],
        "expected_retrieved_context": [[{"doc_uri": r.doc_id, "content": ""} for r in q.relevant]
                                       for q in (first, second)],
        "expected_response": ["reference one", "reference two"],
        "retrieved_context": [[{"doc_uri": first.relevant[0].doc_id}], [{"doc_uri": first.relevant[0].doc_id}]],
    })


def test_the_readme_python_block_runs_as_written(workdir):
    (code,) = blocks(ROOT / "README.md", "<!-- this block runs as written in tests/face/test_face.py -->")
    built = rr.build_dataset("datasets/demo/dishes", out="other-dataset")
    report_a = rr.evaluate(built, retriever="bm25", ks=[1, 5])
    report_b = rr.evaluate(built, retriever="bm25", ks=[1, 5], retriever_options={"k1": 0.5})
    namespace = {"df": seed_004_frame(built), "report_a": report_a, "report_b": report_b}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["report"].means["doc"]["recall@5"] == 1.0
    assert namespace["answers"].kind == "answer" and len(namespace["answers"].questions) == 2
    assert (workdir / "demo-dataset" / "manifest.json").is_file()
    assert not (workdir / ".ragretrieval").exists()  # nothing stored unless asked


def test_docs_python_md_runs_as_written(workdir):
    found = blocks(ROOT / "docs" / "python.md", "<!-- runs in tests/face/test_face.py -->")
    assert len(found) == 6
    namespace: dict = {}
    for code in found:
        exec(compile(code, "docs/python.md", "exec"), namespace)
    assert namespace["scored"].config.generator.startswith("file:")
    assert namespace["retrieval"].config.retriever == "run-file"
    assert namespace["resumed"].ran == [] and len(namespace["swept"].comparison.runs) == 2
    assert not (workdir / ".ragretrieval").exists() and (workdir / "notebook.sqlite").is_file()


def test_import_ragretrieval_loads_nothing_else_and_all_lists_the_face():
    code = ("import sys, ragretrieval as rr\n"
            "print(sorted(m for m in sys.modules if m.startswith('ragretrieval')))\n"
            "print('pydantic' in sys.modules, 'pandas' in sys.modules, 'numpy' in sys.modules)\n"
            "print(rr.__all__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules, heavy, names = done.stdout.splitlines()
    assert modules == "['ragretrieval']" and heavy == "False False False"
    assert eval(names) == ["build_dataset", "load_dataset", "evaluate", "answer", "judge_answers", "sweep", "score",
                           "compare", "load_run", "EvalConfig", "EvalReport", "AnswerSettings", "CompareSettings",
                           "AnswerReport", "Comparison", "ScoreResult", "Dataset", "SettingsError", "RagretrievalError"]
    assert all(getattr(rr, name) is not None for name in rr.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        rr.nothing  # noqa: B018


def test_reports_print_the_cli_tables_and_give_one_row_per_question_and_metric(demo_dataset):
    report = rr.evaluate(demo_dataset, retriever="bm25", ks=[1, 5])
    assert str(report) == summary_table(report)
    frame = report.to_pandas()
    assert list(frame.columns) == ["question_id", "question", "level", "metric", "value"]
    per_question = sum(len(values) for q in report.questions for values in q.metrics.values())
    assert len(frame) == per_question and set(frame.level) == {"doc", "chunk"}
    mean = frame[(frame.level == "doc") & (frame.metric == "mrr@5")].value.mean()
    assert mean == pytest.approx(report.means["doc"]["mrr@5"])


def test_settings_are_validated_before_anything_runs(demo_dataset):
    cases = [(dict(chunk_size=0), "chunk_size: Input should be greater than or equal to 1"),
             (dict(chunk_size=-3), "chunk_size: Input should be greater than or equal to 1"),
             (dict(chunk_size="big"), "chunk_size: Input should be a valid integer"),
             (dict(ks=[]), "ks: List should have at least 1 item"),
             (dict(ks=[0, 5]), "ks: every k must be a positive integer"),
             (dict(retriever="bm25", retriever_options={"k1": "/etc/passwd"}), "retriever_options.k1"),
             (dict(retriever="bm25", retriever_options={"k1": None}), "retriever_options.k1"),
             (dict(retriever="bm25", retriever_options={"b": 1e300}), "retriever_options.b: Input should be less "
                                                                      "than or equal to 1"),
             (dict(retriever=""), "retriever: String should have at least 1 character"),
             (dict(retriever="nope"), "retriever: unknown retriever 'nope'"),
             (dict(nonsense=1), "nonsense: Extra inputs are not permitted"),
             (dict(retriever="bm25", config=42), "config must be a EvalConfig, a dict or a settings file")]
    for settings, message in cases:
        with pytest.raises(rr.SettingsError) as caught:
            rr.evaluate(demo_dataset, **settings)
        assert message in str(caught.value), (settings, str(caught.value))


def test_a_context_given_with_its_own_parts_beside_it_is_refused(demo_dataset):
    from ragretrieval.evaluation.pipeline import EvaluationError, evaluate
    from ragretrieval.retrieval.registry import BuildContext

    dataset = rr.load_dataset(demo_dataset)
    with pytest.raises(EvaluationError, match="are the context's when one is given"):
        evaluate(dataset, rr.EvalConfig(retriever="bm25"), context=BuildContext(), rebuild=True)


def test_runs_are_stored_only_when_asked(demo_dataset, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGRETRIEVAL_RUNS_URL", raising=False)
    rr.evaluate(demo_dataset, retriever="bm25")
    assert not (tmp_path / ".ragretrieval").exists()
    report = rr.evaluate(demo_dataset, retriever="bm25", save=True, name="kept", tags=["a"])
    stored = rr.load_run("kept")
    assert stored.means == report.means and stored.config == report.config
    report.save(tmp_path / "report.json")
    assert rr.load_run(tmp_path / "report.json").means == report.means


def write_trec(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 1\nq3 0 d4 1\n", encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.8 t\nq1 Q0 d3 3 0.1 t\nq2 Q0 d3 1 0.5 t\nq2 Q0 d2 2 0.5 t\n",
                   encoding="utf-8")
    return qrels, run


def test_score_on_dicts_trec_files_and_dataframes_gives_the_numbers_of_ragretrieval_score(tmp_path):
    qrels, run = write_trec(tmp_path)
    metrics = ["ndcg@10", "recall@2", "mrr", "map", "precision@1"]
    flags = [part for metric in metrics for part in ("-m", metric)]
    cli = CliRunner().invoke(main, ["score", str(qrels), str(run), *flags, "--json"])
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.stdout)
    judged = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}, "q3": {"d4": 1}}
    ranked = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d3": 0.5, "d2": 0.5}}
    qrels_frame = pd.DataFrame([(q, d, g) for q, docs in judged.items() for d, g in docs.items()],
                               columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame([(q, d, s) for q, docs in ranked.items() for d, s in docs.items()],
                             columns=["qid", "docid", "score"])
    for given in ((judged, ranked), (qrels, run), (str(qrels), str(run)), (qrels_frame, run_frame),
                  (qrels_frame, run)):
        assert rr.score(*given, metrics).means == expected, given
    assert str(rr.score(qrels, run, metrics)).startswith("metric ")
    with pytest.raises(rr.RagretrievalError, match="run: no document column"):
        rr.score(judged, pd.DataFrame({"query_id": ["q1"], "score": [1.0]}), metrics)
    with pytest.raises(rr.RagretrievalError, match="qrels must be a dict, a TREC qrels file or a DataFrame"):
        rr.score(42, ranked, metrics)
