"""A dataset whose questions hold a value no check can score (one imported by 0.2.0, whose importer did not look)
is refused when a question set is made from it, naming the question and the field: 0.2.0 made
the set, and the evaluation then FAILED with a raw ValueError."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from ragretrieval.cli import main

from .conftest import Api

FIXTURE = Path(__file__).resolve().parents[1] / "answers" / "legal_fixture"


def test_a_set_from_a_dataset_with_an_unscorable_value_is_refused_naming_it(client_on, sqlite_url, tmp_path):
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    imported = CliRunner().invoke(main, ["dataset", "import", "--format", "legal-rag", str(FIXTURE / "benchmark"),
                                         "--source", str(FIXTURE / "transcript.md"), "--out", str(datasets / "legal")])
    assert imported.exit_code == 0, imported.output
    shutil.copytree(datasets / "legal", datasets / "legal-0.2")
    questions = datasets / "legal-0.2" / "questions.jsonl"
    records = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines()]
    fact = next(r for r in records if r["id"] == "fact_001")
    fact["expect"]["fact_exact"]["expected"]["amount_total"] = "many"
    questions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    api = Api(client_on(sqlite_url, datasets=datasets))
    refused = api.post("/api/v1/question-sets/from-dataset", {"dataset": "legal-0.2"}, expect=400)
    detail = refused["detail"]  # the server's own folders are not shown to clients
    assert detail.endswith("/questions.jsonl: question 'fact_001': fact_exact: expected.amount_total: must be a "
                           'number, got "many"') and str(tmp_path) not in detail
    assert api.get("/api/v1/question-sets")["total"] == 0
    made = api.post("/api/v1/question-sets/from-dataset", {"dataset": "legal"}, expect=201)
    assert len(made["questions"]) == 8
