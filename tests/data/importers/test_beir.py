"""BEIR folders in and out: the demo dataset round-trips with the same records and the same BM25 metrics; grades are
kept and grade 0 is judged non-relevant; bad folders are refused with the file and line, and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragretrieval.cli import main
from ragretrieval.data.dataset import load_dataset

REPO = Path(__file__).resolve().parents[3]
ANSWER_QUESTIONS = REPO / "datasets" / "demo" / "answer_questions.jsonl"


def run(*args) -> "CliRunner":
    return CliRunner().invoke(main, [str(a) for a in args])


def ok(*args):
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result


def bm25_means(dataset: Path, tmp: Path, *extra) -> dict:
    report = tmp / f"report-{len(list(tmp.glob('report-*')))}.json"
    ok("eval", "--dataset", dataset, "--retriever", "bm25", "--k", "1,3,5", "--no-progress", "--no-save",
       "--out", report, *extra)
    data = json.loads(report.read_text(encoding="utf-8"))
    return data["means"], {q["id"]: q["metrics"] for q in data["questions"]}


def write_beir(folder: Path, corpus, queries, qrels: str, split: str = "test") -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in corpus), "utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries),
                                          "utf-8")
    (folder / "qrels" / f"{split}.tsv").write_text(qrels, "utf-8")
    return folder


CORPUS = [
    {"_id": "d1", "title": "Steaming fish", "text": "Steam the sea bass over high heat for eight minutes.",
     "metadata": {}},
    {"_id": "d2", "title": "Boiling eggs", "text": "Boil soft eggs for six minutes, hard eggs for eleven.",
     "metadata": {"url": "https://example.org/eggs"}},
    {"_id": "d3", "title": "Fish soup", "text": "A fish soup: fry the fish, then boil it with water for twenty "
     "minutes until the soup is white.", "metadata": {}},
]
QUERIES = [{"_id": "q1", "text": "how long to steam sea bass"}, {"_id": "q2", "text": "how long to boil eggs"},
           {"_id": "q3", "text": "fish soup water"}]


@pytest.fixture
def small_beir(tmp_path) -> Path:
    return write_beir(tmp_path / "small", CORPUS, QUERIES,
                      "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\nq3\td3\t1\n")


# ---------------------------------------------------------------------------------------------------- round trip
def test_the_demo_dataset_round_trips_through_beir_with_the_same_records_and_metrics(demo_dataset, tmp_path):
    ok("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "beir")
    lines = (tmp_path / "beir" / "qrels" / "test.tsv").read_text("utf-8").splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines) == 1 + 31
    ok("dataset", "import", "--format", "beir", tmp_path / "beir", "--out", tmp_path / "back", "--no-progress")
    original, back = load_dataset(demo_dataset), load_dataset(tmp_path / "back")
    assert back.documents == original.documents
    assert back.questions == original.questions
    assert back.manifest.corpus_fingerprint == original.manifest.corpus_fingerprint
    assert bm25_means(tmp_path / "back", tmp_path) == bm25_means(demo_dataset, tmp_path)


def test_answer_side_questions_round_trip_with_their_checks_and_references(demo_dataset, tmp_path):
    ok("dataset", "export", demo_dataset, "--questions", ANSWER_QUESTIONS, "--format", "beir", "--out",
       tmp_path / "beir", "--split", "dev")
    ok("dataset", "import", "--format", "beir", tmp_path / "beir", "--split", "dev", "--out", tmp_path / "back")
    original = load_dataset(demo_dataset, ANSWER_QUESTIONS).questions
    back = load_dataset(tmp_path / "back").questions
    assert back == original
    unlabelled = next(q for q in back if q.id == "a-none")  # no qrels line: kept because it has a reference answer
    assert unlabelled.relevant == [] and unlabelled.expect == {"refuse": True}


def test_a_foreign_beir_folder_keeps_ids_titles_grades_and_order(small_beir, tmp_path):
    result = ok("dataset", "import", "--format", "beir", small_beir, "--out", tmp_path / "ds", "--no-progress")
    assert "the metadata of 1 documents is not kept" in result.output
    dataset = load_dataset(tmp_path / "ds")
    assert [(d.id, d.title, d.text) for d in dataset.documents] == [(d["_id"], d["title"], d["text"]) for d in CORPUS]
    assert [(q.id, q.text) for q in dataset.questions] == [(q["_id"], q["text"]) for q in QUERIES]
    assert [[(r.doc_id, r.grade) for r in q.relevant] for q in dataset.questions] == [
        [("d1", 2), ("d3", 0)], [("d2", 1)], [("d3", 1)]]
    assert dataset.questions[0].provenance.generator == "beir"
    assert dataset.questions[0].provenance.model_extra == {"source": "small", "split": "test"}
    assert dataset.manifest.builder["documents_with_metadata"] == 1


def test_grade_zero_is_judged_not_relevant_and_grades_are_gains(small_beir, tmp_path):
    """q3 asks for 'fish soup water': BM25 ranks d3 first. Judged 0 for q1, d3 must count as non-relevant there,
    exactly as if it were unjudged, and grade 2 is nDCG's gain."""
    ok("dataset", "import", "--format", "beir", small_beir, "--out", tmp_path / "graded")
    _, graded = bm25_means(tmp_path / "graded", tmp_path, "--granularity", "doc")
    unjudged = write_beir(tmp_path / "unjudged", CORPUS, QUERIES, "q1\td1\t2\nq2\td2\t1\nq3\td3\t1\n")  # no header
    ok("dataset", "import", "--format", "beir", unjudged, "--out", tmp_path / "unjudged-ds")
    _, without = bm25_means(tmp_path / "unjudged-ds", tmp_path, "--granularity", "doc")
    assert graded["q1"]["doc"] == without["q1"]["doc"]
    assert graded["q1"]["doc"]["recall@5"] == 1.0 and graded["q1"]["doc"]["precision@3"] == pytest.approx(1 / 3)
    relevant = write_beir(tmp_path / "relevant", CORPUS, QUERIES, "q1\td1\t2\nq1\td3\t1\nq2\td2\t1\nq3\td3\t1\n")
    ok("dataset", "import", "--format", "beir", relevant, "--out", tmp_path / "relevant-ds")
    _, both = bm25_means(tmp_path / "relevant-ds", tmp_path, "--granularity", "doc")
    assert both["q1"]["doc"]["precision@3"] == pytest.approx(2 / 3)  # the same ranking, d3 now counts
    assert 0 < graded["q1"]["doc"]["ndcg@3"] == without["q1"]["doc"]["ndcg@3"]


def test_the_largest_grade_imports_and_scores(tmp_path):
    """2147483647, a 32-bit integer's largest, is a grade (docs/dataset-format.md); one more is refused at import."""
    top = write_beir(tmp_path / "top", CORPUS, QUERIES, "q1\td1\t2147483647\nq2\td2\t1\nq3\td3\t1\n")
    ok("dataset", "import", "--format", "beir", top, "--out", tmp_path / "top-ds")
    _, scored = bm25_means(tmp_path / "top-ds", tmp_path, "--granularity", "doc")
    assert scored["q1"]["doc"]["recall@5"] == 1.0


def test_long_documents_are_chunked_and_score_at_chunk_level(tmp_path):
    long_text = "\n\n".join(f"Paragraph {i}: " + "plain filler words about cooking. " * 12 for i in range(12))
    corpus = [{"_id": "long", "title": "", "text": long_text + "\n\nThe secret is saffron."},
              {"_id": "short", "title": "Short", "text": "Nothing about spices."}]
    folder = write_beir(tmp_path / "long", corpus, [{"_id": "q", "text": "secret saffron"}], "q\tlong\t1\n")
    ok("dataset", "import", "--format", "beir", folder, "--out", tmp_path / "ds")
    means, _ = bm25_means(tmp_path / "ds", tmp_path)
    assert means["chunk"]["hit_rate@1"] == 1.0 and means["doc"]["recall@1"] == 1.0
    report = json.loads(sorted(tmp_path.glob("report-*.json"))[-1].read_text("utf-8"))
    assert report["dataset"]["n_chunks"] > 10


def test_ids_written_as_numbers_a_null_title_and_a_byte_order_mark_are_read(tmp_path):
    folder = write_beir(tmp_path / "b", [{"_id": 7, "title": None, "text": "seven"}], [{"_id": 1, "text": "seven?"}],
                        "query-id\tcorpus-id\tscore\n1\t7\t1\n")
    (folder / "corpus.jsonl").write_bytes(b"\xef\xbb\xbf" + (folder / "corpus.jsonl").read_bytes())
    ok("dataset", "import", "--format", "beir", folder, "--out", tmp_path / "ds")
    dataset = load_dataset(tmp_path / "ds")
    assert (dataset.documents[0].id, dataset.documents[0].title) == ("7", "")
    assert dataset.questions[0].relevant[0].doc_id == "7"


def test_queries_the_split_does_not_judge_are_left_out_with_a_count(small_beir, tmp_path):
    (small_beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td2\t1\n", "utf-8")
    result = ok("dataset", "import", "--format", "beir", small_beir, "--out", tmp_path / "ds")
    assert "2 queries are not judged in split 'test' and were left out" in result.output
    assert [q.id for q in load_dataset(tmp_path / "ds").questions] == ["q2"]


# -------------------------------------------------------------------------------------------------------- errors
def corrupt(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, "utf-8")


@pytest.mark.parametrize("name, text, message", [
    ("corpus.jsonl", '{"_id": "d1", "text": "a"}\n\n{"_id": "d1", "text": "b"}\n',
     "corpus.jsonl:3: document id 'd1' is used twice (first on line 1)"),
    ("corpus.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": \n', "corpus.jsonl:2: invalid JSON"),
    ("corpus.jsonl", '{"_id": "d1"}\n', "corpus.jsonl:1: field 'text': Field required"),
    ("corpus.jsonl", '{"_id": "", "text": "x"}\n', "corpus.jsonl:1: field '_id'"),
    ("corpus.jsonl", '{"_id": ["d1"], "text": "x"}\n', "corpus.jsonl:1: field '_id'"),
    ("corpus.jsonl", "", "corpus.jsonl: no documents"),
    ("queries.jsonl", '{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n',
     "queries.jsonl:2: query id 'q1' is used twice (first on line 1)"),
    ("queries.jsonl", '{"_id": "q1", "text": ""}\n', "queries.jsonl:1: field 'text'"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\tnowhere\t1\n",
     "test.tsv:2: document 'nowhere' is not in corpus.jsonl"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq9\td1\t1\n", "test.tsv:2: query 'q9' is not in queries.jsonl"),
    ("qrels/test.tsv", "q1\td1\t1\nq1\td1\t2\n", "test.tsv:2: query 'q1' judges document 'd1' twice (first on line 1)"),
    ("qrels/test.tsv", "q1\td1\t-1\n", "test.tsv:1: score -1 is negative"),
    ("qrels/test.tsv", "q1\td1\t1\nq1\td2\trelevant\n", "test.tsv:2: score 'relevant' is not a whole number"),
    # a grade past int64 used to import and then end `eval` in an OverflowError
    ("qrels/test.tsv", "q1\td1\t1\nq1\td2\t99999999999999999999999\n",
     "test.tsv:2: score 99999999999999999999999 is above the largest grade, 2147483647 (a 32-bit integer)"),
    ("qrels/test.tsv", "q1\td1\t2147483648\n", "test.tsv:1: score 2147483648 is above the largest grade"),
    ("qrels/test.tsv", "q1\td1\t1\tx\n", "test.tsv:1: expected 3 columns (query-id, corpus-id, score), found 4"),
    ("qrels/test.tsv", "query-id\tcorpus-id\tscore\n", "judges none of the 3 queries"),
])
def test_bad_folders_name_the_file_and_line_and_write_nothing(small_beir, tmp_path, name, text, message):
    corrupt(small_beir, name, text)
    result = run("dataset", "import", "--format", "beir", small_beir, "--out", tmp_path / "ds")
    assert result.exit_code == 1
    assert message in result.output, result.output
    assert not (tmp_path / "ds").exists() or not any((tmp_path / "ds").iterdir())


def test_a_failed_import_with_force_leaves_the_old_dataset_whole(small_beir, demo_dataset, tmp_path):
    target = tmp_path / "ds"
    shutil.copytree(demo_dataset, target)
    corrupt(small_beir, "qrels/test.tsv", "q1\tnowhere\t1\n")
    result = run("dataset", "import", "--format", "beir", small_beir, "--out", target, "--force")
    assert result.exit_code == 1
    assert load_dataset(target).documents == load_dataset(demo_dataset).documents
    assert sorted(p.name for p in target.iterdir()) == ["corpus.jsonl", "manifest.json", "questions.jsonl"]


def test_a_missing_split_names_the_splits_there_are(small_beir, tmp_path):
    result = run("dataset", "import", "--format", "beir", small_beir, "--split", "dev", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and "split 'dev' not found" in result.output and "test)" in result.output
    for split in ("../test", "", ".hidden", "a/b"):
        result = run("dataset", "import", "--format", "beir", small_beir, "--split", split, "--out", tmp_path / "ds")
        assert result.exit_code == 2 and "is not a plain name" in result.output, split
    (small_beir / "queries.jsonl").unlink()
    result = run("dataset", "import", "--format", "beir", small_beir, "--out", tmp_path / "ds")
    assert result.exit_code == 2 and "not a BEIR folder (queries.jsonl not found)" in result.output


def test_options_of_other_formats_are_refused(small_beir, tmp_path):
    result = run("dataset", "import", "--format", "beir", small_beir, "--strict", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and "--format beir takes the BEIR folder" in result.output
    result = run("dataset", "import", "--format", "legal-rag", small_beir, "--split", "dev", "--out", tmp_path / "ds")
    assert result.exit_code == 2 and "--split is for --format beir" in result.output


def test_edited_qrels_that_disagree_with_exported_fields_are_refused(demo_dataset, tmp_path):
    ok("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "beir")
    qrels = tmp_path / "beir" / "qrels" / "test.tsv"
    lines = qrels.read_text("utf-8").splitlines()
    lines[1] = lines[1][:-1] + "2"
    qrels.write_text("\n".join(lines) + "\n", "utf-8")
    result = run("dataset", "import", "--format", "beir", tmp_path / "beir", "--out", tmp_path / "ds")
    assert result.exit_code == 1
    assert "queries.jsonl:1: field 'metadata.ragretrieval.relevant': its documents and grades differ" in result.output


def test_export_refuses_to_overwrite_and_to_write_ids_a_qrels_line_cannot_carry(demo_dataset, tmp_path):
    ok("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "beir")
    result = run("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "beir")
    assert result.exit_code == 2 and "already exists; pass --force to replace it" in result.output
    assert all(f"{tmp_path / 'beir' / name}" in result.output for name in ("corpus.jsonl", "queries.jsonl", "qrels"))
    ok("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "beir", "--force")
    result = run("dataset", "export", demo_dataset, "--format", "beir", "--out", tmp_path / "x", "--split", "../../etc")
    assert result.exit_code == 2 and "is not a plain name" in result.output and not (tmp_path / "x").exists()
    questions = tmp_path / "tabs.jsonl"
    questions.write_text(json.dumps({"id": "q\t1", "text": "t", "relevant": [{"doc_id": "aquatic/清蒸鲈鱼.md"}],
                                     "provenance": {"generator": "hand"}}) + "\n", "utf-8")
    result = run("dataset", "export", demo_dataset, "--questions", questions, "--format", "beir", "--out", tmp_path / "t")
    assert result.exit_code == 1 and "holds a tab or line break" in result.output


def test_metrics_of_an_imported_beir_set_equal_trec_evals_on_the_same_qrels(small_beir, tmp_path):
    """BEIR scores with pytrec_eval; a query judged only 0 has no relevant document and scores 0 there too."""
    import pytrec_eval

    queries = QUERIES + [{"_id": "q4", "text": "boil eggs water"}]
    qrels_text = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\nq3\td3\t1\nq4\td2\t0\n"
    folder = write_beir(tmp_path / "graded", CORPUS, queries, qrels_text)
    ok("dataset", "import", "--format", "beir", folder, "--out", tmp_path / "ds")
    _, ours = bm25_means(tmp_path / "ds", tmp_path, "--granularity", "doc")
    report = json.loads(sorted(tmp_path.glob("report-*.json"))[-1].read_text("utf-8"))
    run = {q["id"]: {d: 100.0 - rank for rank, d in enumerate(q["retrieved_documents"])} for q in report["questions"]}
    qrels = {}
    for line in qrels_text.splitlines()[1:]:
        query, doc, grade = line.split("\t")
        qrels.setdefault(query, {})[doc] = int(grade)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recall.3", "P.3", "ndcg_cut.3", "recip_rank"}).evaluate(run)
    assert set(ours) == set(theirs) == {"q1", "q2", "q3", "q4"}
    for query, metrics in theirs.items():
        assert ours[query]["doc"]["recall@3"] == pytest.approx(metrics["recall_3"])
        assert ours[query]["doc"]["precision@3"] == pytest.approx(metrics["P_3"])
        assert ours[query]["doc"]["ndcg@3"] == pytest.approx(metrics["ndcg_cut_3"])
        assert ours[query]["doc"]["mrr@3"] == pytest.approx(metrics["recip_rank"])
    assert ours["q4"]["doc"]["recall@3"] == 0.0 and "d2" in run["q4"]  # retrieved, judged 0: not relevant


def test_a_doc_id_with_a_tab_imports_with_the_warning_dataset_build_gives(tmp_path):
    """The same id ("fish\\tsoup") from a BEIR corpus and from a file name: one warning text, only the fix differs."""
    corpus = [*CORPUS, {"_id": "fish\tsoup", "title": "Fish soup", "text": "Boil the fish.", "metadata": {}}]
    folder = write_beir(tmp_path / "tabbed", corpus, QUERIES, "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    imported = run("dataset", "import", "--format", "beir", folder, "--out", tmp_path / "ds", "--no-progress")
    assert imported.exit_code == 0, imported.output
    beir = [line for line in imported.stderr.splitlines() if line.startswith("warning: ")]
    (tmp_path / "md").mkdir()
    (tmp_path / "md" / "fish\tsoup.md").write_text("# Fish soup\n\nBoil the fish.\n", encoding="utf-8")
    built = run("dataset", "build", tmp_path / "md", "--out", tmp_path / "built")
    assert built.exit_code == 0, built.output
    build = [line for line in built.stderr.splitlines() if line.startswith("warning: ")]
    assert len(beir) == 1 and len(build) == 1
    assert beir[0].startswith("warning: 1 document ids hold spaces or control characters (tab, newline, ...), "
                              "which TREC files cannot hold")
    assert beir[0].endswith("change them in corpus.jsonl: 'fish\\tsoup'")
    assert build[0].split("; ")[0] == beir[0].split("; ")[0]
